#include "eval/measures.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace mirkit::eval {
namespace {

constexpr double kMinGeoMean = 1e-5;  // trec_eval's MIN_GEO_MEAN

// The judged ranking of one query, as trec_eval's RES_RELS, with running counts that let
// every cutoff measure read its value in O(1). The running sums add the same terms in the same
// order as trec_eval's loops, so the values are bit-identical to its.
struct Ranking {
  std::vector<int32_t> rels;           // relevance value of each retrieved document, by rank
  const std::vector<int64_t>* levels;  // judged documents per level 0, 1, ...
  const std::vector<double>* log2s;    // log2(rank0 + 2) for every rank0 < num_ret
  int32_t threshold;                   // relevance_level
  int64_t num_rel = 0;
  std::vector<int64_t> found;   // found[i]: relevant documents among the first i
  std::vector<double> ap_sum;   // ap_sum[i]: sum of precision at the relevant ones among them

  void finish() {
    found.assign(rels.size() + 1, 0);
    ap_sum.assign(rels.size() + 1, 0.0);
    for (size_t i = 0; i < rels.size(); ++i) {
      const bool rel = rels[i] >= threshold;
      found[i + 1] = found[i] + rel;
      ap_sum[i + 1] = rel ? ap_sum[i] + static_cast<double>(found[i + 1]) /
                                            static_cast<double>(i + 1)
                          : ap_sum[i];
    }
  }
  int64_t num_ret() const { return static_cast<int64_t>(rels.size()); }
  int64_t num_rel_ret() const { return found.back(); }
  int64_t depth(int64_t cutoff) const { return std::min(cutoff, num_ret()); }
  int64_t found_in_top(int64_t cutoff) const { return found[depth(cutoff)]; }
  double discount(int64_t rank0) const {
    return rank0 < num_ret() ? (*log2s)[rank0] : std::log2(static_cast<double>(rank0 + 2));
  }
};

int64_t cutoff(double c) { return static_cast<int64_t>(c); }

double average_precision(const Ranking& r, int64_t cutoff) {
  return r.found_in_top(cutoff) ? r.ap_sum[r.depth(cutoff)] / static_cast<double>(r.num_rel)
                                : 0.0;
}

double bpref(const Ranking& r) {
  int64_t num_nonrel = 0;
  for (int32_t l = 0; l < r.threshold && l < static_cast<int32_t>(r.levels->size()); ++l) {
    num_nonrel += (*r.levels)[l];
  }
  double sum = 0;
  int64_t nonrel_so_far = 0;
  for (int32_t rel : r.rels) {
    if (rel < 0) continue;  // not judged: no assumption either way
    if (rel < r.threshold) {
      ++nonrel_so_far;
    } else if (nonrel_so_far > 0) {
      sum += 1.0 - static_cast<double>(std::min(nonrel_so_far, r.num_rel)) /
                       static_cast<double>(std::min(num_nonrel, r.num_rel));
    } else {
      sum += 1.0;
    }
  }
  return r.num_rel ? sum / static_cast<double>(r.num_rel) : sum;
}

std::vector<int64_t> rel_cutoffs(const std::vector<double>& levels, int64_t num_rel, bool lround);

void iprec_at_recall(const Ranking& r, const std::vector<double>& levels, int version,
                     double* out) {
  const auto n = static_cast<int64_t>(levels.size());
  // The rank of the relevant document that reaches each recall level, rounded as trec_eval 9
  // (and pytrec_eval) round it, or as trec_eval 10 (lround), which can differ by one document.
  const std::vector<int64_t> cut = rel_cutoffs(levels, r.num_rel, version >= 10);
  int64_t current = n - 1;
  while (current >= 0 && cut[current] > r.num_rel_ret()) out[current--] = 0.0;
  // Interpolated precision at rank X is the best precision at any rank >= X: walk backwards.
  // With nothing retrieved (possible with judged_only) this is trec_eval's 0 / 0, NaN.
  double best = static_cast<double>(r.num_rel_ret()) / static_cast<double>(r.num_ret());
  int64_t rel_so_far = r.num_rel_ret();
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    best = std::max(best, static_cast<double>(rel_so_far) / static_cast<double>(i));
    if (r.rels[i - 1] >= r.threshold) {
      while (current >= 0 && rel_so_far == cut[current]) out[current--] = best;
      --rel_so_far;
    }
  }
  while (current >= 0) out[current--] = best;
}

