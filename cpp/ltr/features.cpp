// Learning-to-rank features (ltr/features.hpp for the definitions).
#include "ltr/features.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "index/bm25.hpp"

namespace mirkit::ltr {

using index::kEndDocid;

FeatureExtractor::FeatureExtractor(std::vector<Segment> segments, Params params)
    : m_segments(std::move(segments)), m_params(std::move(params)) {
  index::check_bm25(m_params.k1, m_params.b);
  if (!(std::isfinite(m_params.mu) && m_params.mu > 0)) {
    core::fail_value("mu must be finite and > 0, got ", m_params.mu);
  }
  m_n_views = m_segments.empty() ? 1 : m_segments[0].views.size();
  if (m_n_views == 0) core::fail_value("a segment needs at least one view (the whole document)");
  const size_t n_fields = m_n_views - 1;
  if (m_params.bm25f_weights.size() != n_fields || m_params.bm25f_b.size() != n_fields) {
    core::fail_value("bm25f weights and b need one value per field (", n_fields, "), got ",
                     m_params.bm25f_weights.size(), " and ", m_params.bm25f_b.size());
  }
  for (size_t f = 0; f < n_fields; ++f) {
    index::check_bm25(m_params.bm25f_k1, m_params.bm25f_b[f]);
    if (!(std::isfinite(m_params.bm25f_weights[f]) && m_params.bm25f_weights[f] >= 0)) {
      core::fail_value("bm25f weights must be finite and >= 0, got ", m_params.bm25f_weights[f]);
    }
  }
  m_positions = !m_segments.empty();
  m_tokens.assign(m_n_views, 0);
  m_live_first.push_back(0);
  for (size_t s = 0; s < m_segments.size(); ++s) {
    const Segment& seg = m_segments[s];
    if (seg.views.size() != m_n_views) {
      core::fail_value("segment ", s, " has ", seg.views.size(), " views, segment 0 has ",
                       m_n_views);
    }
    const uint64_t n = seg.views[0]->n_docs();
    for (size_t v = 1; v < m_n_views; ++v) {
      if (seg.views[v]->n_docs() != n) {
        core::fail_value("segment ", s, ": view ", v, " has ", seg.views[v]->n_docs(),
                         " documents, the whole-document index ", n);
      }
    }
    if (seg.deleted.size != 0 && seg.deleted.size != n) {
      core::fail_value("segment ", s, ": ", seg.deleted.size, " deletion flags for ", n,
                       " documents");
    }
    m_positions = m_positions && seg.views[0]->layout().positions;
    std::vector<uint32_t> live, deleted;
    if (seg.deleted.size) {
      for (uint32_t d = 0; d < n; ++d) (seg.deleted[d] ? deleted : live).push_back(d);
    }
    for (size_t v = 0; v < m_n_views; ++v) {
      const auto& lengths = seg.views[v]->doc_lengths;
      uint64_t t = 0;
      for (uint32_t d = 0; d < n; ++d) {
        if (!seg.deleted.size || !seg.deleted[d]) t += lengths[d];
      }
      m_tokens[v] += t;
    }
    const uint64_t n_live = seg.deleted.size ? live.size() : n;
    m_live_first.push_back(m_live_first.back() + n_live);
    m_live.push_back(deleted.empty() ? std::vector<uint32_t>() : std::move(live));
    m_deleted.push_back(std::move(deleted));
  }
  m_n_live = m_live_first.back();
  if (m_n_live > std::numeric_limits<uint32_t>::max()) core::fail_value("too many documents");
  for (size_t v = 0; v < m_n_views; ++v) {
    m_avg.push_back(m_n_live == 0 || m_tokens[v] == 0
                        ? 1.0 : static_cast<double>(m_tokens[v]) / static_cast<double>(m_n_live));
  }
}

void FeatureExtractor::check_features(const std::vector<Feature>& features) const {
  for (size_t j = 0; j < features.size(); ++j) {
    const Feature& f = features[j];
    const bool per_view = f.kind <= FeatureKind::kLength;
    if (per_view && f.view >= m_n_views) {
      core::fail_value("feature ", j, ": view ", f.view, " out of range (", m_n_views, " views)");
    }
    if (f.kind == FeatureKind::kBm25F && m_n_views < 2) {
      core::fail_value("feature ", j, ": bm25f needs an index with text fields");
    }
    if (f.kind == FeatureKind::kWindow && !m_positions) {
      core::fail_value("feature ", j, ": window needs an index with positions");
    }
    if (f.kind > FeatureKind::kWindow) core::fail_value("feature ", j, ": unknown kind");
  }
}

void FeatureExtractor::check_docids(const uint32_t* docids, size_t n, const char* arg) const {
  for (size_t i = 0; i < n; ++i) {
    if (docids[i] >= m_n_live) {
      core::fail_index(arg, "[", i, "]=", docids[i], " is out of range: the index holds ",
                       m_n_live, " live documents");
    }
  }
}

namespace {

// The fewest consecutive positions holding one of each list (each ascending, none empty):
// a sweep that always advances the list at the window's start.
uint32_t min_window(const std::vector<const uint32_t*>& lists, const std::vector<uint32_t>& sizes,
                    std::vector<uint32_t>& at) {
  const size_t m = lists.size();
  at.assign(m, 0);
  uint32_t best = std::numeric_limits<uint32_t>::max();
  while (true) {
    size_t lo = 0;
    uint32_t lo_pos = lists[0][at[0]], hi_pos = lo_pos;
    for (size_t j = 1; j < m; ++j) {
      const uint32_t p = lists[j][at[j]];
      if (p < lo_pos) {
        lo_pos = p;
        lo = j;
      }
      hi_pos = std::max(hi_pos, p);
    }
    best = std::min(best, hi_pos - lo_pos + 1);
    if (best == 1 || ++at[lo] == sizes[lo]) return best;
  }
}

}  // namespace

void FeatureExtractor::extract(const std::vector<std::string>& query, const uint32_t* docids,
                               size_t n, const std::vector<Feature>& features,
                               double* out) const {
  check_features(features);
  check_docids(docids, n, "docids");
  const size_t n_out = features.size();
  if (n == 0 || n_out == 0) return;

  // Distinct terms, weighted by their count.
  std::vector<std::string> terms(query);
  std::sort(terms.begin(), terms.end());
  std::vector<std::string> uniq;
  std::vector<double> qw;
  for (const auto& t : terms) {
    if (uniq.empty() || uniq.back() != t) {
      uniq.push_back(t);
      qw.push_back(0.0);
    }
    qw.back() += 1.0;
  }
  const size_t m = uniq.size();

  // Which views are read, and whether positions are.
  std::vector<bool> need(m_n_views, false);
  bool window = false;
  for (const Feature& f : features) {
    if (f.kind <= FeatureKind::kLength) need[f.view] = true;
    if (f.kind == FeatureKind::kBm25F) std::fill(need.begin(), need.end(), true);
    if (f.kind >= FeatureKind::kMatched) need[0] = true;
    window = window || f.kind == FeatureKind::kWindow;
  }

  // Candidates in docid order; each one's segment and local docid.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return docids[a] < docids[b]; });
  std::vector<uint32_t> local(n);
  std::vector<size_t> seg_begin(m_segments.size() + 1, 0);
  {
    size_t s = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t d = docids[order[i]];
      while (d >= m_live_first[s + 1]) ++s;
      const uint32_t r = static_cast<uint32_t>(d - m_live_first[s]);
      local[i] = m_live[s].empty() ? r : m_live[s][r];
    }
  }
  // seg_begin[s]: the first sorted candidate of segment s.
  for (size_t s = 0; s <= m_segments.size(); ++s) {
    const uint64_t first = m_live_first[s];
    seg_begin[s] = static_cast<size_t>(
        std::lower_bound(order.begin(), order.end(), first,
                         [&](uint32_t a, uint64_t v) { return docids[a] < v; }) -
        order.begin());
  }

