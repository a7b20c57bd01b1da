// The list scans of ivf.cpp, written once over a small vector interface V and compiled per
// instruction set (ivf.cpp: scalar, ivf_avx2.cpp, ivf_avx512.cpp with their flags). Everything
// sits in an anonymous namespace, so the copies compiled with different flags never meet at
// link time.
//
// V provides: W (lanes), reg, zero, load (W floats), load_u8 (W bytes widened to floats),
// add, sub, mul, fmadd(a, b, c) = a * b + c, and sum (of the lanes).
#include <cstddef>
#include <cstdint>
#include <limits>

#include "vectors/ivf.hpp"

namespace mirkit::vectors::detail {
namespace {

// Squared L2 distance, or minus the inner product, of q and row x; with SQ, x is decoded on
// the fly from its bytes as lo + code * step. Two accumulators per row hide the add latency.
template <class V, bool IP, bool SQ>
float row_score(const float* q, const float* x, const uint8_t* code, const float* lo,
                const float* step, size_t d) {
  using reg = typename V::reg;
  constexpr size_t W = V::W;
  auto value = [&](size_t e) {
    if constexpr (SQ) {
      return V::fmadd(V::load_u8(code + e), V::load(step + e), V::load(lo + e));
    } else {
      return V::load(x + e);
    }
  };
  auto step_in = [&](reg acc, size_t e) {
    const reg v = value(e), a = V::load(q + e);
    if constexpr (IP) {
      return V::fmadd(a, v, acc);
    } else {
      const reg t = V::sub(a, v);
      return V::fmadd(t, t, acc);
    }
  };
  reg acc0 = V::zero(), acc1 = V::zero();
  size_t j = 0;
  for (; j + 2 * W <= d; j += 2 * W) {
    acc0 = step_in(acc0, j);
    acc1 = step_in(acc1, j + W);
  }
  if (j + W <= d) {
    acc0 = step_in(acc0, j);
    j += W;
  }
  float s = V::sum(V::add(acc0, acc1));
  for (; j < d; ++j) {  // tail dimensions
    const float v = SQ ? lo[j] + static_cast<float>(code[j]) * step[j] : x[j];
    s += IP ? q[j] * v : (q[j] - v) * (q[j] - v);
  }
  return IP ? -s : s;
}

// Four rows of float32 vectors at once, one accumulator each (FAISS's batch-of-4 idea): four
// independent load streams keep more cache misses in flight than one row at a time. The rows
// are given by pointer: consecutive in a list scan, scattered over memory in a graph search.
template <class V, bool IP>
void row_scores4(const float* q, const float* const* x, size_t d, float* out) {
  using reg = typename V::reg;
  constexpr size_t W = V::W;
  reg acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
  size_t j = 0;
  for (; j + W <= d; j += W) {
    const reg a = V::load(q + j);
    for (int r = 0; r < 4; ++r) {
      const reg v = V::load(x[r] + j);
      if constexpr (IP) {
        acc[r] = V::fmadd(a, v, acc[r]);
      } else {
        const reg t = V::sub(a, v);
        acc[r] = V::fmadd(t, t, acc[r]);
      }
    }
  }
  for (int r = 0; r < 4; ++r) {
    float s = V::sum(acc[r]);
    for (size_t e = j; e < d; ++e) {  // tail dimensions
      const float v = x[r][e];
      s += IP ? q[e] * v : (q[e] - v) * (q[e] - v);
    }
    out[r] = IP ? -s : s;
  }
}

template <class V, bool IP, bool SQ>
void scan(const IvfScan& t) {
  size_t i = 0;
  if constexpr (!SQ) {
    if (t.allow == nullptr) {
      for (; i + 4 <= t.n; i += 4) {
        const float* const x[4] = {t.rows + i * t.d, t.rows + (i + 1) * t.d,
                                   t.rows + (i + 2) * t.d, t.rows + (i + 3) * t.d};
        row_scores4<V, IP>(t.q, x, t.d, t.out + i);
      }
    }
  }
  for (; i < t.n; ++i) {
    if (t.allow && !t.allow[i]) {
      t.out[i] = std::numeric_limits<float>::infinity();
      continue;
    }
    t.out[i] = row_score<V, IP, SQ>(t.q, SQ ? nullptr : t.rows + i * t.d,
                                    SQ ? t.codes + i * t.d : nullptr, t.lo, t.step, t.d);
  }
}

// Scores of q against n rows given by pointer (the neighbours of a graph node), four at a time.
template <class V, bool IP>
void gather(const float* q, const float* const* rows, size_t n, size_t d, float* out) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) row_scores4<V, IP>(q, rows + i, d, out + i);
  for (; i < n; ++i) out[i] = row_score<V, IP, false>(q, rows[i], nullptr, nullptr, nullptr, d);
}

