// The SIMD vertical and horizontal passes of sep_filter, written once over a vector traits type
// and included by separable_conv_avx2.cpp and separable_conv_avx512.cpp, each of which defines
// `struct Vec` (register type Reg, kLanes floats; set1, load from float/uint8/uint16 with
// conversion, load_partial, store, store_partial, fmadd, add, sub) in its level's namespace
// before including this file.
//
// Both passes work on kUnroll vectors of outputs at a time: a folded kernel of n taps is a chain
// of n / 2 dependent FMAs per vector, and several independent chains keep the FMA pipes busy.
// The vertical pass reads each source row once per output row, straight from the image (uint8
// and uint16 converted on the fly), so the n rows under the kernel are the working set; the
// driver walks the rows of a band in order, which keeps them in cache.

namespace {

constexpr int kUnroll = 4;

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

}  // namespace

template <class In>
void column_pass(const In* const* rows, int n, const float* taps, Symmetry symmetry, float bias,
                 float* dst, long width) {
  constexpr long kL = Vec::kLanes;
  with_symmetry(symmetry, [&](auto sym) {
    long x = 0;
    for (; x + kUnroll * kL <= width; x += kUnroll * kL) {
      Vec::Reg acc[kUnroll];
      for (auto& a : acc) a = Vec::set1(bias);
      accumulate<kUnroll, decltype(sym)::value>(
          n, taps, [&](int i, int u) { return Vec::load(rows[i] + x + u * kL); }, acc);
      for (int u = 0; u < kUnroll; ++u) Vec::store(dst + x + u * kL, acc[u]);
    }
    for (; x < width; x += kL) {
      const int count = static_cast<int>(std::min(kL, width - x));
      Vec::Reg acc[1] = {Vec::set1(bias)};
      accumulate<1, decltype(sym)::value>(
          n, taps, [&](int i, int) { return Vec::load_partial(rows[i] + x, count); }, acc);
      Vec::store_partial(dst + x, acc[0], count);
    }
  });
}

template void column_pass<float>(const float* const*, int, const float*, Symmetry, float, float*,
                                 long);
template void column_pass<uint8_t>(const uint8_t* const*, int, const float*, Symmetry, float,
                                   float*, long);
template void column_pass<uint16_t>(const uint16_t* const*, int, const float*, Symmetry, float,
                                    float*, long);

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