// Gain of each relevance level for nDCG: the level itself unless overridden by (level, gain)
// pairs; returned sorted by increasing gain, with how many judged documents have each.
struct Gain {
  int64_t level;
  double gain;
  int64_t count;
};

std::vector<Gain> gains(const Ranking& r, const std::vector<double>& pairs) {
  std::vector<Gain> out;
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    out.push_back(Gain{static_cast<int64_t>(pairs[i]), pairs[i + 1], 0});
  }
  const size_t n_pairs = out.size();
  for (size_t level = 0; level < r.levels->size(); ++level) {
    auto it = std::find_if(out.begin(), out.begin() + n_pairs,
                           [&](const Gain& g) { return g.level == static_cast<int64_t>(level); });
    if (it != out.begin() + n_pairs) {
      it->count = (*r.levels)[level];
    } else {
      out.push_back(Gain{static_cast<int64_t>(level), static_cast<double>(level),
                         (*r.levels)[level]});
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Gain& a, const Gain& b) { return a.gain < b.gain; });
  return out;
}

double gain_of(int32_t rel, const std::vector<Gain>& g) {
  for (const Gain& x : g) {
    if (x.level == rel) return x.gain;
  }
  return 0.0;
}

// Gains of the ideal ranking's first `depth` documents: the judged documents by decreasing
// gain, as far as gains stay positive.
std::vector<double> ideal_gains(const std::vector<Gain>& g, int64_t depth) {
  std::vector<double> out;
  for (auto it = g.rbegin(); it != g.rend() && it->gain > 0; ++it) {
    for (int64_t k = 0; k < it->count && static_cast<int64_t>(out.size()) < depth; ++k) {
      out.push_back(it->gain);
    }
  }
  return out;
}

double ndcg(const Ranking& r, const std::vector<double>& pairs) {
  std::vector<Gain> g = gains(r, pairs);
  double dcg = 0, ideal = 0;
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    double gain = gain_of(r.rels[i], g);
    if (gain != 0) dcg += gain / r.discount(i);
  }
  std::vector<double> best = ideal_gains(g, INT64_MAX);
  for (size_t i = 0; i < best.size(); ++i) ideal += best[i] / r.discount(i);
  return ideal > 0 ? dcg / ideal : 0.0;
}

void ndcg_cut(const Ranking& r, const std::vector<double>& cutoffs, double* out) {
  // the gains are the relevance values; cutoffs increase, so one running DCG (and ideal DCG)
  // is extended from cutoff to cutoff
  std::vector<double> best = ideal_gains(gains(r, {}), cutoff(cutoffs.back()));
  double dcg = 0, ideal = 0;
  int64_t done = 0, ideal_done = 0;
  for (size_t c = 0; c < cutoffs.size(); ++c) {
    const int64_t depth = cutoff(cutoffs[c]);
    for (; done < r.depth(depth); ++done) {
      if (r.rels[done] > 0) dcg += r.rels[done] / r.discount(done);
    }
    for (; ideal_done < std::min<int64_t>(depth, best.size()); ++ideal_done) {
      ideal += best[ideal_done] / r.discount(ideal_done);
    }
    out[c] = ideal > 0 ? dcg / ideal : dcg;
  }
}

// RBP gains: the relevance levels scaled into [0, 1] (trec_eval divides by the top level
// when it exceeds 1).
double rbp(const Ranking& r, double p) {
  const auto top = static_cast<double>(r.levels->empty() ? 0 : r.levels->size() - 1);
  const double scale = top > 1 ? 1.0 / top : 1.0;
  double sum = 0, weight = 1;
  for (int32_t rel : r.rels) {
    if (rel > 0) sum += rel * scale * weight;
    weight *= p;
  }
  return (1 - p) * sum;
}

// The RBP weight left undetermined: on unjudged retrieved documents and beyond the ranking.
// Like trec_eval, 0 when every retrieved document is judged.
double rbp_residual(const Ranking& r, double p) {
  double sum = 0, weight = 1;
  bool unjudged = false;
  for (int32_t rel : r.rels) {
    if (rel < 0) {
      unjudged = true;
      sum += weight;
    }
    weight *= p;
  }
  return unjudged ? weight + (1 - p) * sum : 0.0;
}


constexpr double kInfApEpsilon = 1e-5;  // trec_eval's INFAP_EPSILON

