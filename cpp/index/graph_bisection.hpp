// Document reordering by recursive graph bisection (Dhulipala, Kabiljo, Karrer, Ottaviano,
// Pupyrev and Shalita, "Compressing graphs and indexes with recursive graph bisection", KDD
// 2016), as PISA implements it (include/pisa/recursive_graph_bisection.hpp; Mackenzie,
// Mallia, Petri, Culpepper and Suel's reproducibility study, ECIR 2019).
//
// The documents are a bipartite graph with the terms (the forward index: each document's
// distinct terms). A range of documents is split in the middle (documents in increasing docid
// order); for `iterations` rounds, each document gets the gain in the log-gap cost
//   cost(t) = d1(t) log2(n1 / (d1(t) + 1)) + d2(t) log2(n2 / (d2(t) + 1))
// summed over its terms (d1, d2: the term's documents in each half of sizes n1, n2) of moving
// to the other half; both halves are sorted by decreasing gain and pairs are swapped while
// their summed gain is positive. Each half is then bisected again, to `depth` levels or until
// a range holds at most `min_partition` documents; the documents of a last-level half are
// sorted by docid. Terms' gains are computed once per half and round, and log2 of small
// integers comes from a precomputed table (PISA's Log2<4096>).
//
// Speedups that leave the order exactly PISA's: each partition is bisected on a contiguous
// copy of its forward index with its terms renumbered densely (the rounds read sequential
// memory and arrays of the partition's size); terms held by a single document of an
// even-sized partition are left out (their gain is exactly 0); each half is ordered by gain
// only as far as the swaps go (growing selected prefixes instead of a full sort).
//
// Deterministic: no randomness, ties in gain broken by docid, and the same result on any
// number of threads (partitions of one level run in parallel; a level with fewer partitions
// than threads computes each partition's gains on all threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mirkit::index {

struct BisectionOptions {
  unsigned depth = 0;          // levels of bisection; 0: floor(log2(n_docs)) - 5, at least 1
  unsigned iterations = 20;    // swap rounds per bisection
  // A bisection's rounds stop after one that swaps fewer than swap_threshold x (its number of
  // documents) pairs; 0: only after a round that swaps nothing (PISA's order).
  double swap_threshold = 0.005;
  size_t min_partition = 2;    // a range of at most this many documents is not bisected
  unsigned threads = 0;        // 0: all cores
};

// The new order of the documents: order[i] is the old docid of the document that gets docid
// i. The forward index is CSR: document d holds the term ids terms[offsets[d],
// offsets[d + 1]) (each below n_terms; order within a document is irrelevant). Throws
// std::invalid_argument on a term id out of range or offsets that decrease.
std::vector<uint32_t> graph_bisection(const uint64_t* offsets, const uint32_t* terms,
                                      size_t n_docs, size_t n_terms,
                                      const BisectionOptions& options);

// The forward index (CSR, as graph_bisection takes it) of an inverted index whose term t has
// the postings docids[list_offsets[t], list_offsets[t + 1]): each document's terms ascending.
// Throws std::invalid_argument on a docid out of range or offsets that decrease.
void transpose_postings(const uint64_t* list_offsets, const uint32_t* docids, size_t n_terms,
                        size_t n_docs, std::vector<uint64_t>& offsets,
                        std::vector<uint32_t>& terms);

// The log-gap cost of a docid order: the sum over the postings of log2(d-gap) (the first
// docid of a list counts as a gap from -1), which is what BP minimizes, in bits; lists are
// given as a CSR forward index and the order as in graph_bisection.
double log_gap_cost(const uint64_t* offsets, const uint32_t* terms, size_t n_docs,
                    size_t n_terms, const uint32_t* order);

}  // namespace mirkit::index
