"""Compressed inverted index: building (:class:`IndexWriter`, in :mod:`mirkit.index.writer`) and
reading (:class:`Index`, in :mod:`mirkit.index.reader`); ``manifest.json`` is read and written by
one module, ``mirkit.index._manifest``.

An index is a directory of memory-mapped binary files plus ``manifest.json`` (format version,
analyzer settings, codecs, BM25 parameters, statistics, and the size and CRC-32C of every
file); ``cpp/index/format.hpp`` documents each file. Document ids and term frequencies are
separate block-compressed streams (128 postings a block) with a skip list of last docids and
precomputed block-max and term-max BM25 scores, which the query engine uses for dynamic pruning
without an extra pass. Optional parts: token positions (phrase queries) and document vectors
(each document's terms and frequencies, a "direct index": relevance feedback reads them).

Building is single-pass in-memory inversion under a memory budget: when the budget is reached,
sorted runs spill to disk and are merged at the end, so collections larger than memory index with
bounded RAM. Analysis runs in C++ on all cores with the GIL released. Writes are atomic: files
go to a hidden temporary directory next to the target that is renamed into place only after
everything, manifest last, is on disk, so a crash or exception never leaves an index that opens.

A living index (:mod:`mirkit.index.segments`): :meth:`IndexWriter.open` adds, deletes and
updates documents of an index as immutable segments with deletion bitmaps and atomic commit
points, merges them (:class:`MergePolicy`), and :class:`SegmentedIndex` snapshots search them
exactly (the live documents' statistics), like a fresh build of the live documents.

Memory: the budget bounds the postings buffers, the term dictionary and the token caches, and
at the commit the runs left in memory plus the term ranges encoded on the threads (at most
about budget / 2): the manifest's ``build.peak_memory`` is their peak (README, "Memory"). On
top of it come 28 bytes per document (length, id offset and the id hash set for duplicate
detection; 4 more with document vectors), one input batch, and about 40 MB of fixed buffers
(:data:`MEMORY_OVERHEAD`); the allocator's per-term overhead and the run files mapped during the
final merge come on top.
"""

from mirkit.index import reader, writer
from mirkit.index.reader import (
    FORMAT_VERSION,
    DocVectors,
    Index,
    IndexCorruptError,
    IndexStats,
    IndexVersionError,
    PostingCursor,
)
from mirkit.index.writer import (BLOCK_SIZE, DEFAULT_CODEC, MEMORY_OVERHEAD, TIMING_STEPS,
                                 IndexWriter, build_index)
from mirkit.index import live_writer, segments
from mirkit.index.dedup_files import duplicates
from mirkit.index.live_writer import SegmentWriter
from mirkit.index.segments import (IndexLockedError, MergePolicy, SegmentedIndex, SegmentInfo,
                                   UnknownDocumentError)

__all__ = [
    "DEFAULT_CODEC",
    "DocVectors",
    "FORMAT_VERSION",
    "Index",
    "IndexCorruptError",
    "IndexStats",
    "IndexVersionError",
    "IndexLockedError",
    "IndexWriter",
    "MEMORY_OVERHEAD",
    "MergePolicy",
    "PostingCursor",
    "SegmentInfo",
    "SegmentWriter",
    "SegmentedIndex",
    "TIMING_STEPS",
    "UnknownDocumentError",
    "build_index",
    "duplicates",
]

# doctest.testmod(mirkit.index) runs the examples of what it exports.
__test__ = {"reader": reader, "writer": writer, "Index": Index, "IndexWriter": IndexWriter,
            "build_index": build_index, "segments": segments, "live_writer": live_writer}