double inf_ap(const Ranking& r) {
  int64_t nonrel_so_far = 0, rel_so_far = 0, unjudged_so_far = 0;
  double sum = 0.0;
  for (int64_t j = 0; j < r.num_ret(); ++j) {
    const int32_t rel = r.rels[j];
    if (rel == Qrels::kNotInPool) continue;
    if (rel == Qrels::kUnjudged) {
      ++unjudged_so_far;
      continue;
    }
    if (rel >= 0 && rel < r.threshold) {
      ++nonrel_so_far;
    } else {
      ++rel_so_far;
      if (j == 0) {
        sum += 1.0;
      } else {
        const auto fj = static_cast<double>(j);
        sum += 1.0 / (fj + 1.0) +
               (fj / (fj + 1.0)) *
                   (static_cast<double>(rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj) *
                   ((static_cast<double>(rel_so_far - 1) + kInfApEpsilon) /
                    (static_cast<double>(rel_so_far - 1 + nonrel_so_far) + 2 * kInfApEpsilon));
      }
    }
  }
  return r.num_rel ? sum / static_cast<double>(r.num_rel) : sum;
}

// Document counts of recall levels (or multiples of num_rel): trec_eval 9 rounds
// (long)(x R + 0.9), trec_eval 10's iprec_at_recall and 11pt_avg lround(x R).
std::vector<int64_t> rel_cutoffs(const std::vector<double>& levels, int64_t num_rel, bool lround) {
  std::vector<int64_t> cut(levels.size());
  for (size_t i = 0; i < levels.size(); ++i) {
    const double x = levels[i] * static_cast<double>(num_rel);
    cut[i] = lround ? std::lround(x) : static_cast<int64_t>(x + 0.9);
  }
  return cut;
}

void rprec_mult(const Ranking& r, const std::vector<double>& mults, double* out) {
  const std::vector<int64_t> cut = rel_cutoffs(mults, r.num_rel, false);
  auto current = static_cast<int64_t>(cut.size()) - 1;
  for (size_t i = 0; i < cut.size(); ++i) out[i] = 0.0;
  while (current >= 0 && cut[current] > r.num_ret()) {
    out[current] = static_cast<double>(r.num_rel_ret()) / static_cast<double>(cut[current]);
    --current;
  }
  int64_t rel_so_far = r.num_rel_ret();
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    const double precis = static_cast<double>(rel_so_far) / static_cast<double>(i);
    while (current >= 0 && i == cut[current]) out[current--] = precis;
    if (r.rels[i - 1] >= r.threshold) --rel_so_far;
  }
}

double eleven_pt_avg(const Ranking& r, const std::vector<double>& levels, int version) {
  const std::vector<int64_t> cut = rel_cutoffs(levels, r.num_rel, version >= 10);
  auto current = static_cast<int64_t>(cut.size()) - 1;
  while (current >= 0 && cut[current] > r.num_rel_ret()) --current;
  double best = static_cast<double>(r.num_rel_ret()) / static_cast<double>(r.num_ret());
  double sum = 0.0;
  int64_t rel_so_far = r.num_rel_ret();
  for (int64_t i = r.num_ret(); i > 0 && rel_so_far > 0; --i) {
    const double precis = static_cast<double>(rel_so_far) / static_cast<double>(i);
    if (best < precis) best = precis;
    if (r.rels[i - 1] >= r.threshold) {
      while (current >= 0 && rel_so_far == cut[current]) {
        sum += best;
        --current;
      }
      --rel_so_far;
    }
  }
  for (; current >= 0; --current) sum += best;
  return sum / static_cast<double>(levels.size());
}

double utility(const Ranking& r, const std::vector<double>& p, int64_t num_docs) {
  const int64_t a = r.num_rel_ret(), ret = r.num_ret(), rel = r.num_rel;
  return p[0] * static_cast<double>(a) + p[1] * static_cast<double>(ret - a) +
         p[2] * static_cast<double>(rel - a) + p[3] * static_cast<double>(num_docs + a - ret - rel);
}

double bin_g(const Ranking& r) {
  int64_t rel_so_far = 0;
  double sum = 0.0;
  for (int64_t i = 0; i < r.num_ret(); ++i) {
    if (r.rels[i] >= r.threshold) {
      ++rel_so_far;
      sum += 1.0 / std::log2(static_cast<double>(3 + i - rel_so_far));
    }
  }
  return rel_so_far ? sum / static_cast<double>(r.num_rel) : 0.0;
}

