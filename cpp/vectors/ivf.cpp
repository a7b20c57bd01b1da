// IVF search (ivf.hpp): coarse probe with the blocked distance engine, then one scan per
// query and probed list (ivf_scan.inl, or the ADC kernel of pq.hpp), feeding a
// (distance, position) top-k collector. The scalar list scan is the reference and the fallback.
#include "vectors/ivf.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <utility>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/parallel.hpp"
#include "vectors/distances.hpp"
#include "vectors/fastscan.hpp"
#include "vectors/ivf_scan.inl"
#include "vectors/pq.hpp"

namespace mirkit::vectors {

namespace detail {
namespace {

// The scalar "vector" of the list scan: 4 lanes in an array, plain arithmetic.
struct Scalar {
  static constexpr size_t W = 4;
  struct reg {
    float v[W];
  };
  static reg zero() { return reg{}; }
  static reg load(const float* p) {
    reg r;
    for (size_t l = 0; l < W; ++l) r.v[l] = p[l];
    return r;
  }
  static reg load_u8(const uint8_t* p) {
    reg r;
    for (size_t l = 0; l < W; ++l) r.v[l] = static_cast<float>(p[l]);
    return r;
  }
  static reg add(reg a, reg b) {
    for (size_t l = 0; l < W; ++l) a.v[l] += b.v[l];
    return a;
  }
  static reg sub(reg a, reg b) {
    for (size_t l = 0; l < W; ++l) a.v[l] -= b.v[l];
    return a;
  }
  static reg fmadd(reg a, reg b, reg c) {
    for (size_t l = 0; l < W; ++l) c.v[l] += a.v[l] * b.v[l];
    return c;
  }
  static float sum(reg a) {
    float s = 0.0f;
    for (size_t l = 0; l < W; ++l) s += a.v[l];
    return s;
  }
};

}  // namespace

void ivf_scan_scalar(const IvfScan& t) { scan_any<Scalar>(t); }
void gather_scalar(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                   float* out) {
  gather_any<Scalar>(q, rows, n, d, ip, out);
}
void ivf_scan_many_scalar(const IvfScanMany& t) { scan_many_any<Scalar>(t); }
}  // namespace detail

namespace {

using ScanKernel = void (*)(const IvfScan&);
#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<ScanKernel> kScan{
    {detail::ivf_scan_scalar, detail::ivf_scan_sse4, detail::ivf_scan_avx2,
     detail::ivf_scan_avx512}};
const core::Dispatch<GatherKernel> kGather{
    {detail::gather_scalar, detail::gather_sse4, detail::gather_avx2,
     detail::gather_avx512}};
#else
const core::Dispatch<ScanKernel> kScan{{detail::ivf_scan_scalar}};
const core::Dispatch<GatherKernel> kGather{{detail::gather_scalar}};
#endif
using ScanManyKernel = void (*)(const IvfScanMany&);
#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<ScanManyKernel> kScanMany{{detail::ivf_scan_many_scalar,
                                                detail::ivf_scan_many_sse4,
                                                detail::ivf_scan_many_avx2,
                                                detail::ivf_scan_many_avx512}};
#else
const core::Dispatch<ScanManyKernel> kScanMany{{detail::ivf_scan_many_scalar}};
#endif

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kNoPos = std::numeric_limits<uint32_t>::max();

