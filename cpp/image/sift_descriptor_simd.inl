// The vector gradient row and descriptor sample row of SIFT, written once over a vector traits
// type and included by sift_descriptor_sse4.cpp and sift_descriptor_avx2.cpp, each of which
// defines `struct Vec` (float register F and int32 register I of kLanes lanes; set1, seti, load,
// store, store_i, add, sub, mul, div, sqrt, abs, lt, gt, ge, blend, and_, and_i, floor, to_int,
// add_i, mullo_i, neg_i (lanes < 0 as a mask), iota) in its level's namespace before including
// this file. The operations are those of gradient_row_scalar and sample_row_scalar, in the same
// order and without FMA contraction (the including file turns it off), so every level gives
// bit-identical maps and weights.

namespace {

inline void gradient_row_vec(const float* above, const float* row, const float* below, int cols,
                             float* mag, float* ang) {
  using F = Vec::F;
  constexpr int kLanes = Vec::kLanes;
  const F zero = Vec::set1(0.0f);
  const F eps = Vec::set1(kAtanEps), c90 = Vec::set1(90.0f);
  const F c180 = Vec::set1(180.0f), c360 = Vec::set1(360.0f);
  const F p1 = Vec::set1(kAtanP1), p3 = Vec::set1(kAtanP3);
  const F p5 = Vec::set1(kAtanP5), p7 = Vec::set1(kAtanP7);
  int x = 1;
  for (; x + kLanes <= cols - 1; x += kLanes) {
    const F gx = Vec::sub(Vec::load(row + x + 1), Vec::load(row + x - 1));
    const F gy = Vec::sub(Vec::load(below + x), Vec::load(above + x));
    Vec::store(mag + x, Vec::sqrt(Vec::add(Vec::mul(gx, gx), Vec::mul(gy, gy))));
    const F ax = Vec::abs(gx), ay = Vec::abs(gy);
    const F steep = Vec::lt(ax, ay);
    const F lo = Vec::blend(ay, ax, steep), hi = Vec::blend(ax, ay, steep);
    const F c = Vec::div(lo, Vec::add(hi, eps)), c2 = Vec::mul(c, c);
    F a = Vec::add(Vec::mul(p7, c2), p5);
    a = Vec::add(Vec::mul(a, c2), p3);
    a = Vec::add(Vec::mul(a, c2), p1);
    a = Vec::mul(a, c);
    a = Vec::blend(a, Vec::sub(c90, a), steep);
    a = Vec::blend(a, Vec::sub(c180, a), Vec::lt(gx, zero));
    a = Vec::blend(a, Vec::sub(c360, a), Vec::lt(gy, zero));
    a = Vec::blend(a, Vec::sub(a, c360), Vec::ge(a, c360));
    Vec::store(ang + x, a);
    // The tail: a last vector ending at the last pixel, overlapping this one (pixelwise
    // operations, so the overlap is rewritten with the same values).
    if (x + kLanes < cols - 1 && x + 2 * kLanes > cols - 1) x = cols - 1 - 2 * kLanes;
  }
  gradient_span(above, row, below, x, cols - 1, mag, ang);
  mag[0] = ang[0] = mag[cols - 1] = ang[cols - 1] = 0.0f;
}

inline void sample_row_vec(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                           size_t stride) {
  using F = Vec::F;
  using I = Vec::I;
  constexpr int kLanes = Vec::kLanes;
  constexpr int d = kDescrWidth, n = kDescrBins;
  const F cbin0 = Vec::set1(row.cbin0), rbin0 = Vec::set1(row.rbin0);
  const F cos_t = Vec::set1(row.cos_t), sin_t = Vec::set1(row.sin_t);
  const F angle = Vec::set1(row.angle), bins_per_deg = Vec::set1(n / 360.0f);
  const F wrow = Vec::set1(row.wrow), lo = Vec::set1(-1.0f);
  const F hi = Vec::set1(static_cast<float>(d));
  const I one = Vec::seti(1), bins = Vec::seti(n);
  const I width2 = Vec::seti(d + 2), bins2 = Vec::seti(n + 2);
  const F step = Vec::iota();
  for (int j = j_begin; j + kLanes <= j_end; j += kLanes) {
    const F fj = Vec::add(Vec::set1(static_cast<float>(j)), step);
    F cbin = Vec::add(cbin0, Vec::mul(fj, cos_t));
    F rbin = Vec::sub(rbin0, Vec::mul(fj, sin_t));
    const F inside = Vec::and_(Vec::and_(Vec::gt(rbin, lo), Vec::lt(rbin, hi)),
                               Vec::and_(Vec::gt(cbin, lo), Vec::lt(cbin, hi)));
    F obin = Vec::mul(Vec::sub(angle, Vec::load(row.ang + j)), bins_per_deg);
    const F mag = Vec::mul(Vec::load(row.mag + j), wrow);
    const F m = Vec::mul(mag, Vec::load(row.wx + j));
    const F r0 = Vec::floor(rbin), c0 = Vec::floor(cbin), o0 = Vec::floor(obin);
    rbin = Vec::sub(rbin, r0);
    cbin = Vec::sub(cbin, c0);
    obin = Vec::sub(obin, o0);
    I o = Vec::to_int(o0);
    o = Vec::add_i(o, Vec::and_i(Vec::neg_i(o), bins));
    const F v_r1 = Vec::mul(m, rbin), v_r0 = Vec::sub(m, v_r1);
    const F v_rc11 = Vec::mul(v_r1, cbin), v_rc10 = Vec::sub(v_r1, v_rc11);
    const F v_rc01 = Vec::mul(v_r0, cbin), v_rc00 = Vec::sub(v_r0, v_rc01);
    const F v_rco111 = Vec::mul(v_rc11, obin), v_rco101 = Vec::mul(v_rc10, obin);
    const F v_rco011 = Vec::mul(v_rc01, obin), v_rco001 = Vec::mul(v_rc00, obin);
    const I cell = Vec::add_i(Vec::mullo_i(Vec::add_i(Vec::to_int(r0), one), width2),
                              Vec::add_i(Vec::to_int(c0), one));
    const I at = Vec::add_i(Vec::mullo_i(cell, bins2), o);
    Vec::store_i(idx + j, Vec::and_i(at, Vec::as_int(inside)));
    const F corner[8] = {Vec::sub(v_rc00, v_rco001), v_rco001, Vec::sub(v_rc01, v_rco011),
                         v_rco011,                   Vec::sub(v_rc10, v_rco101), v_rco101,
                         Vec::sub(v_rc11, v_rco111), v_rco111};
    for (int k = 0; k < 8; ++k) Vec::store(w + k * stride + j, Vec::and_(corner[k], inside));
    // The tail: a last vector ending at j_end, overlapping this one (samplewise operations, so
    // the overlap is rewritten with the same values).
    if (j + kLanes < j_end && j + 2 * kLanes > j_end) j = j_end - 2 * kLanes;
  }
  if (j_end - j_begin < kLanes) sample_row_scalar(row, j_begin, j_end, idx, w, stride);
}

}  // namespace