// The ideal ranking walked one document at a time, from the top gain level down, as
// trec_eval's G, ndcg_rel and Rndcg walk it.
struct IdealWalk {
  const std::vector<Gain>& g;
  int64_t level;
  int64_t at_level = 0;
  double gain;
  explicit IdealWalk(const std::vector<Gain>& gains)
      : g(gains), level(static_cast<int64_t>(gains.size()) - 1),
        gain(level >= 0 ? gains[level].gain : 0.0) {}
  void next() {
    ++at_level;
    while (level >= 0 && at_level > g[level].count) {
      at_level = 1;
      --level;
      gain = level >= 0 ? g[level].gain : 0.0;
    }
  }
};

double g_measure(const Ranking& r, const std::vector<double>& pairs) {
  const std::vector<Gain> g = gains(r, pairs);
  IdealWalk ideal(g);
  constexpr double kMinCost = 1.0;
  double results_g = 0, sum_results = 0, sum_ideal = 0, sum_cost = 0;
  int64_t i = 0;
  for (; i < r.num_ret() && ideal.gain > 0.0; ++i) {
    const double gain = gain_of(r.rels[i], g);
    sum_results += gain;
    ideal.next();
    if (ideal.gain > 0.0) sum_ideal += ideal.gain;
    sum_cost += ideal.gain >= kMinCost ? ideal.gain : kMinCost;
    if (gain != 0) results_g += gain / std::log2(2 + sum_cost - sum_results);
  }
  for (; i < r.num_ret(); ++i) {
    const double gain = gain_of(r.rels[i], g);
    sum_results += gain;
    sum_cost += kMinCost;
    if (gain != 0) results_g += gain / std::log2(2 + sum_cost - sum_results);
  }
  while (ideal.gain > 0.0) {
    ideal.next();
    if (ideal.gain > 0.0) sum_ideal += ideal.gain;
  }
  return sum_ideal > 0.0 ? results_g / sum_ideal : 0.0;
}

double ndcg_rel(const Ranking& r, const std::vector<double>& pairs) {
  const std::vector<Gain> g = gains(r, pairs);
  IdealWalk ideal(g);
  double dcg = 0, ideal_dcg = 0, sum = 0;
  int64_t num_rel = 0, num_rel_ret = 0, i = 0;
  for (; i < r.num_ret() && ideal.gain > 0.0; ++i) {
    const double gain = gain_of(r.rels[i], g);
    if (gain != 0) dcg += gain / r.discount(i);
    ideal.next();
    if (ideal.gain > 0.0) {
      ++num_rel;
      ideal_dcg += ideal.gain / r.discount(i);
    }
    if (gain > 0) {
      sum += dcg / ideal_dcg;
      ++num_rel_ret;
    }
  }
  for (; i < r.num_ret(); ++i) {
    const double gain = gain_of(r.rels[i], g);
    if (gain != 0) dcg += gain / r.discount(i);
    if (gain > 0) {
      sum += dcg / ideal_dcg;
      ++num_rel_ret;
    }
  }
  for (; ideal.gain > 0.0; ++i) {
    ideal.next();
    if (ideal.gain > 0.0) {
      ++num_rel;
      ideal_dcg += ideal.gain / r.discount(i);
    }
  }
  sum += static_cast<double>(num_rel - num_rel_ret) * dcg / ideal_dcg;
  return sum > 0.0 ? sum / static_cast<double>(num_rel) : 0.0;
}

double rndcg(const Ranking& r, const std::vector<double>& pairs) {
  if (r.num_rel == 0) return 0.0;
  const std::vector<Gain> g = gains(r, pairs);
  IdealWalk ideal(g);
  double dcg = 0, ideal_dcg = 0, sum = 0, old_gain = ideal.gain;
  int64_t changes = 0, i = 0;
  auto boundary = [&] {
    if (old_gain != ideal.gain) {
      if (ideal_dcg > 0.0) {
        sum += dcg / ideal_dcg;
        ++changes;
      }
      old_gain = ideal.gain;
    }
  };
  for (; i < r.num_ret() && ideal.gain > 0.0; ++i) {
    const double gain = gain_of(r.rels[i], g);
    ideal.next();
    boundary();
    if (gain != 0) dcg += gain / r.discount(i);
    if (ideal.gain > 0.0) ideal_dcg += ideal.gain / r.discount(i);
  }
  if (i < r.num_ret()) {
    for (; i < r.num_ret(); ++i) {
      const double gain = gain_of(r.rels[i], g);
      if (gain != 0) dcg += gain / r.discount(i);
    }
    if (ideal_dcg > 0.0) {
      sum += dcg / ideal_dcg;
      ++changes;
    }
  }
  for (; ideal.gain > 0.0; ++i) {
    ideal.next();
    boundary();
    if (ideal.gain > 0.0) ideal_dcg += ideal.gain / r.discount(i);
  }
  return sum / static_cast<double>(changes);
}

