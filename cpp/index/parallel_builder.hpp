// Parallel index building: each worker thread builds its own part (an IndexBuilder with its own
// dictionary, term buffers and runs), so nothing is shared on the hot path; the parts are in
// collection order and are either merged once at the end (finish: the runs of every part go
// through one k-way merge into the index, byte-identical to a one-threaded build of the same
// documents) or finished as they are, one index per part (finish_parts: a segmented index).
//
// A JSON Lines file (add_jsonl) is cut into one contiguous byte range per thread, on line
// boundaries; each worker reads its range with the strict JsonlLineReader and indexes it into
// its own part. Lines that reader leaves undecided go to a callback (the reference reader in
// Python), which also words the errors. Documents given in batches (add_batch: any other
// input, read by the caller) are a stream: each batch is copied and handed whole to one of
// `threads` workers, which indexes it into its own part on its own thread while the caller
// reads on. A batch is a contiguous docid run of its part, so a part holds several runs
// between other parts' runs; the merge maps each run to its docids (run_merge.hpp's DocidMap)
// and takes each term's postings in docid order, so the result is byte-identical to a
// one-threaded build whatever worker took which batch.
//
// Ids are checked for repeats across the whole collection: within a batch or a worker's range
// by the part's builder, across parts here, through a table of 64-bit id hashes (a repeated
// hash is confirmed by comparing the ids).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "index/builder.hpp"
#include "index/jsonl.hpp"
#include "index/store.hpp"

namespace mirkit::index {

// What the caller decided about a line the strict reader left undecided.
struct LineOutcome {
  enum Kind { kDocument, kSkip, kError } kind = kSkip;
  std::string id, text;  // kDocument
};
// Called from worker `worker` for 1-based line `line`, whose bytes include the '\n' (one is
// added to a last line without it). Must be thread-safe.
using ResolveLine =
    std::function<LineOutcome(unsigned worker, uint64_t line, std::string_view bytes)>;

struct JsonlResult {
  enum ErrorKind { kNone, kResolved, kDuplicate };
  uint64_t n_docs = 0;
  // The first error of the file in line order (later lines may have been read too):
  // kResolved, reported by worker error_worker's callback; kDuplicate, a repeated id.
  ErrorKind error = kNone;
  uint64_t error_line = 0;
  unsigned error_worker = 0;
  std::string duplicate_id;
  uint64_t first_docid = 0;  // kDuplicate: the docid of the id's first occurrence
};

// Seconds per step. read_parse, analyze and invert add up the workers' threads (CPU seconds);
// write and merge are wall clock.
struct ParallelTimings {
  double read_parse = 0;  // splitting lines and parsing JSON (in C++; the Python reader's time
                          // is the caller's to add)
  double analyze = 0;     // tokenizing and term lookup
  double invert = 0;      // appending postings, spilling runs
  double write = 0;       // merging runs, encoding blocks, writing the files
  double merge = 0;       // joining the parts' documents (their runs merge while writing)
};

// An index that finish_parts() wrote, and its stats.
struct FinishedPart {
  std::string directory;
  BuildStats stats;
};

class ParallelBuilder {
 public:
  // Writes into `directory`, which must exist and be empty; parts live in directory/part-<k>.
  ParallelBuilder(std::string directory, BuildOptions options);
  ~ParallelBuilder();
  ParallelBuilder(const ParallelBuilder&) = delete;
  ParallelBuilder& operator=(const ParallelBuilder&) = delete;

  // As IndexBuilder::add_batch; DuplicateIdError's first_docid counts every part's documents.
  // With threads > 1 the batch is indexed later, on a worker (a worker's failure is thrown by
  // a later call, and breaks the builder).
  void add_batch(const std::string_view* ids, const std::string_view* texts, size_t n);
  // Indexes the JSON Lines file at `path` on the builder's threads: its bytes [first, stop)
  // (stop past the end: to the end), whose first byte is on line `line`; a range that does not
  // start the file must start and end on line boundaries (mirkit.ingest.FileRange.aligned).
  // After a result with an error, or an exception, the builder refuses further use (other
  // workers have read past the error). With `store`, each document's stored_record (of
  // *store_fields, or the whole record when null) is added to it, in docid order, once the
  // workers are done (an error leaves the store unchanged).
  JsonlResult add_jsonl(const std::string& path, const JsonlFields& fields,
                        const ResolveLine& resolve, uint64_t first = 0,
                        uint64_t stop = UINT64_MAX, uint64_t line = 1,
                        StoreWriter* store = nullptr,
                        const std::vector<std::string>* store_fields = nullptr);
  // One index in `directory`, byte-identical to a one-part build; the part directories are
  // removed. memory_used() and timings() wait for the workers.
  BuildStats finish();
  // Each JSON Lines range's part finished as an index in its own directory, and each stream
  // of batches' parts merged into one, in collection order, in parallel.
  std::vector<FinishedPart> finish_parts();

  uint64_t n_docs() const;
  size_t n_parts() const;
  size_t memory_used() const;
  ParallelTimings timings() const;

 private:
  struct State;
  std::unique_ptr<State> m;
};

}  // namespace mirkit::index
