// Index building: single-pass in-memory inversion under a memory budget, with sorted runs
// spilled to disk and merged at the end (the classic SPIMI scheme, Heinz & Zobel 2003).
//
// Documents arrive in batches. Each batch is analyzed by `threads` workers over contiguous
// slices of the batch (tokenize, map tokens to terms through a per-worker cache, count term
// frequencies and positions); the serial step then appends each document's postings, in docid
// order, to per-term varint buffers. When the buffers and dictionary outgrow the budget, the run
// is written to disk sorted by term and memory starts over. finish() merges the runs term by
// term (postings concatenate, because runs cover increasing docid ranges) and encodes blocks, so
// the output depends only on the documents and options: spilled, single- and multi-threaded
// builds are byte-identical. Document vectors, when asked for, are the written postings read
// back and transposed, one docid range at a time within the budget (see format.hpp).
//
// This file holds the SPIMI state (analysis, term buffers, spills) and the per-document files;
// the merge of the runs is run_merge.hpp's and the encoding of blocks block_writer.hpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyzer.hpp"
#include "index/bm25.hpp"
#include "index/block_writer.hpp"
#include "index/reader.hpp"

namespace mirkit::index {

struct BuildOptions {
  analysis::AnalyzerConfig analyzer;
  std::string docid_codec = "bp128";
  std::string freq_codec = "bp128";
  bool positions = false;
  bool vectors = false;  // also write document vectors (doc_vectors.bin)
  // Also count the unstemmed words and bigrams (ngram_counts.hpp) for spelling correction;
  // off by default: they about double a build's time and the index size (GCIDE).
  bool word_counts = false;
  unsigned threads = 1;
  size_t memory_budget = size_t{1} << 30;  // bytes of postings buffers + dictionaries
  Bm25Params bm25;
  // Refuse repeated ids (DuplicateIdError). A ParallelBuilder checks them for all its parts at
  // once and turns it off for each part, so that no id hash is kept twice.
  bool check_ids = true;
};

struct BuildStats {
  uint64_t n_docs = 0;
  uint64_t n_terms = 0;
  uint64_t n_postings = 0;
  uint64_t position_bytes = 0;  // of freqs.bin's bytes, those of the inline positions
  uint64_t total_tokens = 0;  // indexed tokens (sum of document lengths)
  uint32_t max_doc_length = 0;
  uint32_t runs = 0;            // runs spilled to disk (0: everything fit the budget)
  uint64_t term_ranges = 0;     // term ranges the postings were merged in (merge_runs)
  // Peak bytes of the budgeted structures: the postings buffers, dictionaries and token caches
  // while indexing; at the commit, those of the runs still in memory plus the term ranges
  // encoded in memory (range_memory); the document vectors' pass.
  uint64_t peak_memory = 0;
  uint64_t range_memory = 0;    // most bytes of term ranges held at once (merge_runs)
  std::vector<FileInfo> files;  // every file written, in a fixed order
};

// Seconds spent in each step (wall clock of the calling thread; the analysis runs on the
// builder's threads).
struct BuildTimings {
  double analyze = 0;  // tokenizing, term lookup, per-document term frequencies
  double invert = 0;   // appending postings to the term buffers, spilling runs
  double write = 0;    // merging the runs, encoding blocks and writing every file
};

// Thrown by add_batch() when a document id repeats an earlier one; nothing of the batch has
// been added, so the caller may drop that document and resubmit the rest.
class DuplicateIdError : public std::invalid_argument {
 public:
  DuplicateIdError(size_t batch_index, uint64_t first_docid, const std::string& id);
  size_t batch_index;    // position of the repeated id in the batch
  uint64_t first_docid;  // internal docid of its first occurrence
};

// Document vectors (doc_vectors.bin, doc_vectors_end.u64) of the index whose postings (and
// document files) are in `directory`, as `layout` describes them (vectors off): its postings
// transposed, document by document, in docid ranges that fit `memory_budget`. doc_terms[d] is
// document d's number of distinct terms, or null to count them from the postings first (a
// merge). Returns the files written; `peak` (may be null) is raised to the pass's memory.
std::vector<FileInfo> write_doc_vectors(const std::string& directory, const IndexLayout& layout,
                                        const uint32_t* doc_terms, size_t memory_budget,
                                        size_t* peak);

// Documents [local_first, local_first + count) of part `part`, a docid run of a merge
// (IndexBuilder::merge_parts).
struct PartRun {
  size_t part;
  uint64_t local_first, count;
};

class IndexBuilder {
 public:
  // Writes into `directory`, which must exist and be empty (the caller renames it into place).
  IndexBuilder(std::string directory, BuildOptions options);
  ~IndexBuilder();
  IndexBuilder(const IndexBuilder&) = delete;
  IndexBuilder& operator=(const IndexBuilder&) = delete;

  // ids and texts are UTF-8; the views need only live through the call.
  void add_batch(const std::string_view* ids, const std::string_view* texts, size_t n);
  // Merges and writes every file; the builder is spent afterwards.
  BuildStats finish();

  uint64_t n_docs() const;
  size_t memory_used() const;
  const BuildTimings& timings() const;
  // Writes the run in memory to disk now (no-op when it is empty), giving its memory back.
  void spill();
  // The id of document `docid` (0-based, of this builder); out_of_range past the end.
  std::string doc_id(uint64_t docid) const;
  // Finishes `parts` (builders of the same options, each over its own directory) as one index
  // written into this builder's directory, which must have no documents: byte-identical to one
  // builder fed all their documents in collection order. That order is `runs`' (each run the
  // next documents of the collection; each part's runs in order, covering its documents), or
  // with no runs the parts' in turn. The parts and this builder are spent afterwards; the
  // parts' directories hold nothing more of use.
  BuildStats merge_parts(const std::vector<IndexBuilder*>& parts,
                         const std::vector<PartRun>& runs = {});

 private:
  struct State;
  std::unique_ptr<State> m;
};

}  // namespace mirkit::index