void relative_p(const Ranking& r, const std::vector<double>& cutoffs, double* out) {
  for (size_t c = 0; c < cutoffs.size(); ++c) {
    const int64_t k = cutoff(cutoffs[c]);
    out[c] = r.num_rel ? static_cast<double>(r.found_in_top(k)) /
                             static_cast<double>(std::min(k, r.num_rel))
                       : 0.0;
  }
}

// Relevance characters of the top documents, as char codes (0 past the ranking).
void relstring(const Ranking& r, size_t len, double* out) {
  for (size_t i = 0; i < len; ++i) {
    char c = 0;
    if (static_cast<int64_t>(i) < r.num_ret()) {
      const int32_t rel = r.rels[i];
      c = rel > 9 ? '>' : rel >= 0 ? static_cast<char>('0' + rel)
          : rel == Qrels::kNotInPool ? '-' : rel == Qrels::kUnjudged ? '.' : '<';
    }
    out[i] = c;
  }
}

void compute(const MeasureSpec& spec, const Ranking& r, const EvalOptions& o, double* out) {
  const std::vector<double>& params = spec.params;
  switch (spec.measure) {
    case Measure::kNumRet: *out = static_cast<double>(r.num_ret()); return;
    case Measure::kNumRel: *out = static_cast<double>(r.num_rel); return;
    case Measure::kNumRelRet: *out = static_cast<double>(r.num_rel_ret()); return;
    case Measure::kMap: *out = average_precision(r, INT64_MAX); return;
    case Measure::kGmMap:
      *out = std::log(std::max(average_precision(r, INT64_MAX), kMinGeoMean));
      return;
    case Measure::kRprec:
      *out = r.num_rel ? static_cast<double>(r.found_in_top(r.num_rel)) /
                             static_cast<double>(r.num_rel)
                       : 0.0;
      return;
    case Measure::kBpref: *out = bpref(r); return;
    case Measure::kRecipRank: {
      // the first rank where the running count of relevant documents becomes 1
      auto first = std::upper_bound(r.found.begin(), r.found.end(), int64_t{0});
      *out = first == r.found.end() ? 0.0 : 1.0 / static_cast<double>(first - r.found.begin());
      return;
    }
    case Measure::kIprecAtRecall: iprec_at_recall(r, params, o.version, out); return;
    case Measure::kP:
      for (size_t c = 0; c < params.size(); ++c) {
        out[c] = static_cast<double>(r.found_in_top(cutoff(params[c]))) / params[c];
      }
      return;
    case Measure::kRecall:
      for (size_t c = 0; c < params.size(); ++c) {
        out[c] = r.num_rel ? static_cast<double>(r.found_in_top(cutoff(params[c]))) /
                                 static_cast<double>(r.num_rel)
                           : 0.0;
      }
      return;
    case Measure::kNdcg: *out = ndcg(r, params); return;
    case Measure::kNdcgCut: ndcg_cut(r, params, out); return;
    case Measure::kMapCut:
      for (size_t c = 0; c < params.size(); ++c) out[c] = average_precision(r, cutoff(params[c]));
      return;
    case Measure::kSuccess:
      for (size_t c = 0; c < params.size(); ++c) {
        out[c] = r.found_in_top(cutoff(params[c])) > 0 ? 1.0 : 0.0;
      }
      return;
    case Measure::kRbp: *out = rbp(r, params[0]); return;
    case Measure::kRbpResid: *out = rbp_residual(r, params[0]); return;
    case Measure::kRelstring: relstring(r, static_cast<size_t>(params[0]), out); return;
    case Measure::kInfAP: *out = inf_ap(r); return;
    case Measure::kGmBpref: *out = std::log(std::max(bpref(r), kMinGeoMean)); return;
    case Measure::kRprecMult: rprec_mult(r, params, out); return;
    case Measure::kUtility: *out = utility(r, params, o.num_docs_in_coll); return;
    case Measure::k11ptAvg: *out = eleven_pt_avg(r, params, o.version); return;
    case Measure::kBinG: *out = bin_g(r); return;
    case Measure::kG: *out = g_measure(r, params); return;
    case Measure::kNdcgRel: *out = ndcg_rel(r, params); return;
    case Measure::kRndcg: *out = rndcg(r, params); return;
    case Measure::kRelativeP: relative_p(r, params, out); return;
    case Measure::kSetP:
      *out = r.num_ret() ? static_cast<double>(r.num_rel_ret()) / static_cast<double>(r.num_ret())
                         : 0.0;
      return;
    case Measure::kSetRelativeP:
      *out = r.num_ret() && r.num_rel ? static_cast<double>(r.num_rel_ret()) /
                                            static_cast<double>(std::min(r.num_ret(), r.num_rel))
                                      : 0.0;
      return;
    case Measure::kSetRecall:
      *out = r.num_rel ? static_cast<double>(r.num_rel_ret()) / static_cast<double>(r.num_rel)
                       : 0.0;
      return;
    case Measure::kSetMap:
      *out = r.num_ret() && r.num_rel
                 ? (static_cast<double>(r.num_rel_ret()) * static_cast<double>(r.num_rel_ret())) /
                       (static_cast<double>(r.num_ret()) * static_cast<double>(r.num_rel))
                 : 0.0;
      return;
    case Measure::kSetF:
      if (r.num_rel_ret()) {
        const double p = static_cast<double>(r.num_rel_ret()) / static_cast<double>(r.num_ret());
        const double rec = static_cast<double>(r.num_rel_ret()) / static_cast<double>(r.num_rel);
        const double x = params[0];
        *out = (x + 1.0) * p * rec / (x * p + rec);
      } else {
        *out = 0.0;
      }
      return;
    case Measure::kUnj: {
      // trec_eval 10's m_unjudged.c: unjudged documents among the top min(cutoff, num_ret),
      // divided by the cutoff
      int64_t unjudged = 0, done = 0;
      for (size_t c = 0; c < params.size(); ++c) {
        for (; done < r.depth(cutoff(params[c])); ++done) unjudged += r.rels[done] < 0;
        out[c] = static_cast<double>(unjudged) / params[c];
      }
      return;
    }
    case Measure::kNumNonrelJudgedRet: {
      int64_t n = 0;
      for (int32_t rel : r.rels) n += rel >= 0 && rel < r.threshold;
      *out = static_cast<double>(n);
      return;
    }
  }
}

