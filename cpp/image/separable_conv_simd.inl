// The SIMD vertical and horizontal passes of sep_filter, written once over a vector traits type
// and included by separable_conv_sse4.cpp, _avx2.cpp and _avx512.cpp, each of which defines
// `struct Vec` (register type Reg of kLanes floats, kColumnUnroll registers per row in the
// vertical pass; set1, load from float/uint8/uint16 with conversion, load_partial, store,
// store_partial, fmadd, add, sub) in its level's namespace before including this file.
//
// The vertical pass computes kColumnRows output rows at once (register blocking), loading each
// source row once for all of them, and folds the pairs of a symmetric kernel as well (sliding
// windows of source rows, column_rows_folded); the horizontal pass, whose loads hit L1, folds
// the pairs only. Both keep several independent accumulators: a kernel of n taps is a chain of
// dependent FMAs per register, and only parallel chains fill the FMA pipes.

namespace {

constexpr int kUnroll = 4;  // registers per step of the horizontal pass

// acc[u] += sum over the taps of taps[i] * load(i, u), folding the pairs of a symmetric kernel.
template <int kU, Symmetry kSymmetry, class Load>
inline void accumulate(int n, const float* taps, const Load& load, Vec::Reg* acc) {
  if constexpr (kSymmetry == Symmetry::kNone) {
    for (int i = 0; i < n; ++i) {
      const Vec::Reg t = Vec::set1(taps[i]);
      for (int u = 0; u < kU; ++u) acc[u] = Vec::fmadd(t, load(i, u), acc[u]);
    }
  } else {
    const int half = n / 2;
    for (int i = 0; i < half; ++i) {
      const Vec::Reg t = Vec::set1(taps[i]);
      for (int u = 0; u < kU; ++u) {
        const Vec::Reg a = load(i, u), b = load(n - 1 - i, u);
        acc[u] = Vec::fmadd(t, kSymmetry == Symmetry::kEven ? Vec::add(a, b) : Vec::sub(a, b),
                            acc[u]);
      }
    }
    if (n % 2) {
      const Vec::Reg t = Vec::set1(taps[half]);
      for (int u = 0; u < kU; ++u) acc[u] = Vec::fmadd(t, load(half, u), acc[u]);
    }
  }
}

// Runs the loop body fill(symmetry_tag) with the symmetry as a compile-time constant, so the
// inner loops carry no branch on it.
template <class Body>
inline void with_symmetry(Symmetry symmetry, const Body& body) {
  switch (symmetry) {
    case Symmetry::kEven:
      return body(std::integral_constant<Symmetry, Symmetry::kEven>{});
    case Symmetry::kOdd:
      return body(std::integral_constant<Symmetry, Symmetry::kOdd>{});
    default:
      return body(std::integral_constant<Symmetry, Symmetry::kNone>{});
  }
}

// acc[r][u] = bias[r] + sum_i taps[i] * load(r + i, u) for kR output rows at once: each source
// row is loaded once and feeds every output row under it, so the vertical pass reads about
// n / kR vectors per output vector instead of n (the n source rows stream from L2 at best).
template <int kR, int kU, class Load>
inline void column_rows(int n, const float* taps, const float* bias, const Load& load,
                        Vec::Reg (&acc)[kR][kU]) {
  for (int r = 0; r < kR; ++r)
    for (int u = 0; u < kU; ++u) acc[r][u] = Vec::set1(bias[r]);
  for (int s = 0; s < n + kR - 1; ++s) {
    Vec::Reg v[kU];
    for (int u = 0; u < kU; ++u) v[u] = load(s, u);
    const bool all_rows = s >= kR - 1 && s < n;  // source row s is under every output row
    for (int r = 0; r < kR; ++r) {
      if (!all_rows && (s - r < 0 || s - r >= n)) continue;
      const Vec::Reg t = Vec::set1(taps[s - r]);
      for (int u = 0; u < kU; ++u) acc[r][u] = Vec::fmadd(t, v[u], acc[r][u]);
    }
  }
}

// The same kR output rows for a symmetric (kEven) or antisymmetric (kOdd) kernel of n >= 2
// taps, folded: acc[r] = bias[r] + sum_{i < n/2} taps[i] * (row[r + i] +- row[r + n - 1 - i])
// (+ taps[n/2] * row[r + n/2] when n is odd), one multiply per pair of taps. The pair i of
// output rows r = 0..kR-1 reads source rows i..i+kR-1 (lo) and n-1-i..n-2-i+kR (hi); the next
// pair shares all but one of each, so two windows of kR registers slide one row per pair and
// each step loads two source rows for kR outputs.
template <Symmetry kSymmetry, int kR, int kU, class Load>
inline void column_rows_folded(int n, const float* taps, const float* bias, const Load& load,
                               Vec::Reg (&acc)[kR][kU]) {
  static_assert(kSymmetry != Symmetry::kNone, "the general path is column_rows");
  for (int r = 0; r < kR; ++r)
    for (int u = 0; u < kU; ++u) acc[r][u] = Vec::set1(bias[r]);
  const int half = n / 2;
  Vec::Reg lo[kR][kU], hi[kR][kU];  // lo[k]: source row i + k; hi[k]: source row n - 1 - i + k
  for (int k = 0; k + 1 < kR; ++k)
    for (int u = 0; u < kU; ++u) lo[k][u] = load(k, u);
  for (int k = 1; k < kR; ++k)
    for (int u = 0; u < kU; ++u) hi[k][u] = load(n - 1 + k, u);
  for (int i = 0; i < half; ++i) {
    for (int u = 0; u < kU; ++u) {
      lo[kR - 1][u] = load(i + kR - 1, u);
      hi[0][u] = load(n - 1 - i, u);
    }
    const Vec::Reg t = Vec::set1(taps[i]);
    for (int r = 0; r < kR; ++r)
      for (int u = 0; u < kU; ++u)
        acc[r][u] = Vec::fmadd(t, kSymmetry == Symmetry::kEven ? Vec::add(lo[r][u], hi[r][u])
                                                               : Vec::sub(lo[r][u], hi[r][u]),
                               acc[r][u]);
    for (int k = 0; k + 1 < kR; ++k)
      for (int u = 0; u < kU; ++u) lo[k][u] = lo[k + 1][u];
    for (int k = kR - 1; k > 0; --k)
      for (int u = 0; u < kU; ++u) hi[k][u] = hi[k - 1][u];
  }
  if (n % 2) {  // lo now holds rows half..half+kR-2: the middle rows, but for the last output
    const Vec::Reg t = Vec::set1(taps[half]);
    for (int u = 0; u < kU; ++u) lo[kR - 1][u] = load(half + kR - 1, u);
    for (int r = 0; r < kR; ++r)
      for (int u = 0; u < kU; ++u) acc[r][u] = Vec::fmadd(t, lo[r][u], acc[r][u]);
  }
}

// Registers per row of the folded vertical pass: it holds two windows of kR source registers
// besides the kR accumulators, so half the general path's unroll (at least 1).
constexpr int kFoldUnroll = Vec::kColumnUnroll / 2 > 0 ? Vec::kColumnUnroll / 2 : 1;

// kR output rows of the vertical pass over [0, width), folded by kSymmetry unless kNone.
template <int kR, Symmetry kSymmetry, class In>
void column_block(const In* const* rows, int n, const float* taps, const float* bias,
                  float* const* dst, long width) {
  constexpr long kL = Vec::kLanes;
  constexpr int kU = kSymmetry == Symmetry::kNone ? Vec::kColumnUnroll : kFoldUnroll;
  const auto rows_of = [&](auto& acc, const auto& load) {
    if constexpr (kSymmetry == Symmetry::kNone)
      column_rows(n, taps, bias, load, acc);
    else
      column_rows_folded<kSymmetry>(n, taps, bias, load, acc);
  };
  long x = 0;
  for (; x + kU * kL <= width; x += kU * kL) {
    Vec::Reg acc[kR][kU];
    rows_of(acc, [&](int s, int u) { return Vec::load(rows[s] + x + u * kL); });
    for (int r = 0; r < kR; ++r)
      for (int u = 0; u < kU; ++u) Vec::store(dst[r] + x + u * kL, acc[r][u]);
  }
  for (; x < width; x += kL) {
    const int count = static_cast<int>(std::min(kL, width - x));
    Vec::Reg acc[kR][1];
    rows_of(acc, [&](int s, int) { return Vec::load_partial(rows[s] + x, count); });
    for (int r = 0; r < kR; ++r) Vec::store_partial(dst[r] + x, acc[r][0], count);
  }
}

}  // namespace

