// Writing an index's posting files from postings lists held in flat arrays (a CIFF import, a
// docid reordering): lists in any term order, each list's postings in strictly increasing docid
// order, fed to a BlockWriter in bytewise term order, so that the files, skips and BM25 bounds
// are exactly those a build of the same postings writes. The documents' files (lengths, ids)
// are the caller's to write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "index/bm25.hpp"
#include "index/segment_merge.hpp"

namespace mirkit::index {

// n_lists postings lists: list i is the term terms[term_offsets[i], term_offsets[i + 1]) with
// the postings [list_offsets[i], list_offsets[i + 1]) of docids and tfs. order[0..n_lists)
// lists them in strictly increasing bytewise term order (a permutation of 0..n_lists).
struct PostingsLists {
  const uint8_t* terms;
  const uint64_t* term_offsets;  // n_lists + 1
  const uint32_t* order;         // n_lists
  const uint64_t* list_offsets;  // n_lists + 1
  const uint32_t* docids;
  const uint32_t* tfs;
  size_t n_lists;
  uint64_t n_terms_bytes, n_postings;  // the sizes of terms and of docids / tfs
};

// Writes the posting files into `directory` (no positions, no document vectors). Empty lists
// are skipped. Throws std::invalid_argument naming the list (its number i) when its offsets,
// term order, docids (strictly increasing, below n_docs) or tfs (>= 1) are wrong.
MergeStats write_postings_lists(const std::string& directory, const PostingsLists& lists,
                                const std::string& docid_codec, const std::string& freq_codec,
                                const Bm25Params& bm25, const uint32_t* doc_lengths,
                                size_t n_docs, uint64_t total_tokens);

}  // namespace mirkit::index