bool has_cutoffs(Measure m) {
  return m == Measure::kP || m == Measure::kRecall || m == Measure::kNdcgCut ||
         m == Measure::kMapCut || m == Measure::kSuccess || m == Measure::kIprecAtRecall ||
         m == Measure::kRelativeP || m == Measure::kRprecMult || m == Measure::kUnj;
}

bool has_gains(Measure m) {
  return m == Measure::kNdcg || m == Measure::kG || m == Measure::kNdcgRel ||
         m == Measure::kRndcg;
}

}  // namespace

size_t MeasureSpec::width() const {
  if (measure == Measure::kRelstring) return static_cast<size_t>(params.at(0));
  return has_cutoffs(measure) ? params.size() : 1;
}

void validate(const MeasureSpec& spec) {
  const auto& p = spec.params;
  if (has_cutoffs(spec.measure)) {
    if (p.empty()) core::fail_value("a cutoff measure needs at least one cutoff");
    for (size_t i = 0; i < p.size(); ++i) {
      bool integral =
          spec.measure != Measure::kIprecAtRecall && spec.measure != Measure::kRprecMult;
      const bool bad_integer = integral && (p[i] < 1 || p[i] != std::floor(p[i]) || p[i] > 9.0e18);
      if (!std::isfinite(p[i]) || (!integral && p[i] < 0) || bad_integer) {
        core::fail_value("cutoff ", p[i], " must be a positive integer");
      }
      if (i && p[i] <= p[i - 1]) core::fail_value("cutoffs must increase without repeats");
    }
  } else if (spec.measure == Measure::kRbp || spec.measure == Measure::kRbpResid) {
    if (p.size() != 1 || !(p[0] > 0 && p[0] < 1)) {
      core::fail_value("rbp needs one persistence p in (0, 1)");
    }
  } else if (spec.measure == Measure::kRelstring) {
    if (p.size() != 1 || !(p[0] >= 0 && p[0] <= 1e6 && p[0] == std::floor(p[0]))) {
      core::fail_value("relstring needs one length in [0, 1e6]");
    }
  } else if (spec.measure == Measure::kUtility) {
    auto finite = [](double x) { return std::isfinite(x); };
    if (p.size() != 4 || !std::all_of(p.begin(), p.end(), finite)) {
      core::fail_value("utility needs four finite coefficients");
    }
  } else if (spec.measure == Measure::k11ptAvg) {
    if (p.empty()) core::fail_value("11pt_avg needs at least one recall level");
    for (double x : p) {
      if (!(x >= 0 && x <= 1)) core::fail_value("11pt_avg recall level ", x, " must be in [0, 1]");
    }
  } else if (spec.measure == Measure::kSetF) {
    if (p.size() != 1 || !std::isfinite(p[0])) core::fail_value("set_F needs one finite beta");
  } else if (has_gains(spec.measure)) {
    if (p.size() % 2) core::fail_value("gains come as (level, gain) pairs");
    for (size_t i = 0; i < p.size(); i += 2) {
      if (!(p[i] >= 0 && p[i] == std::floor(p[i]) && p[i] < (1 << 20)) ||
          !std::isfinite(p[i + 1])) {
        core::fail_value("ndcg gain level ", p[i], " must be an integer >= 0 with a finite gain");
      }
      for (size_t j = 0; j < i; j += 2) {
        if (p[j] == p[i]) core::fail_value("ndcg gain of level ", p[i], " given twice");
      }
    }
  } else if (!p.empty()) {
    core::fail_value("this measure takes no parameters");
  }
}

