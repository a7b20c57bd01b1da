#include "text/edit_distance.hpp"

#include <algorithm>
#include <numeric>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "text/signature_filter.inl"
#include "text/term_walk.hpp"

namespace mirkit::text {

// ---------------------------------------------------------------------------------- Pattern

void Pattern::assign(const uint32_t* s, size_t m) {
  m_size = m;
  m_words = std::max<size_t>(1, (m + 63) / 64);
  m_latin1.assign(256 * m_words, 0);
  size_t wide = 0;
  for (size_t i = 0; i < m; ++i) wide += s[i] >= 256;
  m_slots = 0;
  if (wide > 0) {
    // Load factor <= 1/2, so probes stay short and a free slot always exists.
    m_slots = 8;
    while (m_slots < 2 * wide) m_slots *= 2;
    m_keys.assign(m_slots, 0);
    m_masks.assign(m_slots * m_words, 0);
  }
  for (size_t i = 0; i < m; ++i) {
    const uint32_t c = s[i];
    const uint64_t bit = uint64_t{1} << (i % 64);
    if (c < 256) {
      m_latin1[c * m_words + i / 64] |= bit;
      continue;
    }
    size_t slot = (c * 2654435761u) & (m_slots - 1);
    while (m_keys[slot] != 0 && m_keys[slot] != c) slot = (slot + 1) & (m_slots - 1);
    m_keys[slot] = c;
    m_masks[slot * m_words + i / 64] |= bit;
  }
}

uint64_t Pattern::lookup(uint32_t c, size_t w) const {
  if (m_slots == 0) return 0;
  for (size_t slot = (c * 2654435761u) & (m_slots - 1);; slot = (slot + 1) & (m_slots - 1)) {
    if (m_keys[slot] == c) return m_masks[slot * m_words + w];
    if (m_keys[slot] == 0) return 0;
  }
}

namespace {

// Each kernel below returns the exact distance when it is <= max and some value > max
// otherwise; max <= max(m, n) (the callers clamp it), so max + n never overflows. After
// character j of b the last row holds D[m][j + 1], and D[m][n] >= D[m][j + 1] - (n - j - 1):
// once that bound exceeds max the rest of b cannot bring the distance back.

// One word: Myers (1999) in Hyyrö's formulation (2003) for Levenshtein (1 <= m <= 64). With
// kOsa, Hyyrö's OSA (2003): the transposition term TR marks rows where b[j - 1] b[j] matches
// a[i] a[i - 1] and the previous column had no diagonal zero one row up; it needs the bit above
// the pattern, so m < 64 (as rapidfuzz also requires).
template <bool kOsa>
size_t word_kernel(const Pattern& p, const uint32_t* b, size_t n, size_t max) {
  uint64_t vp = ~uint64_t{0}, vn = 0, d0 = 0, pm_old = 0;
  const uint64_t last = uint64_t{1} << (p.size() - 1);
  size_t dist = p.size();
  for (size_t j = 0; j < n; ++j) {
    const uint64_t pm = p.get(0, b[j]);
    const uint64_t tr = kOsa ? ((~d0 & pm) << 1) & pm_old : 0;
    d0 = (((pm & vp) + vp) ^ vp) | pm | vn | tr;
    uint64_t hp = vn | ~(d0 | vp);
    uint64_t hn = d0 & vp;
    dist += (hp & last) != 0;
    dist -= (hn & last) != 0;
    if (dist > max + (n - j - 1)) return max + 1;
    hp = (hp << 1) | 1;
    hn <<= 1;
    vp = hn | ~(d0 | hp);
    vn = hp & d0;
    pm_old = pm;
  }
  return dist;
}

// Block form (Hyyrö 2003): the words of a column are advanced top to bottom, each passing its
// outgoing horizontal deltas (the top bits of HP / HN) to the next as carries. For OSA, TR also
// carries the top bit of the word above (its D0 of the previous column and its mask of the
// current character).
template <bool kOsa>
size_t block_kernel(const Pattern& p, const uint32_t* b, size_t n, size_t max) {
  struct Row {
    uint64_t vp = ~uint64_t{0}, vn = 0, d0 = 0, pm = 0;
  };
  const size_t words = p.words();
  std::vector<Row> old_rows(words + 1), new_rows(words + 1);  // [0]: a constant sentinel
  const uint64_t last = uint64_t{1} << ((p.size() - 1) % 64);
  size_t dist = p.size();
  for (size_t j = 0; j < n; ++j) {
    uint64_t hp_carry = 1, hn_carry = 0;
    for (size_t w = 0; w < words; ++w) {
      const Row& prev = old_rows[w + 1];
      const uint64_t pm = p.get(w, b[j]);
      const uint64_t tr =
          kOsa ? (((~prev.d0 & pm) << 1) | ((~old_rows[w].d0 & new_rows[w].pm) >> 63)) & prev.pm
               : 0;
      const uint64_t x = pm | hn_carry;
      const uint64_t d0 = (((x & prev.vp) + prev.vp) ^ prev.vp) | x | prev.vn | tr;
      uint64_t hp = prev.vn | ~(d0 | prev.vp);
      uint64_t hn = d0 & prev.vp;
      if (w + 1 == words) {
        dist += (hp & last) != 0;
        dist -= (hn & last) != 0;
      }
      const uint64_t hp_out = hp >> 63, hn_out = hn >> 63;
      hp = (hp << 1) | hp_carry;
      hn = (hn << 1) | hn_carry;
      hp_carry = hp_out;
      hn_carry = hn_out;
      Row& next = new_rows[w + 1];
      next.vp = hn | ~(d0 | hp);
      next.vn = hp & d0;
      next.d0 = d0;
      next.pm = pm;
    }
    std::swap(old_rows, new_rows);
    if (dist > max + (n - j - 1)) return max + 1;
  }
  return dist;
}

size_t cap(size_t d, size_t max) { return d > max ? max + 1 : d; }

size_t diff(size_t a, size_t b) { return a > b ? a - b : b - a; }

}  // namespace

size_t distance(Metric metric, const Pattern& p, const uint32_t* b, size_t n, size_t max) {
  const size_t m = p.size();
  if (m == 0) return cap(n, max);
  if (diff(m, n) > max) return max + 1;
  const size_t bound = std::min(max, std::max(m, n));
  size_t d;
  if (metric == Metric::kLevenshtein) {
    d = m <= 64 ? word_kernel<false>(p, b, n, bound) : block_kernel<false>(p, b, n, bound);
  } else {
    d = m < 64 ? word_kernel<true>(p, b, n, bound) : block_kernel<true>(p, b, n, bound);
  }
  return cap(d, max);
}

size_t distance(Metric metric, const uint32_t* a, size_t m, const uint32_t* b, size_t n,
                size_t max) {
  // A common prefix or suffix never takes part in an optimal alignment (for OSA too: a
  // transposition across its border can be replaced by one inside it at no extra cost).
  while (m > 0 && n > 0 && *a == *b) ++a, ++b, --m, --n;
  while (m > 0 && n > 0 && a[m - 1] == b[n - 1]) --m, --n;
  if (m > n) {
    std::swap(a, b);
    std::swap(m, n);
  }
  thread_local Pattern p;
  p.assign(a, m);
  return distance(metric, p, b, n, max);
}

size_t distance_dp(Metric metric, const uint32_t* a, size_t m, const uint32_t* b, size_t n,
                   size_t max) {
  // Three rows: D[i - 2], D[i - 1], D[i] (the first only for OSA's transpositions).
  std::vector<size_t> r0(n + 1), r1(n + 1), r2(n + 1);
  std::iota(r1.begin(), r1.end(), size_t{0});
  for (size_t i = 1; i <= m; ++i) {
    r2[0] = i;
    for (size_t j = 1; j <= n; ++j) {
      size_t d = std::min({r1[j] + 1, r2[j - 1] + 1, r1[j - 1] + (a[i - 1] != b[j - 1])});
      if (metric == Metric::kOsa && i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
          a[i - 2] == b[j - 1]) {
        d = std::min(d, r0[j - 2] + 1);
      }
      r2[j] = d;
    }
    std::swap(r0, r1);
    std::swap(r1, r2);
  }
  return cap(r1[n], max);
}

// ---------------------------------------------------------------------------------- cdist

Signature signature(const uint32_t* s, size_t n) {
  Signature sig;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = s[i];
    unsigned bit;
    if (c >= 'a' && c <= 'z') {
      bit = c - 'a';
    } else if (c >= '0' && c <= '9') {
      bit = 26 + (c - '0');
    } else {
      bit = 36 + ((c * 2654435761u) >> 16) % 28;
    }
    const uint64_t b = uint64_t{1} << bit;
    sig.twice |= sig.once & b;
    sig.once |= b;
  }
  return sig;
}

