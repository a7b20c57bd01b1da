// The vector scan for DoG extrema, written once over a vector traits type and included by
// dog_extrema_sse4.cpp and dog_extrema_avx2.cpp, each of which defines `struct Vec` (register
// type Reg of kLanes floats; set1, load, max, min, gt, lt, ge, le, and_, or_, movemask) in its
// level's namespace before including this file. kLanes pixels at a time are tested against the
// contrast pre-threshold (most fail it, so one compare skips them), then the max and min of the
// 26 neighbours of the survivors decide; the last c_end - c_begin mod kLanes columns take the
// scalar test, so every level finds the same extrema.

namespace {

inline void scan_row_vec(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane,
                         int c_begin, int c_end, float threshold, std::vector<int>& hits) {
  using Reg = Vec::Reg;
  constexpr int kLanes = Vec::kLanes;
  const Reg hi = Vec::set1(threshold), lo = Vec::set1(-threshold);
  int c = c_begin;
  for (; c + kLanes <= c_end; c += kLanes) {
    const float* p = cur + c;
    const Reg v = Vec::load(p);
    const Reg pos = Vec::gt(v, hi), neg = Vec::lt(v, lo);
    if (Vec::movemask(Vec::or_(pos, neg)) == 0) continue;
    Reg mx = Vec::load(p - 1), mn = mx;
    for (std::ptrdiff_t dz = -plane; dz <= plane; dz += plane)
      for (std::ptrdiff_t dy = -stride; dy <= stride; dy += stride)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dz == 0 && dy == 0 && dx == 0) continue;
          const Reg n = Vec::load(p + dz + dy + dx);
          mx = Vec::max(mx, n);
          mn = Vec::min(mn, n);
        }
    const Reg is_max = Vec::and_(pos, Vec::ge(v, mx));
    const Reg is_min = Vec::and_(neg, Vec::le(v, mn));
    for (unsigned m = Vec::movemask(Vec::or_(is_max, is_min)); m; m &= m - 1)
      hits.push_back(c + __builtin_ctz(m));
  }
  for (; c < c_end; ++c)
    if (is_extremum(cur + c, stride, plane, threshold)) hits.push_back(c);
}

}  // namespace
