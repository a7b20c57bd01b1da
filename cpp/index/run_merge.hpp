// Sorted runs of postings and their k-way merge by term (the merge step of SPIMI).
//
// A run holds, term by term in bytewise order, each term's postings as varints: (docid gap, tf,
// then with positions the tf position gaps) per posting, the first gap taken from 0 so that it
// is the absolute docid. The runs of one builder cover increasing docid ranges, so the postings
// of one term in several runs concatenate in run order; runs of parts are mapped (DocidMap). IndexBuilder spills runs to files and keeps the last
// one in memory; a segment merge can feed its segments' postings through the same interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/files.hpp"
#include "index/block_writer.hpp"

namespace mirkit::index {

// One term of a run: its df postings, encoded as above in data[0..size).
struct RunEntry {
  std::string_view term;
  uint32_t df;
  const uint8_t* data;
  size_t size;
};

// A sorted run, read by entry number (the merge on several threads starts each term range at
// its first entry, found by binary search).
class RunSource {
 public:
  virtual ~RunSource() = default;
  virtual size_t size() const = 0;
  // Entry i < size(), in term order; valid as long as the source.
  virtual RunEntry entry(size_t i) const = 0;
};

// Appends one entry to a run file: varint term length, the term, varint df, varint size, data.
void write_run_entry(core::FileWriter& out, const RunEntry& entry);

// A run file written by write_run_entry, memory-mapped; the constructor reads every entry's
// header (8 bytes of memory an entry), so a truncated file is refused at once.
class FileRunSource : public RunSource {
 public:
  explicit FileRunSource(const std::string& path);
  size_t size() const override { return m_offsets.size(); }
  RunEntry entry(size_t i) const override;

 private:
  core::MappedFile m_file;
  std::vector<uint64_t> m_offsets;  // of each entry's header
};

// Where the docids of a run go in the merged collection: docids from segments[i].local_first
// (up to the next segment's) become segments[i].global_first on; both ascend. A part numbered
// from 0 and merged whole has one segment {0, base}; a part that took some of a stream's
// batches (ParallelBuilder) has one segment per batch, its docid runs between other parts'.
struct DocidMap {
  struct Segment {
    uint32_t local_first, global_first;
  };
  std::vector<Segment> segments;
};

// Merges the runs term by term into `out`: each term once, with the summed df and the postings
// of every run that has it in docid order. The docids of sources[s] are mapped by *maps[s]
// when `maps` is given (runs of index parts numbered from 0 each), and must then be disjoint
// across sources; a term's postings are taken from each run in turn while its next docid is
// the lowest, so runs that follow each other in docid order simply concatenate.
//
// With threads > 1 the term space is cut into ranges of about equal weight (postings bytes,
// plus 64 and the term's length a term: what a term costs a range writer besides its blocks;
// from a sample of every run's entries), at least two per thread and more when the runs weigh
// more than memory_budget / (4 threads) a range; each range is merged and encoded into memory
// by one thread (a BlockWriter without files) and appended to `out` in term order as soon as
// the ranges before it are; a range starts only within `threads` of the next to append, so at
// most `threads` ranges are held at a time. The files are the same as with one thread. Returns
// the number of term ranges (1: merged on this thread); `range_memory` (may be null) gets the
// most bytes the range writers held at once (each counted at its final size from its start
// to its append, an upper bound).
size_t merge_runs(const std::vector<std::unique_ptr<RunSource>>& sources, bool positions,
                  BlockWriter& out, const std::vector<const DocidMap*>& maps = {},
                  unsigned threads = 1, size_t memory_budget = SIZE_MAX,
                  size_t* range_memory = nullptr);

// The term ranges merge_runs uses: the first term of each range but the first, strictly
// increasing, at most n_ranges - 1 of them (fewer when the runs have fewer distinct terms).
std::vector<std::string> split_terms(const std::vector<std::unique_ptr<RunSource>>& sources,
                                     size_t n_ranges);

}  // namespace mirkit::index
