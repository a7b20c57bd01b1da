#include "vectors/hamming.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <limits>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "vectors/lsh_rerank.hpp"

namespace mirkit::vectors {

namespace detail {

void hamming_scalar(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                    size_t nq, uint16_t* out) {
  const size_t stride = n_blocks * kHammingBlock;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t* block = blocks + b * words * kHammingBlock;
    for (size_t i = 0; i < nq; ++i) {
      for (size_t c = 0; c < kHammingBlock; ++c) {
        unsigned s = 0;
        for (size_t w = 0; w < words; ++w) {
          const uint64_t x = block[w * kHammingBlock + c] ^ q[i * words + w];
          s += static_cast<unsigned>(__builtin_popcountll(x));
        }
        out[i * stride + b * kHammingBlock + c] = static_cast<uint16_t>(s);
      }
    }
  }
}

size_t below_scalar(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out) {
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {  // branch-free: out has room for n, hits are rare
    out[m] = static_cast<uint32_t>(i);
    m += d[i] <= bound;
  }
  return m;
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
// The AVX-512 entry needs VPOPCNTDQ on top of the level's F/BW/VL/DQ; without it the AVX2
// (PSHUFB) path serves that level.
core::Dispatch<HammingKernel> make_dispatch() {
  core::Dispatch<HammingKernel> d{
      {detail::hamming_scalar, detail::hamming_sse4, detail::hamming_avx2}};
  if (core::cpu_features().avx512vpopcntdq) d.impl[3] = detail::hamming_avx512;
  return d;
}
const core::Dispatch<HammingKernel> kHamming = make_dispatch();
const core::Dispatch<BelowKernel> kBelow{
    {detail::below_scalar, nullptr, detail::below_avx2, detail::below_avx512}};
#else
const core::Dispatch<HammingKernel> kHamming{{detail::hamming_scalar}};
const core::Dispatch<BelowKernel> kBelow{{detail::below_scalar}};
#endif

constexpr size_t kEncodeRows = 4096;  // rows projected per batch (bounds the temporary)

size_t n_words(size_t n_bits) { return (n_bits + 63) / 64; }

// Ids of the n_cand smallest distances among n, in (distance, id) order. First a bound: the
// n_cand-th smallest distance of a prefix is >= the global one, so rows above it are dropped
// with one comparison each; the few survivors are then counting-sorted by distance.
void select(BelowKernel below, const uint16_t* dist, size_t n, size_t n_bits, size_t n_cand,
            std::vector<uint32_t>& hist, std::vector<uint32_t>& surv, std::vector<uint32_t>& out) {
  hist.assign(n_bits + 2, 0);
  const size_t prefix = std::min(n, std::max<size_t>(4096, 16 * n_cand));
  for (size_t i = 0; i < prefix; ++i) ++hist[dist[i]];
  size_t bound = 0;
  for (size_t seen = 0; bound <= n_bits; ++bound) {
    seen += hist[bound];
    if (seen >= n_cand) break;
  }
  surv.resize(n + 32);  // the SIMD filter stores whole vectors
  const size_t m = below(dist, n, static_cast<uint16_t>(bound), surv.data());
  std::fill(hist.begin(), hist.end(), 0u);
  for (size_t s = 0; s < m; ++s) ++hist[dist[surv[s]] + 1];
  for (size_t v = 1; v < hist.size(); ++v) hist[v] += hist[v - 1];
  out.resize(m);
  for (size_t s = 0; s < m; ++s) out[hist[dist[surv[s]]]++] = surv[s];  // stable: ids ascending
  out.resize(std::min(m, n_cand));
}

}  // namespace

core::SimdLevel hamming_level() { return kHamming.chosen(); }

void sign_encode(const SignCoder& c, const float* x, size_t n, unsigned threads, uint64_t* out) {
  const size_t words = n_words(c.n_bits);
  std::vector<float> proj(std::min(n, kEncodeRows) * c.n_bits);
  for (size_t i0 = 0; i0 < n; i0 += kEncodeRows) {
    const size_t rows = std::min(kEncodeRows, n - i0);
    project_rows(x + i0 * c.d, rows, c.proj, c.n_bits, c.d, threads, proj.data());
    for (size_t i = 0; i < rows; ++i) {
      uint64_t* code = out + (i0 + i) * words;
      std::fill(code, code + words, uint64_t{0});
      for (size_t j = 0; j < c.n_bits; ++j) {
        code[j / 64] |= uint64_t{proj[i * c.n_bits + j] > c.threshold[j]} << (j % 64);
      }
    }
  }
}

void hamming_distances(const uint64_t* blocks, size_t n, size_t words, const uint64_t* qcodes,
                       size_t nq, unsigned threads, uint16_t* out) {
  const size_t n_blocks = (n + kHammingBlock - 1) / kHammingBlock;
  const HammingKernel kernel = kHamming.get();
  const size_t groups = (nq + kHammingMaxQueries - 1) / kHammingMaxQueries;
  core::parallel_for(groups, threads, [&](size_t g) {
    const size_t i0 = g * kHammingMaxQueries, m = std::min(kHammingMaxQueries, nq - i0);
    std::vector<uint16_t> buf(m * n_blocks * kHammingBlock);
    kernel(blocks, n_blocks, words, qcodes + i0 * words, m, buf.data());
    for (size_t i = 0; i < m; ++i) {
      std::copy_n(buf.data() + i * n_blocks * kHammingBlock, n, out + (i0 + i) * n);
    }
  });
}

void hamming_search(const SignCoder& c, const uint64_t* blocks, const float* data, size_t n,
                    const float* q, size_t nq, size_t k, size_t n_cand, bool l2,
                    unsigned threads, float* dist, int64_t* ids, int64_t* cand) {
  if (k == 0) core::fail_value("k must be >= 1");
  if (n_cand == 0) core::fail_value("n_candidates must be >= 1");
  if (c.n_bits == 0 || c.n_bits > 4096) core::fail_value("n_bits must be in [1, 4096]");
  const size_t words = n_words(c.n_bits), n_blocks = (n + kHammingBlock - 1) / kHammingBlock;
  std::vector<uint64_t> qcodes(nq * words);
  sign_encode(c, q, nq, threads, qcodes.data());
  const HammingKernel kernel = kHamming.get();
  const BelowKernel below = kBelow.get();
  const RerankKernel rerank = rerank_kernel();
  const float pad = l2 ? std::numeric_limits<float>::infinity()
                       : -std::numeric_limits<float>::infinity();
  const size_t groups = (nq + kHammingMaxQueries - 1) / kHammingMaxQueries;
  // One worker per thread with its own buffers, pulling groups of queries (one scan of the
  // codes serves every query of a group).
  const size_t workers =
      std::min<size_t>(core::resolve_threads(threads), std::max<size_t>(groups, 1));
  std::atomic<size_t> next{0};
  core::parallel_for(workers, threads, [&](size_t) {
    std::vector<uint16_t> hd(kHammingMaxQueries * n_blocks * kHammingBlock);
    std::vector<uint32_t> hist, surv;
    std::array<std::vector<uint32_t>, kHammingMaxQueries> kept_all;
    std::vector<float> score;
    std::vector<std::pair<float, uint32_t>> ranked;
    for (size_t g; (g = next.fetch_add(1)) < groups;) {
      const size_t i0 = g * kHammingMaxQueries, m = std::min(kHammingMaxQueries, nq - i0);
      if (n_blocks) kernel(blocks, n_blocks, words, qcodes.data() + i0 * words, m, hd.data());
      // Select every query of the group first and request all their candidate rows at once,
      // so the misses overlap instead of queueing behind the re-ranking's short look-ahead.
      for (size_t a = 0; a < m; ++a) {
        const size_t i = i0 + a;
        select(below, hd.data() + a * n_blocks * kHammingBlock, n, c.n_bits, n_cand, hist, surv,
               kept_all[a]);
        if (cand) {
          for (size_t e = 0; e < n_cand; ++e) {
            cand[i * n_cand + e] = e < kept_all[a].size() ? int64_t{kept_all[a][e]} : -1;
          }
        }
        for (uint32_t row : kept_all[a]) {
          const char* p = reinterpret_cast<const char*>(data + static_cast<size_t>(row) * c.d);
          for (size_t b = 0; b < c.d * sizeof(float); b += 64) __builtin_prefetch(p + b);
        }
      }
      for (size_t a = 0; a < m; ++a) {
        const size_t i = i0 + a;
        const std::vector<uint32_t>& kept = kept_all[a];
        score.resize(kept.size());
        rerank(q + i * c.d, data, c.d, kept.data(), kept.size(), l2, score.data());
        ranked.resize(kept.size());
        for (size_t e = 0; e < kept.size(); ++e) ranked[e] = {score[e], kept[e]};
        const size_t found = std::min(k, ranked.size());
        std::partial_sort(ranked.begin(), ranked.begin() + found, ranked.end());
        for (size_t e = 0; e < k; ++e) {
          dist[i * k + e] = e < found ? (l2 ? ranked[e].first : -ranked[e].first) : pad;
          ids[i * k + e] = e < found ? static_cast<int64_t>(ranked[e].second) : -1;
        }
      }
    }
  });
}

}  // namespace mirkit::vectors