  // Per view: live df and cf per term, tf per (term, sorted candidate), length per candidate.
  const size_t V = m_n_views;
  std::vector<std::vector<uint64_t>> df(V, std::vector<uint64_t>(m, 0)), cf = df;
  std::vector<std::vector<uint32_t>> tf(V), len(V);
  std::vector<double> span(window ? n : 0, kNoWindow);
  std::vector<const uint32_t*> lists(m);
  std::vector<uint32_t> sizes(m), at;
  for (size_t v = 0; v < V; ++v) {
    if (!need[v]) continue;
    tf[v].assign(m * n, 0);
    len[v].assign(n, 0);
    for (size_t s = 0; s < m_segments.size(); ++s) {
      const index::IndexReader& r = *m_segments[s].views[v];
      std::vector<index::PostingCursor> cursors;
      std::vector<size_t> which;  // query term of each cursor
      for (size_t j = 0; j < m; ++j) {
        const int64_t id = r.find_term(uniq[j]);
        if (id < 0) continue;
        const auto t = static_cast<uint32_t>(id);
        df[v][j] += r.df[t];
        cf[v][j] += r.cf[t];
        if (!m_deleted[s].empty()) {
          // Subtract the deleted documents' postings, visiting the shorter of the term's list
          // and the segment's deletions.
          index::PostingCursor c = r.cursor(t);
          if (r.df[t] <= m_deleted[s].size()) {
            for (; c.docid() != kEndDocid; c.next()) {
              if (m_segments[s].deleted[c.docid()]) {
                df[v][j] -= 1;
                cf[v][j] -= c.freq();
              }
            }
          } else {
            for (const uint32_t d : m_deleted[s]) {
              c.next_geq(d);
              if (c.docid() == kEndDocid) break;
              if (c.docid() == d) {
                df[v][j] -= 1;
                cf[v][j] -= c.freq();
              }
            }
          }
        }
        if (seg_begin[s] < seg_begin[s + 1]) {
          cursors.push_back(r.cursor(t));
          which.push_back(j);
        }
      }
      for (size_t i = seg_begin[s]; i < seg_begin[s + 1]; ++i) {
        const uint32_t d = local[i];
        len[v][i] = r.doc_lengths[d];
        size_t held = 0;
        for (size_t c = 0; c < cursors.size(); ++c) {
          cursors[c].next_geq(d);
          if (cursors[c].docid() != d) continue;
          tf[v][which[c] * n + i] = cursors[c].freq();
          if (v == 0 && window) {
            sizes[held] = cursors[c].positions_view(lists[held]);
            held += sizes[held] > 0;
          }
        }
        if (v == 0 && window && m > 0 && held == m) {
          lists.resize(m);
          span[i] = static_cast<double>(min_window(lists, sizes, at));
        }
      }
    }
  }