namespace detail {
size_t filter_scalar(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                     unsigned k, uint32_t* out) {
  return filter_loop(once, twice, n, q, k, out);
}
}  // namespace detail

namespace {
#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<SignatureFilter> kFilter{{detail::filter_scalar, detail::filter_sse4,
                                               detail::filter_avx2, detail::filter_avx512}};
#else
const core::Dispatch<SignatureFilter> kFilter{{detail::filter_scalar}};
#endif

constexpr size_t kChunk = 8192;  // sorted choices per task when there are few queries
}  // namespace

SignatureFilter signature_filter() { return kFilter.get(); }
core::SimdLevel filter_level() { return kFilter.chosen(); }

void cdist(Metric metric, const Strings& queries, const Strings& choices, size_t max,
           unsigned threads, int32_t* out) {
  const size_t nq = queries.n, nc = choices.n;
  if (nq == 0 || nc == 0) return;
  const bool cut = max != kNoCutoff;
  const int32_t above = cut ? static_cast<int32_t>(max + 1) : 0;

  // Choices in length order, so the length bound |m - n| <= max is one contiguous range, with
  // their lengths and signatures side by side for the filter.
  std::vector<uint32_t> order(nc);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return choices.size(x) < choices.size(y); });
  std::vector<size_t> len(nc);
  std::vector<uint64_t> once(cut ? nc : 0), twice(cut ? nc : 0);
  for (size_t j = 0; j < nc; ++j) {
    len[j] = choices.size(order[j]);
    if (!cut) continue;
    const Signature s = signature(choices.at(order[j]), len[j]);
    once[j] = s.once;
    twice[j] = s.twice;
  }
  auto first_of_length = [&](size_t l) {
    return static_cast<size_t>(std::lower_bound(len.begin(), len.end(), l) - len.begin());
  };
  const SignatureFilter filter = signature_filter();
  const unsigned k = static_cast<unsigned>(std::min<size_t>(max, 128));

  threads = core::resolve_threads(threads);
  // Many queries: a task per query, which fills its own row (cache-warm). Few: the sorted
  // choices are split into chunks too, and the rows are filled first.
  const size_t n_chunks = nq >= 4 * size_t{threads} ? 1 : std::max<size_t>(1, nc / kChunk);
  if (cut && n_chunks > 1) {
    core::parallel_for(nq, threads,
                       [&](size_t i) { std::fill(out + i * nc, out + (i + 1) * nc, above); });
  }
  core::parallel_for(nq * n_chunks, threads, [&](size_t task) {
    const size_t i = task / n_chunks, chunk = task % n_chunks;
    int32_t* row = out + i * nc;
    if (cut && n_chunks == 1) std::fill(row, row + nc, above);
    const uint32_t* q = queries.at(i);
    const size_t m = queries.size(i);
    size_t lo = chunk * nc / n_chunks, hi = (chunk + 1) * nc / n_chunks;
    if (cut) {
      lo = std::max(lo, first_of_length(m > max ? m - max : 0));
      hi = std::min(hi, m + max + 1 < m ? nc : first_of_length(m + max + 1));
    }
    if (lo >= hi) return;
    thread_local Pattern p;
    p.assign(q, m);
    if (!cut) {
      for (size_t j = lo; j < hi; ++j) {
        row[order[j]] = static_cast<int32_t>(
            distance(metric, p, choices.at(order[j]), len[j], kNoCutoff));
      }
      return;
    }
    thread_local std::vector<uint32_t> survivors;
    survivors.resize(hi - lo);
    const size_t n_surv = filter(once.data() + lo, twice.data() + lo, hi - lo, signature(q, m), k,
                                 survivors.data());
    for (size_t s = 0; s < n_surv; ++s) {
      const size_t j = lo + survivors[s];
      row[order[j]] = static_cast<int32_t>(distance(metric, p, choices.at(order[j]), len[j], max));
    }
  });
}

// ---------------------------------------------------------------------------------- UTF-8

void utf8_code_points(std::string_view s, std::vector<uint32_t>& out,
                      std::vector<uint32_t>* byte_ends) {
  out.clear();
  if (byte_ends) byte_ends->clear();
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned char b = p[i];
    size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool ok = len != 0 && i + len <= n;
    for (size_t c = 1; ok && c < len; ++c) ok = (p[i + c] & 0xC0) == 0x80;
    uint32_t cp;
    if (!ok) {
      cp = b;
      len = 1;
    } else if (len == 1) {
      cp = b;
    } else {
      cp = b & (0x7F >> len);
      for (size_t c = 1; c < len; ++c) cp = (cp << 6) | (p[i + c] & 0x3F);
    }
    out.push_back(cp);
    i += len;
    if (byte_ends) byte_ends->push_back(static_cast<uint32_t>(i));
  }
}

}  // namespace mirkit::text
