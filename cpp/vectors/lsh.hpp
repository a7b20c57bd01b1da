// Locality-sensitive hashing with L tables of K concatenated hashes, multi-probe querying and
// exact re-ranking. Two families:
//  - sign (Charikar 2002): h_j(x) = [a_j . x >= 0], random hyperplanes, for cosine;
//  - p-stable (Datar et al. 2004, E2LSH): h_j(x) = floor((a_j . x + b_j) / w), for L2.
// A table maps the K hash values of a vector to a 32-bit hash (a 64-bit mix), and its top
// slot_bits bits to a slot of a CSR bucket array; vectors of different buckets that share a
// slot are merely extra candidates, removed by re-ranking. Multi-probe (Lv et al. 2007,
// query-directed): each hash value may be moved to its neighbour (sign: flipped; p-stable:
// -1 or +1), at a cost that is the squared distance of the projection to that boundary;
// perturbation sets are enumerated in increasing total cost with the shift/expand heap.
//
// The functions are stateless over arrays the caller owns (mirkit.vectors.LSHIndex keeps them
// as numpy arrays, so saving and pickling are plain array copies).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mirkit::vectors {

enum class LshFamily : int { kSign = 0, kPStable = 1 };

struct LshParams {
  LshFamily family;
  size_t n_tables, n_hashes, d;
  const float* proj;   // (n_tables * n_hashes) x d
  const float* shift;  // n_tables * n_hashes, in [0, width) (p-stable only)
  float width;         // p-stable bucket width
};

// 32-bit hash of every row in every table: out[t * n + i].
void lsh_hash(const LshParams& p, const float* x, size_t n, unsigned threads, uint32_t* out);

// CSR buckets of table t: ids[t * n + offsets[t * (S + 1) + s] ...] with S = 2^slot_bits,
// rows in increasing order within a slot.
void lsh_build(size_t n_tables, size_t n, const uint32_t* hashes, uint32_t slot_bits,
               uint32_t* offsets, uint32_t* ids);

// k best rows for every query among the candidates of n_probes buckets per table, re-ranked
// exactly: squared L2 ascending (l2 = true) or inner product descending. With n_rerank > 0,
// only the n_rerank candidates found in the most buckets (collision counting: a near
// neighbour collides with the query in many tables, a far row in few; ties by first found)
// are re-ranked. Fewer than k re-ranked: padded with id -1 and distance +inf (L2) or -inf.
// n_candidates[i] / n_reranked[i]: distinct rows found / scored for query i.
void lsh_search(const LshParams& p, uint32_t slot_bits, const uint32_t* offsets,
                const uint32_t* ids, const float* data, size_t n, const float* q, size_t nq,
                size_t k, size_t n_probes, size_t n_rerank, bool l2, unsigned threads,
                float* dist, int64_t* out_ids, uint32_t* n_candidates, uint32_t* n_reranked);

}  // namespace mirkit::vectors
