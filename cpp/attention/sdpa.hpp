// Scaled dot-product attention, softmax(Q K^T * scale + mask) V, computed the FlashAttention way
// (Dao et al., 2022): each query block walks the key/value blocks once, keeping a running row
// maximum m and row sum l (the "online softmax" of Milakov & Gimelshein, 2018) and rescaling its
// output accumulator when m grows. Memory beyond inputs and output is a few blocks per thread;
// the N x M score matrix never exists.
//
// Layout: a problem is `batch` independent (Q, K, V, mask) quadruples. Broadcasting over leading
// dimensions costs nothing: each matrix is addressed through a per-batch index (q_index[b] picks
// the b-th Q matrix among the stored ones), so a K shared by every head is stored once.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mirkit::attention {

struct Problem {
  size_t batch = 0;          // number of (Q, K, V) problems
  size_t n = 0, m = 0;       // query rows, key/value rows
  size_t d = 0, dv = 0;      // query/key width, value width
  const int64_t* q_index = nullptr;  // batch entries: which stored Q (N x d) matrix
  const int64_t* k_index = nullptr;  // which stored K (M x d)
  const int64_t* v_index = nullptr;  // which stored V (M x dv)
  const int64_t* mask_index = nullptr;  // which stored additive mask; nullptr = no mask
  size_t mask_rows = 0;      // rows of each stored mask: n, or 1 (one row shared by all queries)
  bool causal = false;       // key j takes part for query i iff j <= i (PyTorch's tril(N, M))
  double scale = 1.0;        // multiplies Q K^T
  unsigned threads = 0;      // 0 = all cores
};

// Inputs and output of one call. `out` is (batch, n, dv), C-contiguous. A query row whose keys
// are all masked (every logit -inf) gets zeros, as PyTorch's CPU kernels return.
template <class T>
struct Tensors {
  const T* q = nullptr;
  const T* k = nullptr;
  const T* v = nullptr;
  const T* mask = nullptr;  // additive, (stored masks, mask_rows, m); -inf removes a key
  T* out = nullptr;
};

// Checks the sizes (std::invalid_argument on a bad value); the index arrays are checked by the
// caller, which knows how many matrices are stored.
void check_problem(const Problem& p);

// float32 inputs, float32 accumulation; the best SIMD path the active level allows.
void sdpa(const Problem& p, const Tensors<float>& t);
// float64 (reference use): scalar only.
void sdpa(const Problem& p, const Tensors<double>& t);
// bfloat16 inputs (raw bits, uint16) with float32 accumulation and a float32 mask and output.
// Uses AVX512-BF16 dot products when the CPU has them, the active level is AVX-512 or above and
// d is even; otherwise widens the inputs to float32 copies (exact) and runs the float32 kernel.
struct Bf16Tensors {
  const uint16_t* q = nullptr;
  const uint16_t* k = nullptr;
  const uint16_t* v = nullptr;
  const float* mask = nullptr;
  float* out = nullptr;
};
void sdpa(const Problem& p, const Bf16Tensors& t);

// The attention weights softmax(Q K^T * scale + mask), (batch, n, m): materialized, for small
// inputs (inspection, teaching). Fully masked rows are zeros.
template <class T>
void attention_weights(const Problem& p, const Tensors<T>& t, T* weights);

// Name of the path sdpa(float) / sdpa(bf16) takes now ("scalar", "sse4", "avx2", "avx512",
// "avx512bf16").
const char* kernel_name(bool bf16);

}  // namespace mirkit::attention
