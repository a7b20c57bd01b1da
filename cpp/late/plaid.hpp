// PLAID's storage and scoring stages (Santhanam et al., "PLAID: An Efficient Engine for Late
// Interaction Retrieval", CIKM 2022; ColBERTv2's residual compression, Santhanam et al., NAACL
// 2022). Every token vector is stored as the id of its nearest centroid plus its residual
// quantized to `nbits` per dimension: code b of dimension j stands for bucket_weights[j][b],
// and b counts the cutoffs cutoffs[j][0..2^nbits-2] below the residual. Codes are packed
// little-endian, dimension j at bit j * nbits of the token's row of row_bytes() bytes.
//
// Search runs in stages over these arrays (the candidate lists themselves are made in Python):
//   centroid_interaction - a document's approximate score, sum_i max_t S[c_t][i], from the query
//                          tokens' centroid scores S alone (no residual is read);
//   residual_maxsim      - exact MaxSim over the decompressed tokens of the best candidates,
//                          decompressed into a per-thread buffer and fed to the fused kernel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mirkit::late {

struct ResidualCodec {
  const float* centroids = nullptr;       // n_centroids x dim
  size_t n_centroids = 0, dim = 0;
  unsigned nbits = 2;                     // 1, 2, 4 or 8
  const float* cutoffs = nullptr;         // dim x (2^nbits - 1), increasing per dimension
  const float* bucket_weights = nullptr;  // dim x 2^nbits
  bool normalize = false;                 // decompressed tokens scaled to unit length
  size_t row_bytes() const { return (dim * nbits + 7) / 8; }
};

struct StoredDocs {
  const uint32_t* token_centroid = nullptr;  // n_tokens, each < n_centroids
  const uint8_t* codes = nullptr;            // n_tokens x row_bytes
  const int64_t* offsets = nullptr;          // n_docs + 1, offsets[0] = 0, non-decreasing
  size_t n_docs = 0;
};

// Codes of n tokens x (row-major, dim) whose centroids are centroid_ids.
void encode_residuals(const ResidualCodec& codec, const float* x, const uint32_t* centroid_ids,
                      size_t n, unsigned threads, uint8_t* codes);

// Tokens [begin, begin + n) decompressed: centroid + bucket weight, n x dim floats (each row then
// divided by its length when codec.normalize, as ColBERTv2 does for unit-length encoders).
void decompress(const ResidualCodec& codec, const StoredDocs& docs, size_t begin, size_t n,
                float* out);

// out[i] = sum_q max over tokens t of document cands[i] of scores_t[c_t * n_q + q], where
// scores_t is (n_centroids x n_q): the query tokens' centroid scores, centroid-major.
void centroid_interaction(const float* scores_t, size_t n_q, const StoredDocs& docs,
                          const uint32_t* cands, size_t n, unsigned threads, float* out);

// out[i] = MaxSim of the query (n_q x dim, weights optional) against the decompressed tokens of
// document cands[i]. Documents with no tokens get -inf.
void residual_maxsim(const ResidualCodec& codec, const StoredDocs& docs, const float* q,
                     size_t n_q, const float* weights, const uint32_t* cands, size_t n,
                     unsigned threads, float* out);

}  // namespace mirkit::late
