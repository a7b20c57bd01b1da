// Sorted runs of postings and their k-way merge by term (the merge step of SPIMI).
//
// A run holds, term by term in bytewise order, each term's postings as varints: (docid gap, tf,
// then with positions the tf position gaps) per posting, the first gap taken from 0 so that it
// is the absolute docid. Runs cover increasing docid ranges, so the postings of one term in
// several runs concatenate in run order. IndexBuilder spills runs to files and keeps the last
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

class RunSource {
 public:
  virtual ~RunSource() = default;
  // The next entry (valid until the following call); false at the end of the run.
  virtual bool next(RunEntry& entry) = 0;
};

// Appends one entry to a run file: varint term length, the term, varint df, varint size, data.
void write_run_entry(core::FileWriter& out, const RunEntry& entry);

// A run file written by write_run_entry, memory-mapped.
class FileRunSource : public RunSource {
 public:
  explicit FileRunSource(const std::string& path);
  bool next(RunEntry& entry) override;

 private:
  core::MappedFile m_file;
  const uint8_t* m_p;
};

// Merges the runs term by term into `out`: each term once, with the summed df and the postings
// of every run that has it, in the order of `sources` (which must be docid order). The docids
// of sources[s] are shifted by bases[s] when `bases` is given (runs of index parts numbered
// from 0 each, merged in collection order).
void merge_runs(const std::vector<std::unique_ptr<RunSource>>& sources, bool positions,
                BlockWriter& out, const std::vector<uint32_t>& bases = {});

}  // namespace mirkit::index