  // Query statistics (whole document).
  const double N = static_cast<double>(m_n_live);
  std::vector<double> idf(m, 0.0);
  double idf_sum = 0, idf_max = 0;
  size_t known = 0;
  for (size_t j = 0; j < m && need[0]; ++j) {
    if (df[0][j] == 0) continue;
    idf[j] = index::bm25_idf(m_n_live, df[0][j]);
    idf_sum += idf[j];
    idf_max = std::max(idf_max, idf[j]);
    ++known;
  }

  const Params& p = m_params;
  for (size_t i = 0; i < n; ++i) {
    double* row = out + static_cast<size_t>(order[i]) * n_out;
    for (size_t k = 0; k < n_out; ++k) {
      const Feature& f = features[k];
      const size_t v = f.view;
      double x = 0.0;
      switch (f.kind) {
        case FeatureKind::kBm25: {
          const double norm = p.k1 * (1.0 - p.b + p.b * len[v][i] / m_avg[v]);
          for (size_t j = 0; j < m; ++j) {
            const uint32_t t = tf[v][j * n + i];
            if (t == 0) continue;
            x += qw[j] * index::bm25_idf(m_n_live, df[v][j]) * (p.k1 + 1.0) * t / (t + norm);
          }
          break;
        }
        case FeatureKind::kTfIdf:
          for (size_t j = 0; j < m; ++j) {
            const uint32_t t = tf[v][j * n + i];
            if (t == 0) continue;
            x += qw[j] * std::log(N / static_cast<double>(df[v][j])) * (1.0 + std::log(t));
          }
          break;
        case FeatureKind::kQl: {
          double wsum = 0.0;
          const double total = static_cast<double>(m_tokens[v]);
          for (size_t j = 0; j < m; ++j) {
            if (cf[v][j] == 0) continue;
            wsum += qw[j];
            const uint32_t t = tf[v][j * n + i];
            if (t) x += qw[j] * std::log1p(t / (p.mu * static_cast<double>(cf[v][j]) / total));
          }
          x += wsum * std::log(p.mu / (len[v][i] + p.mu));
          break;
        }
        case FeatureKind::kLength:
          x = len[v][i];
          break;
        case FeatureKind::kBm25F:
          for (size_t j = 0; j < m; ++j) {
            if (tf[0][j * n + i] == 0) continue;
            double tilde = 0.0;
            for (size_t g = 1; g < V; ++g) {
              const uint32_t t = tf[g][j * n + i];
              if (t == 0) continue;
              const double b = p.bm25f_b[g - 1];
              const double avg = m_tokens[g] ? m_avg[g] : 0.0;
              const double inv = avg > 0 ? 1.0 / avg : 0.0;
              tilde += p.bm25f_weights[g - 1] * t / (1.0 - b + b * len[g][i] * inv);
            }
            x += qw[j] * idf[j] * (p.bm25f_k1 + 1.0) * tilde / (p.bm25f_k1 + tilde);
          }
          break;
        case FeatureKind::kMatched:
        case FeatureKind::kCoverage: {
          size_t matched = 0;
          for (size_t j = 0; j < m; ++j) matched += tf[0][j * n + i] > 0;
          x = f.kind == FeatureKind::kMatched ? static_cast<double>(matched)
                                              : (m ? static_cast<double>(matched) / m : 0.0);
          break;
        }
        case FeatureKind::kIdfSum:
          x = idf_sum;
          break;
        case FeatureKind::kIdfMax:
          x = idf_max;
          break;
        case FeatureKind::kIdfMean:
          x = known ? idf_sum / static_cast<double>(known) : 0.0;
          break;
        case FeatureKind::kWindow:
          x = span[i];
          break;
      }
      row[k] = x;
    }
  }
}

void FeatureExtractor::extract_batch(const std::vector<std::vector<std::string>>& queries,
                                     const std::vector<const uint32_t*>& docids,
                                     const std::vector<size_t>& n,
                                     const std::vector<Feature>& features,
                                     const std::vector<double*>& out, unsigned threads) const {
  if (docids.size() != queries.size() || n.size() != queries.size() ||
      out.size() != queries.size()) {
    core::fail_value("extract_batch: ", queries.size(), " queries but ", docids.size(),
                     " docid lists");
  }
  check_features(features);
  for (size_t q = 0; q < queries.size(); ++q) {
    const std::string arg = "docid_lists[" + std::to_string(q) + "]";
    check_docids(docids[q], n[q], arg.c_str());
  }
  core::parallel_for(queries.size(), threads, [&](size_t q) {
    extract(queries[q], docids[q], n[q], features, out[q]);
  });
}

}  // namespace mirkit::ltr
