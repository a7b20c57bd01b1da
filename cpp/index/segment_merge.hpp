// Segment merge: several indexes (segments, in collection order) into one, without re-analysis.
//
// The terms of all segments are merged in bytewise order (a k-way merge of the sorted
// lexicons); each term's postings are decoded segment after segment, their docids mapped to
// the merged numbering, postings of deleted documents dropped, and the rest fed to a
// BlockWriter, which writes the compressed postings, skips and BM25 bounds exactly as a build
// of the same documents would. A term left with no live posting is dropped. The documents'
// files (lengths, ids) are the caller's to write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index/block_writer.hpp"
#include "index/reader.hpp"

namespace mirkit::index {

struct MergeInput {
  const IndexReader* reader;
  // Per document of the segment: its docid in the merged index, or kEndDocid when deleted.
  // Live documents map to distinct docids, in any order (a docid reordering); a merge keeps
  // them increasing, which spares each term a sort.
  const uint32_t* new_docid;
};

struct MergeStats {
  std::vector<FileInfo> files;
  uint64_t n_terms = 0, n_postings = 0, n_blocks = 0;
  uint64_t position_bytes = 0;  // of freqs.bin's bytes, those of the inline positions
};

// Writes the posting files of the merged index into `directory`. doc_lengths[0..n_docs) are
// the merged documents' lengths (total_tokens their sum). With `vectors`, also the document
// vectors, transposed from the merged postings (write_doc_vectors; the caller has written the
// documents' files first). Throws std::invalid_argument when the segments do not fit
// (positions asked of a segment without them, two documents mapped to one docid).
MergeStats merge_segments(const std::string& directory, const std::vector<MergeInput>& inputs,
                          const std::string& docid_codec, const std::string& freq_codec,
                          bool positions, const Bm25Params& bm25, const uint32_t* doc_lengths,
                          size_t n_docs, uint64_t total_tokens, bool vectors = false,
                          size_t memory_budget = size_t{1} << 30);

// Closes `out` (a file writer) and returns its counts and files.
MergeStats close_writer(BlockWriter& out);

// Statistics of a segment's live documents: per term, the documents not marked in deleted[d]
// (one byte per document, nonzero: deleted) that hold it, and their occurrences.
void live_term_stats(const IndexReader& reader, const uint8_t* deleted, uint32_t* df,
                     uint64_t* cf);

}  // namespace mirkit::index