Evaluation evaluate(const Qrels& qrels, const Run& run, const std::vector<MeasureSpec>& specs,
                    const EvalOptions& options) {
  for (const MeasureSpec& s : specs) validate(s);
  Evaluation ev;
  std::vector<size_t> offsets;
  for (const MeasureSpec& s : specs) {
    offsets.push_back(ev.width);
    ev.width += s.width();
  }
  const std::vector<uint32_t> run_query = select_queries(qrels, run, options.complete, ev);
  ev.values.assign(ev.queries.size() * ev.width, 0.0);
  size_t longest = 1;
  for (uint32_t rq : run_query) {
    if (rq != index::StringMap::kNone) longest = std::max(longest, run.docs(rq).size());
  }
  std::vector<double> log2s(std::min<uint64_t>(longest, options.max_docs));
  for (size_t i = 0; i < log2s.size(); ++i) log2s[i] = std::log2(static_cast<double>(i + 2));

  core::parallel_for(ev.queries.size(), options.threads, [&](size_t row) {
    const uint32_t q = ev.queries[row];
    Ranking r;
    r.levels = &qrels.levels(q);
    r.log2s = &log2s;
    r.threshold = options.relevance_level;
    for (size_t l = std::max<int64_t>(options.relevance_level, 0); l < r.levels->size(); ++l) {
      r.num_rel += (*r.levels)[l];
    }
    double* out = ev.values.data() + row * ev.width;
    if (ev.missing[row]) {
      // trec_eval -c does not evaluate a query the run lacks: it adds nothing to the sums,
      // except log(1e-5) for the geometric means
      for (size_t m = 0; m < specs.size(); ++m) {
        const Measure k = specs[m].measure;
        if (k == Measure::kNumRel) out[offsets[m]] = static_cast<double>(r.num_rel);
        if (k == Measure::kGmMap || k == Measure::kGmBpref) {
          out[offsets[m]] = std::log(kMinGeoMean);
        }
      }
      return;
    }
    std::vector<uint32_t> ranked = run.ranked(run_query[row], options.version);
    if (ranked.size() > options.max_docs) ranked.resize(options.max_docs);
    r.rels.reserve(ranked.size());
    for (uint32_t doc : ranked) {
      int32_t rel = qrels.relevance(q, run.docno(doc));
      if (options.judged_only && rel < 0) continue;
      r.rels.push_back(rel);
    }
    r.finish();
    for (size_t m = 0; m < specs.size(); ++m) compute(specs[m], r, options, out + offsets[m]);
  });
  return ev;
}

}  // namespace mirkit::eval
