// PLAID's residual codec and scoring stages (plaid.hpp).
#include "late/plaid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.hpp"
#include "late/maxsim.hpp"

namespace mirkit::late {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr size_t kChunk = 64;  // documents per parallel task

size_t n_tasks(size_t n) { return (n + kChunk - 1) / kChunk; }

}  // namespace

void encode_residuals(const ResidualCodec& codec, const float* x, const uint32_t* centroid_ids,
                      size_t n, unsigned threads, uint8_t* codes) {
  const size_t dim = codec.dim, row = codec.row_bytes(), n_cut = (size_t{1} << codec.nbits) - 1;
  const size_t kRows = 1024;
  core::parallel_for((n + kRows - 1) / kRows, threads, [&](size_t task) {
    const size_t end = std::min(n, (task + 1) * kRows);
    for (size_t t = task * kRows; t < end; ++t) {
      const float* c = codec.centroids + size_t{centroid_ids[t]} * dim;
      uint8_t* out = codes + t * row;
      std::fill(out, out + row, uint8_t{0});
      for (size_t j = 0; j < dim; ++j) {
        const float r = x[t * dim + j] - c[j];
        const float* cut = codec.cutoffs + j * n_cut;
        // Bucket = number of cutoffs below r (cutoffs increase): upper_bound's position.
        const unsigned b = static_cast<unsigned>(std::upper_bound(cut, cut + n_cut, r) - cut);
        const size_t bit = j * codec.nbits;
        out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | (b << (bit % 8)));
      }
    }
  });
}

namespace {

// Bucket weights by code byte: table[(i * 256 + byte) * per + k] is the weight of dimension
// i * per + k when byte i of a token's codes is `byte` (per = 8 / nbits dimensions a byte), so
// a token decodes with one table row per byte instead of a shift, mask and load per dimension.
struct DecodeTable {
  size_t per = 0, full_bytes = 0;
  std::vector<float> t;
  explicit DecodeTable(const ResidualCodec& c) : per(8 / c.nbits), full_bytes(c.dim / per) {
    const size_t n_b = size_t{1} << c.nbits, mask = n_b - 1;
    t.resize(full_bytes * 256 * per);
    for (size_t i = 0; i < full_bytes; ++i) {
      for (size_t byte = 0; byte < 256; ++byte) {
        for (size_t k = 0; k < per; ++k) {
          const size_t j = i * per + k, b = (byte >> (k * c.nbits)) & mask;
          t[(i * 256 + byte) * per + k] = c.bucket_weights[j * n_b + b];
        }
      }
    }
  }
};

template <size_t Per>
void decode_rows(const ResidualCodec& c, const DecodeTable& table, const StoredDocs& docs,
                 size_t begin, size_t n, float* out) {
  const size_t dim = c.dim, row = c.row_bytes(), n_b = size_t{1} << c.nbits;
  const unsigned mask = static_cast<unsigned>(n_b - 1);
  for (size_t t = 0; t < n; ++t) {
    const float* cen = c.centroids + size_t{docs.token_centroid[begin + t]} * dim;
    const uint8_t* code = docs.codes + (begin + t) * row;
    float* o = out + t * dim;
    for (size_t i = 0; i < table.full_bytes; ++i) {
      const float* w = table.t.data() + (i * 256 + code[i]) * Per;
      for (size_t k = 0; k < Per; ++k) o[i * Per + k] = cen[i * Per + k] + w[k];
    }
    for (size_t j = table.full_bytes * Per; j < dim; ++j) {  // dimensions of a partial byte
      const size_t bit = j * c.nbits;
      o[j] = cen[j] + c.bucket_weights[j * n_b + ((code[bit / 8] >> (bit % 8)) & mask)];
    }
  }
}

void decode(const ResidualCodec& c, const DecodeTable& table, const StoredDocs& docs,
            size_t begin, size_t n, float* out) {
  switch (table.per) {
    case 8: decode_rows<8>(c, table, docs, begin, n, out); break;
    case 4: decode_rows<4>(c, table, docs, begin, n, out); break;
    case 2: decode_rows<2>(c, table, docs, begin, n, out); break;
    default: decode_rows<1>(c, table, docs, begin, n, out); break;
  }
  if (!c.normalize) return;
  for (size_t t = 0; t < n; ++t) {
    float* o = out + t * c.dim;
    float ss = 0.0f;
    for (size_t j = 0; j < c.dim; ++j) ss += o[j] * o[j];
    if (ss > 0.0f) {
      const float inv = 1.0f / std::sqrt(ss);
      for (size_t j = 0; j < c.dim; ++j) o[j] *= inv;
    }
  }
}

}  // namespace

void decompress(const ResidualCodec& codec, const StoredDocs& docs, size_t begin, size_t n,
                float* out) {
  decode(codec, DecodeTable(codec), docs, begin, n, out);
}

void centroid_interaction(const float* scores_t, size_t n_q, const StoredDocs& docs,
                          const uint32_t* cands, size_t n, unsigned threads, float* out) {
  core::parallel_for(n_tasks(n), threads, [&](size_t task) {
    std::vector<float> best(n_q);
    const size_t end = std::min(n, (task + 1) * kChunk);
    for (size_t i = task * kChunk; i < end; ++i) {
      const size_t d = cands[i];
      std::fill(best.begin(), best.end(), kNegInf);
      for (int64_t t = docs.offsets[d]; t < docs.offsets[d + 1]; ++t) {
        const float* s = scores_t + size_t{docs.token_centroid[t]} * n_q;
        for (size_t q = 0; q < n_q; ++q) best[q] = std::max(best[q], s[q]);  // vectorizes
      }
      float sum = 0.0f;
      for (size_t q = 0; q < n_q; ++q) sum += best[q];
      out[i] = sum;
    }
  });
}

void residual_maxsim(const ResidualCodec& codec, const StoredDocs& docs, const float* q,
                     size_t n_q, const float* weights, const uint32_t* cands, size_t n,
                     unsigned threads, float* out) {
  const PackedQuery pq = pack_query(q, n_q, codec.dim, weights);
  const DecodeTable table(codec);
  core::parallel_for(n_tasks(n), threads, [&](size_t task) {
    std::vector<float> buf, scratch(2 * pq.n_panels() * kPanel);
    const size_t end = std::min(n, (task + 1) * kChunk);
    for (size_t i = task * kChunk; i < end; ++i) {
      const size_t d = cands[i];
      const size_t begin = static_cast<size_t>(docs.offsets[d]);
      const size_t len = static_cast<size_t>(docs.offsets[d + 1]) - begin;
      if (len == 0) {
        out[i] = kNegInf;
        continue;
      }
      buf.resize(len * codec.dim);
      decode(codec, table, docs, begin, len, buf.data());
      out[i] = maxsim_one(pq, buf.data(), len, scratch.data());
    }
  });
}

}  // namespace mirkit::late