template <class In>
void column_pass(const In* const* rows, int n, const float* taps, Symmetry symmetry,
                 const float* bias, float* const* dst, int n_out, long width) {
  constexpr int kR = kColumnRows;
  with_symmetry(n < 2 ? Symmetry::kNone : symmetry, [&](auto sym) {
    constexpr Symmetry kSym = decltype(sym)::value;
    int y = 0;
    for (; y + kR <= n_out; y += kR)
      column_block<kR, kSym>(rows + y, n, taps, bias + y, dst + y, width);
    for (; y < n_out; ++y) column_block<1, kSym>(rows + y, n, taps, bias + y, dst + y, width);
  });
}

template void column_pass<float>(const float* const*, int, const float*, Symmetry, const float*,
                                 float* const*, int, long);
template void column_pass<uint8_t>(const uint8_t* const*, int, const float*, Symmetry,
                                   const float*, float* const*, int, long);
template void column_pass<uint16_t>(const uint16_t* const*, int, const float*, Symmetry,
                                    const float*, float* const*, int, long);

void row_pass(const float* src, long step, int n, const float* taps, Symmetry symmetry,
              float* dst, long width) {
  constexpr long kL = Vec::kLanes;
  with_symmetry(symmetry, [&](auto sym) {
    long x = 0;
    for (; x + kUnroll * kL <= width; x += kUnroll * kL) {
      Vec::Reg acc[kUnroll];
      for (auto& a : acc) a = Vec::set1(0.0f);
      const float* base = src + x;
      accumulate<kUnroll, decltype(sym)::value>(
          n, taps, [&](int j, int u) { return Vec::load(base + j * step + u * kL); }, acc);
      for (int u = 0; u < kUnroll; ++u) Vec::store(dst + x + u * kL, acc[u]);
    }
    for (; x < width; x += kL) {
      const int count = static_cast<int>(std::min(kL, width - x));
      Vec::Reg acc[1] = {Vec::set1(0.0f)};
      const float* base = src + x;
      accumulate<1, decltype(sym)::value>(
          n, taps, [&](int j, int) { return Vec::load_partial(base + j * step, count); }, acc);
      Vec::store_partial(dst + x, acc[0], count);
    }
  });
}

void narrow_row(const float* sums, uint8_t* dst, long width) {
  constexpr long kL = Vec::kLanes;
  const Vec::Reg half = Vec::set1(0.5f), top = Vec::set1(255.0f), zero = Vec::set1(0.0f);
  long x = 0;
  // min/max return their second operand when one is NaN: min(top, NaN) is NaN, max(NaN, 0) 0.
  for (; x + kL <= width; x += kL)
    Vec::store_u8(dst + x, Vec::max(Vec::min(top, Vec::add(Vec::load(sums + x), half)), zero));
  for (; x < width; ++x) dst[x] = round_to_uint8(sums[x]);
}
