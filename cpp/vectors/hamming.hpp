// Hamming-ranking search over random-hyperplane sign codes (Charikar 2002, as faiss IndexLSH):
// bit j of a vector's code is [a_j . x > t_j] (t_j: 0, or a trained threshold); a query's code
// is compared with every code of the base by Hamming distance, the n_cand closest (ties by
// id) are kept and re-ranked by exact distance.
//
// Codes are n_bits bits in W = ceil(n_bits / 64) 64-bit words, bit j in word j / 64 at bit
// j % 64 (padding bits 0). The base is scanned in a blocked layout: blocks of 8 codes stored
// word-major, blocks[(b * W + w) * 8 + c] = word w of code 8b + c, so one 512-bit load holds
// the same word of 8 codes and a distance needs no horizontal sum.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace mirkit::vectors {

inline constexpr size_t kHammingBlock = 8;  // codes per block of the scan layout

// Distances of nq <= kHammingMaxQueries query codes (nq x W words) to the n_blocks * 8 codes
// of `blocks`: out[i * n_blocks * 8 + c].
inline constexpr size_t kHammingMaxQueries = 4;
using HammingKernel = void (*)(const uint64_t* blocks, size_t n_blocks, size_t words,
                               const uint64_t* q, size_t nq, uint16_t* out);

// Ids i < n with d[i] <= bound, ascending, written to out (room for n + 32); returns how many.
using BelowKernel = size_t (*)(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out);

namespace detail {
size_t below_scalar(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out);
size_t below_avx2(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out);
size_t below_avx512(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out);
void hamming_scalar(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                    size_t nq, uint16_t* out);
void hamming_sse4(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                  size_t nq, uint16_t* out);
void hamming_avx2(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                  size_t nq, uint16_t* out);
void hamming_avx512(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                    size_t nq, uint16_t* out);
}  // namespace detail

core::SimdLevel hamming_level();

struct SignCoder {
  size_t n_bits, d;
  const float* proj;        // n_bits x d
  const float* threshold;   // n_bits
};

// Packed codes of rows x (n x d): out is n x W words.
void sign_encode(const SignCoder& c, const float* x, size_t n, unsigned threads, uint64_t* out);

// Hamming distances of query codes (nq x W) to n codes in the blocked layout: out nq x n.
void hamming_distances(const uint64_t* blocks, size_t n, size_t words, const uint64_t* qcodes,
                       size_t nq, unsigned threads, uint16_t* out);

// Approximate k nearest rows of `data` (n x d) for every query: encode, keep the n_cand codes
// closest in Hamming distance (ties by id), re-rank them exactly (squared L2 ascending when
// l2, else inner product descending). Fewer than k: padded with id -1 and +inf / -inf.
// cand (optional, nq x n_cand): the kept ids in (Hamming distance, id) order, -1 padded.
void hamming_search(const SignCoder& c, const uint64_t* blocks, const float* data, size_t n,
                    const float* q, size_t nq, size_t k, size_t n_cand, bool l2,
                    unsigned threads, float* dist, int64_t* ids, int64_t* cand);

}  // namespace mirkit::vectors