// The k best (score, position) pairs pushed, by score then position. Up to kHeapMaxK a k-entry
// max-heap whose root, the worst kept, is the threshold; above it a reservoir of up to 2k pairs
// under a threshold, cut back to the best k (nth_element) when full, as FAISS's
// ReservoirHandler: a heap of a hundred entries spends most of a scan moving entries. Both
// keep exactly the same pairs.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k), reservoir_(k > kHeapMaxK) {
    if (reservoir_) {
      buf_.reserve(2 * k);
    } else {
      val_.assign(k, kInf);
      pos_.assign(k, kNoPos);
    }
  }
  // A pair enters only below this score, or at it with a lower position.
  float threshold() const { return reservoir_ ? thr_.first : val_[0]; }
  void push(float v, uint32_t p) {
    if (!reservoir_) {
      if (v < val_[0] || (v == val_[0] && p < pos_[0])) {
        detail::heap_replace_top(val_.data(), pos_.data(), k_, v, p);
      }
      return;
    }
    if (!(std::make_pair(v, p) < thr_)) return;
    buf_.emplace_back(v, p);
    if (buf_.size() == 2 * k_) {
      std::nth_element(buf_.begin(), buf_.begin() + (k_ - 1), buf_.end());
      thr_ = buf_[k_ - 1];
      buf_.resize(k_);
    }
  }
  // The kept pairs, best first.
  std::vector<std::pair<float, uint32_t>> sorted() const {
    std::vector<std::pair<float, uint32_t>> out;
    if (reservoir_) {
      out = buf_;
      std::sort(out.begin(), out.end());
      if (out.size() > k_) out.resize(k_);
      return out;
    }
    for (size_t i = 0; i < k_; ++i) {
      if (pos_[i] != kNoPos) out.emplace_back(val_[i], pos_[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static constexpr size_t kHeapMaxK = 20;
  size_t k_;
  bool reservoir_;
  std::vector<float> val_;  // the heap
  std::vector<uint32_t> pos_;
  std::vector<std::pair<float, uint32_t>> buf_;  // the reservoir
  std::pair<float, uint32_t> thr_{kInf, kNoPos};
};

// Coarse probe: the n_probe (<= n_lists) centroids nearest to every query (by the index's
// metric), nq x n_probe lists and scores; the score is |c|^2 - 2 <q, c> (L2, |q|^2 left out)
// or -<q, c>.
void coarse_probe(const IvfData& ix, const float* q, size_t nq, size_t n_probe,
                  unsigned threads, std::vector<uint32_t>& probe, std::vector<float>& coarse) {
  probe.assign(nq * n_probe, 0);
  coarse.assign(nq * n_probe, 0.0f);
  std::vector<float> bias(ix.n_lists, 0.0f);
  if (!ix.ip) squared_norms(ix.centroids, ix.n_lists, ix.d, bias.data(), threads);
  if (n_probe > 0) {
    top_k(q, nq, ix.centroids, ix.n_lists, ix.d, bias.data(), ix.ip ? -1.0f : -2.0f, n_probe,
          threads, probe.data(), coarse.data());
  }
}

// Pushes the vectors of a fast-scanned list (uint16 sums) with the distance base + sum * inv,
// as pushing every one would, but dequantizes only the sums that can enter the heap: the
// distance does not fall as the sum grows (inv >= 0), so those are the sums up to the largest
// whose distance is at most the threshold, found again whenever the threshold moves (from
// (top - base) / inv, then checked with the distance itself, a step or two). A block's sums
// are compared with the limit at once (fastscan_below, as FAISS's result handlers compare a
// block with the threshold) and only the vectors of its set bits visited, each tested again
// as the limit may have fallen since.
void push_fastscan(TopK& heap, const uint16_t* sums, size_t n, uint32_t b0, const uint8_t* ok,
                   float base, float inv, FastScanBelowKernel below) {
  const auto dist = [base, inv](int32_t s) { return base + static_cast<float>(s) * inv; };
  const auto limit_of = [&](float top) -> int32_t {
    if (dist(65535) <= top) return 65535;
    if (!(dist(0) <= top)) return -1;
    // Here inv > 0 (a constant distance passes one test above) and top is finite.
    int32_t s = static_cast<int32_t>(std::min(65534.0f, std::max(0.0f, (top - base) / inv)));
    while (dist(s + 1) <= top) ++s;    // stops at 65534: dist(65535) > top
    while (s > 0 && !(dist(s) <= top)) --s;  // dist(0) <= top
    return s;
  };
  int32_t limit = limit_of(heap.threshold());
  // The sums buffer holds whole blocks: lanes past n are masked off.
  for (size_t i0 = 0; i0 < n && limit >= 0; i0 += kFastScanBlock) {
    uint32_t mask = below(sums + i0, static_cast<uint16_t>(limit));
    if (n - i0 < kFastScanBlock) mask &= (1u << (n - i0)) - 1;
    for (; mask != 0; mask &= mask - 1) {
      const size_t i = i0 + static_cast<size_t>(__builtin_ctz(mask));
      if (static_cast<int32_t>(sums[i]) > limit || (ok && !ok[i])) continue;
      const float top = heap.threshold();
      heap.push(dist(sums[i]), b0 + static_cast<uint32_t>(i));
      if (heap.threshold() != top) limit = limit_of(heap.threshold());
    }
  }
}

// The k results of one query from its kept candidates (best first), re-ranked by exact
// distances to the raw vectors when refine > 0, padded with -1 / inf. The re-ranking scores
// the candidates four at a time by the gathered-rows kernel (the graph search's, hnsw.hpp),
// the rows of the groups ahead prefetched; the count is padded to a multiple of four with the
// last row, so every candidate's distance comes from the same four-row arithmetic
// (row_scores4, ivf_scan.inl) whatever its place among the candidates.
void finish_query(const TopK& heap, const IvfData& ix, const float* x, size_t k, size_t refine,
                  GatherKernel gather, float* dist, int64_t* pos) {
  auto best = heap.sorted();
  if (refine > 0 && ix.raw != nullptr && !best.empty()) {
    const size_t nc = best.size(), padded = (nc + 3) / 4 * 4;
    std::vector<const float*> rows(padded);
    std::vector<float> exact(padded);
    for (size_t c = 0; c < padded; ++c) {
      rows[c] = ix.raw + static_cast<size_t>(best[std::min(c, nc - 1)].second) * ix.d;
    }
    // The candidates' rows are scattered over the raw vectors (mostly cache misses): every
    // line of the rows kAhead groups of four ahead is prefetched while a group is scored.
    constexpr size_t kAhead = 2;
    const size_t row_bytes = ix.d * sizeof(float);
    const auto fetch = [&](size_t c0) {
      for (size_t c = c0; c < std::min(c0 + 4, nc); ++c) {
        const char* p = reinterpret_cast<const char*>(rows[c]);
        for (size_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
      }
    };
    for (size_t g = 0; g < kAhead; ++g) fetch(4 * g);
    for (size_t c0 = 0; c0 < padded; c0 += 4) {
      fetch(c0 + 4 * kAhead);
      gather(x, rows.data() + c0, 4, ix.d, ix.ip, exact.data() + c0);
    }
    for (size_t c = 0; c < nc; ++c) best[c].first = exact[c];
    std::sort(best.begin(), best.end());
  }
  const float pad = ix.ip ? -kInf : kInf;
  for (size_t r = 0; r < k; ++r) {
    const bool hit = r < best.size();
    dist[r] = hit ? (ix.ip ? -best[r].first : best[r].first) : pad;
    pos[r] = hit ? static_cast<int64_t>(best[r].second) : -1;
  }
}

// ivf_search for 4-bit fast-scan codes. The queries go in chunks (one thread each); within a
// chunk the (query, probed list) pairs are grouped by list (as ivf_assign groups them) and
// every list is scanned once per group of up to kGroup of its queries by the many-query kernel
// (fastscan.hpp), each query keeping its own heap. Every pair gets the table, quantization,
// sums and distances a query alone gets, and the heaps keep the k least (distance, position)
// pairs whatever the order they come in, so the results are those of one query at a time.
void search_fastscan(const IvfData& ix, const float* q, size_t nq, size_t k, size_t n_probe,
                     size_t refine, const uint8_t* allow, unsigned threads,
                     const std::vector<uint32_t>& probe, const std::vector<float>& coarse,
                     float* dist, int64_t* pos) {
  const size_t kept = std::max(k, refine), m = ix.m, mk = m * ix.ksub, dsub = ix.d / m;
  const std::vector<float> ct = pq_transpose(ix.pq_centroids, m, ix.ksub, dsub);
  const GatherKernel gather = kGather.get();
  const FastScanManyKernel fast = fastscan_many_kernel();
  const FastScanBelowKernel below = fastscan_below_kernel();
  size_t longest_blocks = 0;
  for (size_t l = 0; l < ix.n_lists; ++l) {
    longest_blocks =
        std::max<size_t>(longest_blocks, ix.fs_offsets[l + 1] - ix.fs_offsets[l]);
  }
  // A chunk of queries shares its lists' scans: larger chunks share more (about chunk *
  // n_probe / n_lists queries a list), at chunk x (m x 16) floats of tables.
  constexpr size_t kChunk = 256, kGroup = 16;
  const size_t workers = core::resolve_threads(threads);
  const size_t chunk = std::max<size_t>(1, std::min(kChunk, (nq + workers - 1) / workers));
  core::parallel_for((nq + chunk - 1) / chunk, threads, [&](size_t task) {
    const size_t q0 = task * chunk, cn = std::min(chunk, nq - q0);
    std::vector<float> qtable(cn * mk), q_norm(cn, 0.0f), table(mk);
    // With the inner product every list has the same table: quantized once per query.
    std::vector<uint8_t> ip_luts(ix.ip ? cn * mk : 0), luts(kGroup * mk);
    std::vector<QuantizedLut> ip_q(ix.ip ? cn : 0);
    std::vector<TopK> heaps;
    heaps.reserve(cn);
    for (size_t i = 0; i < cn; ++i) {
      const float* x = q + (q0 + i) * ix.d;
      heaps.emplace_back(kept);
      // -<x_j, r> for every subspace and sub-centroid: with the inner product the list's
      // score adds -<x, c> (the coarse score); with L2 the table is pq_term + 2 * this.
      pq_tables_t(x, ct.data(), m, ix.ksub, dsub, true, qtable.data() + i * mk);
      if (ix.ip) {
        ip_q[i] = quantize_lut(qtable.data() + i * mk, m, ip_luts.data() + i * mk);
      } else {
        for (size_t e = 0; e < ix.d; ++e) q_norm[i] += x[e] * x[e];
      }
    }
    // The chunk's (query, probe) pairs by key (a counting sort), as qi * n_probe + p. The key
    // is the list for every query's nearest list, n_lists + the list for its other lists: the
    // nearest lists go first, so each heap gets a tight threshold before the far lists come
    // and their sums mostly fail it (list-id order alone pushed many more vectors); a list
    // scanned in both rounds is read twice, not n_probe times.
    const size_t n_keys = 2 * ix.n_lists;
    std::vector<size_t> start(n_keys + 1, 0);
    const auto key_of = [&](size_t a) -> size_t {
      const uint32_t l = probe[q0 * n_probe + a];
      return l == kNoPos ? n_keys : (a % n_probe == 0 ? 0 : ix.n_lists) + l;
    };
    for (size_t a = 0; a < cn * n_probe; ++a) {
      const size_t key = key_of(a);
      if (key < n_keys) ++start[key + 1];
    }
    for (size_t key = 0; key < n_keys; ++key) start[key + 1] += start[key];
    std::vector<uint32_t> members(start[n_keys]);
    {
      std::vector<size_t> fill(start.begin(), start.end() - 1);
      for (size_t a = 0; a < cn * n_probe; ++a) {
        const size_t key = key_of(a);
        if (key < n_keys) members[fill[key]++] = static_cast<uint32_t>(a);
      }
    }
    std::vector<uint16_t> sums(kGroup * longest_blocks * kFastScanBlock);
    const uint8_t* lut_of[kGroup];
    uint16_t* sums_of[kGroup];
    float base[kGroup], inv[kGroup];
    for (size_t key = 0; key < n_keys; ++key) {
      const size_t l = key % ix.n_lists;
      const size_t b0 = static_cast<size_t>(ix.offsets[l]);
      const size_t n = static_cast<size_t>(ix.offsets[l + 1]) - b0;
      if (n == 0) continue;
      const size_t f0 = static_cast<size_t>(ix.fs_offsets[l]);
      const size_t nb = static_cast<size_t>(ix.fs_offsets[l + 1]) - f0;
      const uint8_t* ok = allow ? allow + b0 : nullptr;
      for (size_t s = start[key]; s < start[key + 1]; s += kGroup) {
        const size_t g = std::min(kGroup, start[key + 1] - s);
        for (size_t j = 0; j < g; ++j) {
          const size_t a = members[s + j], i = a / n_probe;
          float b_bias = coarse[q0 * n_probe + a];
          QuantizedLut qt;
          if (ix.ip) {
            qt = ip_q[i];
            lut_of[j] = ip_luts.data() + i * mk;
          } else {
            const float* term = ix.pq_term + l * mk;
            const float* qt_i = qtable.data() + i * mk;
            for (size_t e = 0; e < mk; ++e) table[e] = term[e] + 2.0f * qt_i[e];
            b_bias += q_norm[i];  // |x - c|^2
            qt = quantize_lut(table.data(), m, luts.data() + j * mk);
            lut_of[j] = luts.data() + j * mk;
          }
          base[j] = b_bias + qt.sum_min;
          inv[j] = qt.inv_scale;
          sums_of[j] = sums.data() + j * nb * kFastScanBlock;
        }
        // uint8 tables, uint16 sums; the distance is the dequantized sum.
        fast(lut_of, g, m, ix.fs_blocks + f0 * m * 16, nb, sums_of);
        for (size_t j = 0; j < g; ++j) {
          push_fastscan(heaps[members[s + j] / n_probe], sums_of[j], n,
                        static_cast<uint32_t>(b0), ok, base[j], inv[j], below);
        }
      }
    }
    for (size_t i = 0; i < cn; ++i) {
      finish_query(heaps[i], ix, q + (q0 + i) * ix.d, k, refine, gather, dist + (q0 + i) * k,
                   pos + (q0 + i) * k);
    }
  });
}

}  // namespace

GatherKernel gather_kernel() { return kGather.get(); }
core::SimdLevel gather_level() { return kGather.chosen(); }

void ivf_search(const IvfData& ix, const float* q, size_t nq, size_t k, size_t n_probe,
                size_t refine, const uint8_t* allow, unsigned threads, float* dist,
                int64_t* pos) {
  if (nq == 0 || k == 0) return;
  n_probe = std::min(n_probe, ix.n_lists);
  std::vector<uint32_t> probe;
  std::vector<float> coarse;
  coarse_probe(ix, q, nq, n_probe, threads, probe, coarse);
  if (ix.codes_kind == IvfCodes::kPq4) {
    search_fastscan(ix, q, nq, k, n_probe, refine, allow, threads, probe, coarse, dist, pos);
    return;
  }
  const bool pq = ix.codes_kind == IvfCodes::kPq;
  const size_t kept = std::max(k, refine);
  const size_t dsub = pq ? ix.d / ix.m : 0, mk = ix.m * ix.ksub;
  const std::vector<float> ct =
      pq ? pq_transpose(ix.pq_centroids, ix.m, ix.ksub, dsub) : std::vector<float>();
  const AdcKernel adc = adc_kernel();
  const ScanKernel scan = kScan.get();
  const GatherKernel gather = kGather.get();
  size_t longest = 0;
  for (size_t l = 0; l < ix.n_lists; ++l) {
    longest = std::max<size_t>(longest, ix.offsets[l + 1] - ix.offsets[l]);
  }
  constexpr size_t kQueriesPerTask = 4;
  core::parallel_for((nq + kQueriesPerTask - 1) / kQueriesPerTask, threads, [&](size_t task) {
    std::vector<float> buf(longest), qtable(mk), table(mk);
    for (size_t qi = task * kQueriesPerTask; qi < std::min(nq, (task + 1) * kQueriesPerTask);
         ++qi) {
      const float* x = q + qi * ix.d;
      TopK heap(kept);
      float q_norm = 0.0f;
      if (pq) {
        // -<x_j, r> for every subspace and sub-centroid: with the inner product the list's
        // score adds -<x, c> (the coarse score); with L2 the table is pq_term + 2 * this.
        pq_tables_t(x, ct.data(), ix.m, ix.ksub, dsub, true, qtable.data());
        if (!ix.ip) {
          for (size_t e = 0; e < ix.d; ++e) q_norm += x[e] * x[e];
        }
      }
      for (size_t p = 0; p < n_probe; ++p) {
        const uint32_t l = probe[qi * n_probe + p];
        if (l == kNoPos) continue;
        const size_t b0 = static_cast<size_t>(ix.offsets[l]);
        const size_t n = static_cast<size_t>(ix.offsets[l + 1]) - b0;
        const uint8_t* ok = allow ? allow + b0 : nullptr;
        if (pq) {
          const float* t = qtable.data();
          float b_bias = coarse[qi * n_probe + p];
          if (!ix.ip) {
            const float* term = ix.pq_term + static_cast<size_t>(l) * mk;
            for (size_t i = 0; i < mk; ++i) table[i] = term[i] + 2.0f * qtable[i];
            t = table.data();
            b_bias += q_norm;  // |x - c|^2
          }
          adc(t, ix.m, ix.ksub, ix.codes + b0 * ix.m, n, b_bias, buf.data());
        } else {
          const bool sq = ix.codes_kind == IvfCodes::kSq8;
          scan(IvfScan{x, sq ? nullptr : ix.vectors + b0 * ix.d,
                       sq ? ix.codes + b0 * ix.d : nullptr, ix.sq_lo, ix.sq_step, n, ix.d, ix.ip,
                       ok, buf.data()});
        }
        for (size_t i = 0; i < n; ++i) {
          if (ok && !ok[i]) continue;
          heap.push(buf[i], static_cast<uint32_t>(b0 + i));
        }
      }
      finish_query(heap, ix, x, k, refine, gather, dist + qi * k, pos + qi * k);
    }
  });
}

void ivf_assign(const IvfData& ix, const float* q, size_t nq, size_t n_probe, unsigned threads,
                float* dist, int64_t* pos) {
  if (nq == 0) return;
  n_probe = std::min(n_probe, ix.n_lists);
  std::vector<uint32_t> probe;
  std::vector<float> coarse;
  coarse_probe(ix, q, nq, n_probe, threads, probe, coarse);
  // The queries of every list, ascending (a counting sort of the probes).
  std::vector<size_t> start(ix.n_lists + 1, 0);
  for (const uint32_t l : probe) {
    if (l != kNoPos) ++start[l + 1];
  }
  for (size_t l = 0; l < ix.n_lists; ++l) start[l + 1] += start[l];
  std::vector<uint32_t> members(start[ix.n_lists]);
  {
    std::vector<size_t> fill(start.begin(), start.end() - 1);
    for (size_t qi = 0; qi < nq; ++qi) {
      for (size_t p = 0; p < n_probe; ++p) {
        const uint32_t l = probe[qi * n_probe + p];
        if (l != kNoPos) members[fill[l]++] = static_cast<uint32_t>(qi);
      }
    }
  }
  // Every worker keeps the best (score, position) of every query over the lists it scanned;
  // the least pair is the same whichever lists each worker took, so the merge is exact.
  const unsigned workers =
      static_cast<unsigned>(std::min<size_t>(core::resolve_threads(threads), ix.n_lists));
  std::vector<std::vector<float>> best_val(workers);
  std::vector<std::vector<uint32_t>> best_pos(workers);
  const ScanManyKernel scan_many = kScanMany.get();
  constexpr size_t kGroup = 64;  // queries scored per kernel call: a kGroup x list buffer
  std::atomic<size_t> next_list{0};
  core::parallel_for(workers, workers, [&](size_t w) {
    std::vector<float>& bv = best_val[w];
    std::vector<uint32_t>& bp = best_pos[w];
    bv.assign(nq, kInf);
    bp.assign(nq, kNoPos);
    std::vector<float> qbuf(kGroup * ix.d), out;
    for (size_t l; (l = next_list.fetch_add(1)) < ix.n_lists;) {
      const size_t b0 = static_cast<size_t>(ix.offsets[l]);
      const size_t n = static_cast<size_t>(ix.offsets[l + 1]) - b0;
      if (n == 0) continue;
      out.resize(kGroup * n);
      for (size_t s = start[l]; s < start[l + 1]; s += kGroup) {
        const size_t g = std::min(kGroup, start[l + 1] - s);
        for (size_t j = 0; j < g; ++j) {
          std::copy_n(q + static_cast<size_t>(members[s + j]) * ix.d, ix.d,
                      qbuf.data() + j * ix.d);
        }
        scan_many(
            IvfScanMany{qbuf.data(), g, ix.vectors + b0 * ix.d, n, ix.d, ix.ip, out.data()});
        for (size_t j = 0; j < g; ++j) {
          const uint32_t qi = members[s + j];
          const float* o = out.data() + j * n;
          float v = bv[qi];
          uint32_t p = bp[qi];
          for (size_t i = 0; i < n; ++i) {
            const uint32_t at = static_cast<uint32_t>(b0 + i);
            if (o[i] < v || (o[i] == v && at < p)) {
              v = o[i];
              p = at;
            }
          }
          bv[qi] = v;
          bp[qi] = p;
        }
      }
    }
  });
  const float pad = ix.ip ? -kInf : kInf;
  for (size_t qi = 0; qi < nq; ++qi) {
    float v = kInf;
    uint32_t p = kNoPos;
    for (unsigned w = 0; w < workers; ++w) {
      const float wv = best_val[w][qi];
      const uint32_t wp = best_pos[w][qi];
      if (wp != kNoPos && (p == kNoPos || wv < v || (wv == v && wp < p))) {
        v = wv;
        p = wp;
      }
    }
    dist[qi] = p == kNoPos ? pad : (ix.ip ? -v : v);
    pos[qi] = p == kNoPos ? -1 : static_cast<int64_t>(p);
  }
}

}  // namespace mirkit::vectors