template <class V>
void gather_any(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                float* out) {
  ip ? gather<V, true>(q, rows, n, d, out) : gather<V, false>(q, rows, n, d, out);
}

// Many queries against one list of flat float32 rows (IvfScanMany): out[g * n + i] is the
// score of query g and row i, bit for bit the value scan() gives that query alone (rows in
// blocks of four from the list start by row_scores4's arithmetic, the remaining rows by
// row_score's), but G queries share each load of four rows: G x 4 accumulators (G = 4 with
// 32 vector registers, AVX-512; 2 otherwise).
template <class V, bool IP, size_t G>
void scan_tile(const float* q, const float* x, size_t d, float* out, size_t n) {
  using reg = typename V::reg;
  constexpr size_t W = V::W;
  reg acc[G][4];
  for (size_t g = 0; g < G; ++g) {
    for (int r = 0; r < 4; ++r) acc[g][r] = V::zero();
  }
  size_t j = 0;
  for (; j + W <= d; j += W) {
    reg a[G];
    for (size_t g = 0; g < G; ++g) a[g] = V::load(q + g * d + j);
    for (int r = 0; r < 4; ++r) {
      const reg v = V::load(x + r * d + j);
      for (size_t g = 0; g < G; ++g) {
        if constexpr (IP) {
          acc[g][r] = V::fmadd(a[g], v, acc[g][r]);
        } else {
          const reg t = V::sub(a[g], v);
          acc[g][r] = V::fmadd(t, t, acc[g][r]);
        }
      }
    }
  }
  for (size_t g = 0; g < G; ++g) {
    const float* qg = q + g * d;
    for (int r = 0; r < 4; ++r) {
      float s = V::sum(acc[g][r]);
      for (size_t e = j; e < d; ++e) {  // tail dimensions, as row_scores4
        const float v = x[r * d + e];
        s += IP ? qg[e] * v : (qg[e] - v) * (qg[e] - v);
      }
      out[g * n + r] = IP ? -s : s;
    }
  }
}

template <class V, bool IP>
void scan_many(const IvfScanMany& t) {
  constexpr size_t G = V::W >= 16 ? 4 : 2;
  const size_t d = t.d, blocks = t.n / 4 * 4;
  size_t g = 0;
  for (; g + G <= t.nq; g += G) {
    for (size_t i = 0; i < blocks; i += 4) {
      scan_tile<V, IP, G>(t.q + g * d, t.rows + i * d, d, t.out + g * t.n + i, t.n);
    }
  }
  for (; g < t.nq; ++g) {  // the last queries, one at a time
    for (size_t i = 0; i < blocks; i += 4) {
      const float* const x[4] = {t.rows + i * d, t.rows + (i + 1) * d, t.rows + (i + 2) * d,
                                 t.rows + (i + 3) * d};
      row_scores4<V, IP>(t.q + g * d, x, d, t.out + g * t.n + i);
    }
  }
  for (g = 0; g < t.nq; ++g) {  // the rows after the last block of four
    for (size_t i = blocks; i < t.n; ++i) {
      t.out[g * t.n + i] =
          row_score<V, IP, false>(t.q + g * d, t.rows + i * d, nullptr, nullptr, nullptr, d);
    }
  }
}

template <class V>
void scan_many_any(const IvfScanMany& t) {
  t.ip ? scan_many<V, true>(t) : scan_many<V, false>(t);
}

template <class V>
void scan_any(const IvfScan& t) {
  const bool sq = t.codes != nullptr;
  if (t.ip) {
    sq ? scan<V, true, true>(t) : scan<V, true, false>(t);
  } else {
    sq ? scan<V, false, true>(t) : scan<V, false, false>(t);
  }
}

}  // namespace
}  // namespace mirkit::vectors::detail
