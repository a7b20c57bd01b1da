#include "vectors/lsh.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "vectors/distances.hpp"
#include "vectors/ivf.hpp"
#include "vectors/lsh_rerank.hpp"

namespace mirkit::vectors {

namespace detail {

void rerank_scalar(const float* q, const float* data, size_t d, const uint32_t* cand, size_t nc,
                   bool l2, float* out) {
  // Eight partial sums: a fixed association the compiler can vectorize without -ffast-math.
  constexpr size_t kLanes = 8;
  for (size_t c = 0; c < nc; ++c) {
    const float* x = data + static_cast<size_t>(cand[c]) * d;
    float acc[kLanes] = {};
    size_t j = 0;
    for (; j + kLanes <= d; j += kLanes) {
      for (size_t l = 0; l < kLanes; ++l) {
        const float v = l2 ? q[j + l] - x[j + l] : q[j + l] * x[j + l];
        acc[l] += l2 ? v * v : v;
      }
    }
    float s = 0.0f;
    for (size_t l = 0; l < kLanes; ++l) s += acc[l];
    for (; j < d; ++j) s += l2 ? (q[j] - x[j]) * (q[j] - x[j]) : q[j] * x[j];
    out[c] = l2 ? s : -s;
  }
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
// At SSE4 and AVX2, re-ranking is the gathered-rows kernel of IVF and HNSW (ivf_scan.inl: four
// rows at once, whose independent load streams overlap the cache misses of scattered
// candidates), fed the candidates' row pointers a chunk at a time.
template <GatherKernel G>
void rerank_gathered(const float* q, const float* data, size_t d, const uint32_t* cand,
                     size_t nc, bool l2, float* out) {
  constexpr size_t kChunk = 64;
  const float* rows[kChunk];
  for (size_t c0 = 0; c0 < nc; c0 += kChunk) {
    const size_t m = std::min(kChunk, nc - c0);
    for (size_t c = 0; c < m; ++c) rows[c] = data + static_cast<size_t>(cand[c0 + c]) * d;
    G(q, rows, m, d, /*ip=*/!l2, out + c0);  // ip: minus the inner product, as here
  }
}

const core::Dispatch<RerankKernel> kRerank{
    {detail::rerank_scalar, rerank_gathered<detail::gather_sse4>,
     rerank_gathered<detail::gather_avx2>, detail::rerank_avx512}};
#else
const core::Dispatch<RerankKernel> kRerank{{detail::rerank_scalar}};
#endif

constexpr size_t kProjRows = 4096;  // rows projected per batch (bounds the temporary)

// Projections a . x of rows [0, n) onto every hash direction: out is n x (L * K).
void project(const LshParams& p, const float* x, size_t n, unsigned threads, float* out) {
  project_rows(x, n, p.proj, p.n_tables * p.n_hashes, p.d, threads, out);
}

inline int32_t hash_value(const LshParams& p, size_t h, float proj) {
  if (p.family == LshFamily::kSign) return proj >= 0.0f ? 1 : 0;
  return static_cast<int32_t>(std::floor((proj + p.shift[h]) / p.width));
}

// The 32-bit hash of one table's K hash values (FNV-style fold, then the murmur3 finalizer).
inline uint32_t mix(size_t table, const int32_t* h, size_t k) {
  uint64_t key = 0x9E3779B97F4A7C15ull ^ table;
  for (size_t j = 0; j < k; ++j) key = (key ^ static_cast<uint32_t>(h[j])) * 0x100000001B3ull;
  key ^= key >> 33;
  key *= 0xFF51AFD7ED558CCDull;
  key ^= key >> 33;
  key *= 0xC4CEB9FE1A85EC53ull;
  key ^= key >> 33;
  return static_cast<uint32_t>(key >> 32);
}

struct Perturbation {
  float cost;
  uint32_t coord;
  int32_t delta;
};

// Query-directed probing of one table (Lv et al. 2007): the home bucket, then perturbation
// sets in increasing cost, each giving one more slot. `fn(slot)` is called n_probes times at
// most (fewer when the sets run out).
template <class Fn>
void probe_table(const LshParams& p, size_t t, const float* proj, uint32_t slot_bits,
                 size_t n_probes, std::vector<int32_t>& h, std::vector<Perturbation>& perts,
                 Fn&& fn) {
  const size_t k = p.n_hashes, shift = 32 - slot_bits;
  perts.clear();
  for (size_t j = 0; j < k; ++j) {
    const size_t at = t * k + j;
    h[j] = hash_value(p, at, proj[at]);
    if (p.family == LshFamily::kSign) {
      perts.push_back({proj[at] * proj[at], static_cast<uint32_t>(j), h[j] ? -1 : 1});
    } else {
      const float f = (proj[at] + p.shift[at]) / p.width - static_cast<float>(h[j]);
      perts.push_back({f * f, static_cast<uint32_t>(j), -1});
      perts.push_back({(1.0f - f) * (1.0f - f), static_cast<uint32_t>(j), 1});
    }
  }
  fn(slot_bits ? mix(t, h.data(), k) >> shift : 0u);
  if (n_probes <= 1) return;
  std::sort(perts.begin(), perts.end(), [](const Perturbation& a, const Perturbation& b) {
    return a.cost < b.cost || (a.cost == b.cost && a.coord < b.coord);
  });
  using Set = std::pair<float, std::vector<uint32_t>>;  // (total cost, sorted pert indices)
  auto cmp = [](const Set& a, const Set& b) { return a.first > b.first; };
  std::priority_queue<Set, std::vector<Set>, decltype(cmp)> heap(cmp);
  heap.push({perts[0].cost, {0}});
  size_t emitted = 1;
  while (emitted < n_probes && !heap.empty()) {
    Set top = heap.top();
    heap.pop();
    const uint32_t last = top.second.back();
    if (last + 1 < perts.size()) {
      Set shifted = top;
      shifted.second.back() = last + 1;
      shifted.first += perts[last + 1].cost - perts[last].cost;
      Set expanded = top;
      expanded.second.push_back(last + 1);
      expanded.first += perts[last + 1].cost;
      heap.push(std::move(shifted));
      heap.push(std::move(expanded));
    }
    // A set moving one coordinate both ways is not a bucket.
    bool valid = true;
    for (size_t a = 0; a < top.second.size() && valid; ++a) {
      for (size_t b = a + 1; b < top.second.size(); ++b) {
        if (perts[top.second[a]].coord == perts[top.second[b]].coord) valid = false;
      }
    }
    if (!valid) continue;
    for (uint32_t i : top.second) h[perts[i].coord] += perts[i].delta;
    fn(slot_bits ? mix(t, h.data(), k) >> shift : 0u);
    for (uint32_t i : top.second) h[perts[i].coord] -= perts[i].delta;
    ++emitted;
  }
}

}  // namespace

core::SimdLevel lsh_rerank_level() { return kRerank.chosen(); }

RerankKernel rerank_kernel() { return kRerank.get(); }

void project_rows(const float* x, size_t n, const float* dirs, size_t m, size_t d,
                  unsigned threads, float* out) {
  std::vector<float> zero(m, 0.0f);
  dense_scores(x, n, dirs, m, d, zero.data(), -1.0f, threads, out);
  for (size_t i = 0; i < n * m; ++i) out[i] = -out[i];
}

void lsh_hash(const LshParams& p, const float* x, size_t n, unsigned threads, uint32_t* out) {
  const size_t m = p.n_tables * p.n_hashes;
  std::vector<float> proj(std::min(n, kProjRows) * m);
  for (size_t i0 = 0; i0 < n; i0 += kProjRows) {
    const size_t rows = std::min(kProjRows, n - i0);
    project(p, x + i0 * p.d, rows, threads, proj.data());
    for (size_t i = 0; i < rows; ++i) {
      std::vector<int32_t> h(p.n_hashes);
      for (size_t t = 0; t < p.n_tables; ++t) {
        for (size_t j = 0; j < p.n_hashes; ++j) {
          const size_t at = t * p.n_hashes + j;
          h[j] = hash_value(p, at, proj[i * m + at]);
        }
        out[t * n + i0 + i] = mix(t, h.data(), p.n_hashes);
      }
    }
  }
}

void lsh_build(size_t n_tables, size_t n, const uint32_t* hashes, uint32_t slot_bits,
               uint32_t* offsets, uint32_t* ids) {
  if (slot_bits > 30) core::fail_value("slot_bits must be <= 30, got ", slot_bits);
  const size_t slots = size_t{1} << slot_bits, shift = 32 - slot_bits;
  for (size_t t = 0; t < n_tables; ++t) {
    uint32_t* off = offsets + t * (slots + 1);
    const uint32_t* hs = hashes + t * n;
    std::fill(off, off + slots + 1, 0u);
    for (size_t i = 0; i < n; ++i) ++off[(slot_bits ? hs[i] >> shift : 0u) + 1];
    for (size_t s = 0; s < slots; ++s) off[s + 1] += off[s];
    std::vector<uint32_t> fill(off, off + slots);
    for (size_t i = 0; i < n; ++i) {
      ids[t * n + fill[slot_bits ? hs[i] >> shift : 0u]++] = static_cast<uint32_t>(i);
    }
  }
}

void lsh_search(const LshParams& p, uint32_t slot_bits, const uint32_t* offsets,
                const uint32_t* ids, const float* data, size_t n, const float* q, size_t nq,
                size_t k, size_t n_probes, size_t n_rerank, bool l2, unsigned threads,
                float* dist, int64_t* out_ids, uint32_t* n_candidates, uint32_t* n_reranked) {
  if (k == 0) core::fail_value("k must be >= 1");
  if (n_probes == 0) core::fail_value("n_probes must be >= 1");
  const size_t m = p.n_tables * p.n_hashes, slots = size_t{1} << slot_bits;
  std::vector<float> proj(nq * m);
  project(p, q, nq, threads, proj.data());
  const RerankKernel rerank = rerank_kernel();
  const float pad = l2 ? std::numeric_limits<float>::infinity()
                       : -std::numeric_limits<float>::infinity();
  // One worker per thread, each with its own visited stamps, pulling queries one at a time.
  const size_t workers = std::min<size_t>(core::resolve_threads(threads), std::max<size_t>(nq, 1));
  std::atomic<size_t> next{0};
  core::parallel_for(workers, threads, [&](size_t) {
    std::vector<uint32_t> stamp(n, 0), cand, votes(n), by_votes;
    std::vector<float> score;
    std::vector<std::pair<float, uint32_t>> ranked;
    std::vector<int32_t> h(p.n_hashes);
    std::vector<Perturbation> perts;
    uint32_t epoch = 0;
    for (size_t i; (i = next.fetch_add(1)) < nq;) {
      if (++epoch == 0) {  // wrapped: clear the stamps once every 2^32 queries
        std::fill(stamp.begin(), stamp.end(), 0u);
        epoch = 1;
      }
      cand.clear();
      for (size_t t = 0; t < p.n_tables; ++t) {
        const uint32_t* off = offsets + t * (slots + 1);
        const uint32_t* tid = ids + t * n;
        probe_table(p, t, proj.data() + i * m, slot_bits, n_probes, h, perts, [&](uint32_t s) {
          for (uint32_t e = off[s]; e < off[s + 1]; ++e) {
            const uint32_t row = tid[e];
            if (stamp[row] != epoch) {
              stamp[row] = epoch;
              votes[row] = 1;
              cand.push_back(row);
            } else {
              ++votes[row];
            }
          }
        });
      }
      n_candidates[i] = static_cast<uint32_t>(cand.size());
      if (n_rerank > 0 && cand.size() > n_rerank) {
        // Keep the n_rerank most-voted candidates, ties in the order found (a counting sort).
        uint32_t top = 0;
        for (uint32_t row : cand) top = std::max(top, votes[row]);
        by_votes.assign(top + 2, 0);
        for (uint32_t row : cand) ++by_votes[top - votes[row] + 1];
        for (size_t v = 1; v < by_votes.size(); ++v) by_votes[v] += by_votes[v - 1];
        std::vector<uint32_t> sorted(cand.size());
        for (uint32_t row : cand) sorted[by_votes[top - votes[row]]++] = row;
        sorted.resize(n_rerank);
        cand.swap(sorted);
      }
      score.resize(cand.size());
      rerank(q + i * p.d, data, p.d, cand.data(), cand.size(), l2, score.data());
      ranked.resize(cand.size());
      for (size_t c = 0; c < cand.size(); ++c) ranked[c] = {score[c], cand[c]};
      const size_t found = std::min(k, ranked.size());
      std::partial_sort(ranked.begin(), ranked.begin() + found, ranked.end());
      for (size_t e = 0; e < k; ++e) {
        dist[i * k + e] = e < found ? (l2 ? ranked[e].first : -ranked[e].first) : pad;
        out_ids[i * k + e] = e < found ? static_cast<int64_t>(ranked[e].second) : -1;
      }
      n_reranked[i] = static_cast<uint32_t>(cand.size());
    }
  });
}

}  // namespace mirkit::vectors
