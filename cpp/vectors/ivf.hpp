// Inverted-file (IVF) search over a k-means coarse quantizer (Jegou et al. 2011, sec. IV; the
// layout of FAISS's IndexIVF): the n vectors sit grouped by their nearest centroid ("list"),
// list l at positions [offsets[l], offsets[l + 1]). A query scans the n_probe lists whose
// centroids are nearest to it, scoring their vectors by one of three codes:
//   kFlat - the float32 vectors themselves (exact distances within the lists scanned),
//   kSq8  - 8-bit scalar quantization per dimension, x_e ~ lo[e] + code_e * step[e],
//   kPq   - product quantization of the residual x - centroid, ADC lookup tables (pq.hpp),
//   kPq4  - the same with 4-bit codes scanned 32 at a time with uint8 tables (fastscan.hpp);
//           its distances are the quantized tables' (re-rank with `refine` for exact ones).
// An optional filter (one byte per position, 0 = excluded) is tested during the scan, before
// a vector enters the top-k heap; `refine` > 0 keeps that many candidates and re-ranks them by
// exact distances to the raw vectors, every one computed by the gathered-rows kernel's
// four-row arithmetic (GatherKernel on a multiple of four rows), so a candidate's distance does
// not depend on its rank. Everything is read-only: concurrent searches are safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace mirkit::vectors {

enum class IvfCodes : int { kFlat = 0, kSq8 = 1, kPq = 2, kPq4 = 3 };

struct IvfData {
  size_t d = 0, n_lists = 0, n = 0;
  bool ip = false;                     // inner product (larger is better) instead of squared L2
  const float* centroids = nullptr;    // n_lists x d
  const int64_t* offsets = nullptr;    // n_lists + 1, offsets[0] = 0, offsets[n_lists] = n
  IvfCodes codes_kind = IvfCodes::kFlat;
  const float* vectors = nullptr;      // kFlat: n x d
  const uint8_t* codes = nullptr;      // kSq8: n x d; kPq: n x m
  const float* sq_lo = nullptr;        // kSq8: d
  const float* sq_step = nullptr;      // kSq8: d
  const float* pq_centroids = nullptr; // kPq: m x ksub x (d / m)
  // kPq with L2: |r|^2 + 2 <c_l, r> for every list l, subspace j and sub-centroid r, at
  // [(l * m + j) * ksub + r] (FAISS's precomputed tables): with it a list's table is this term
  // plus -2 <q_j, r>, which does not depend on the list, and |q - c_l|^2 is added once.
  const float* pq_term = nullptr;
  size_t m = 0, ksub = 0;
  // kPq4: the codes of list l in fast-scan blocks (fastscan.hpp) fs_blocks[fs_offsets[l]] to
  // fs_blocks[fs_offsets[l + 1]] (in blocks of m * 16 bytes); position i of the list is lane
  // i % 32 of its block i / 32.
  const uint8_t* fs_blocks = nullptr;
  const int64_t* fs_offsets = nullptr;
  const float* raw = nullptr;          // n x d, for refine (may be null when refine is 0)
};

// One list scan: out[i] = the score of row i (squared L2 or minus the inner product; +inf for
// rows the filter excludes) for n rows of float32 `rows`, or of sq8 `codes` (decoded as
// lo + code * step) when codes is not null.
struct IvfScan {
  const float* q;
  const float* rows;
  const uint8_t* codes;
  const float* lo;
  const float* step;
  size_t n, d;
  bool ip;
  const uint8_t* allow;  // null, or n bytes
  float* out;
};

// Scores (squared L2, or minus the inner product with ip) of q against n rows of dimension d
// given by pointer: out[i] for rows[i]. The graph search of hnsw.hpp scores a node's
// neighbours with it.
using GatherKernel = void (*)(const float* q, const float* const* rows, size_t n, size_t d,
                              bool ip, float* out);
// nq queries (nq x d, row-major) against the same n float32 rows, without a filter:
// out[g * n + i] = the score IvfScan gives query g and row i, bit for bit.
struct IvfScanMany {
  const float* q;
  size_t nq;
  const float* rows;
  size_t n, d;
  bool ip;
  float* out;  // nq x n
};

namespace detail {
void ivf_scan_scalar(const IvfScan& t);
void ivf_scan_sse4(const IvfScan& t);
void ivf_scan_avx2(const IvfScan& t);
void ivf_scan_avx512(const IvfScan& t);
void gather_scalar(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                   float* out);
void gather_sse4(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                 float* out);
void gather_avx2(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                 float* out);
void gather_avx512(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                   float* out);
void ivf_scan_many_scalar(const IvfScanMany& t);
void ivf_scan_many_sse4(const IvfScanMany& t);
void ivf_scan_many_avx2(const IvfScanMany& t);
void ivf_scan_many_avx512(const IvfScanMany& t);
}  // namespace detail

// The gathered-rows kernel of the active instruction-set level, and that level.
GatherKernel gather_kernel();
core::SimdLevel gather_level();

// For each of nq queries the k best positions (best first; ties: lower position) and their
// distances: squared L2 ascending, or inner products descending. Fewer than k hits are padded
// with position -1 and distance +inf (L2) or -inf (ip). allow: null or n bytes.
void ivf_search(const IvfData& ix, const float* q, size_t nq, size_t k, size_t n_probe,
                size_t refine, const uint8_t* allow, unsigned threads, float* dist,
                int64_t* pos);

// The nearest stored vector of every query (k = 1, no filter, no refine) of a kFlat index,
// batched: the queries are grouped by the lists they probe and each list is scanned once for
// all of its queries (as FAISS's IVF search does for a batch), lists spread over the threads.
// The result is exactly ivf_search's with k = 1: the least (score, position) over the probed
// lists, each score computed as its list scan computes it; position -1 and distance +inf (L2)
// or -inf (ip) when every probed list is empty.
void ivf_assign(const IvfData& ix, const float* q, size_t nq, size_t n_probe, unsigned threads,
                float* dist, int64_t* pos);

}  // namespace mirkit::vectors
