#include "eval/prefs.hpp"

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <exception>
#include <numeric>
#include <unordered_map>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "eval/lines.hpp"

namespace mirkit::eval {

using lines::fail_line;
using lines::quoted;

void Prefs::add(std::string_view qid, std::string_view jg, std::string_view jsg,
                std::string_view docno, double rel, size_t line) {
  if (qid.empty() || jg.empty() || jsg.empty() || docno.empty()) {
    fail_line(line, "empty query id, judgment group, subgroup or document id");
  }
  if (!(std::fabs(rel) <= FLT_MAX)) {
    fail_line(line, core::message("rel_level ", rel, " is not a finite 32-bit float"));
  }
  bool inserted = false;
  const uint32_t query = m_qids.insert(qid, 0, inserted);
  if (inserted) m_entries.emplace_back();
  Entry e{};
  e.jg = m_strings.insert(jg, 0, inserted);
  e.jsg = m_strings.insert(jsg, 0, inserted);
  e.docno = m_strings.insert(docno, 0, inserted);
  e.rel = rel;
  e.line = static_cast<uint32_t>(std::min<size_t>(line, UINT32_MAX));
  m_entries[query].push_back(e);
  ++m_size;
}

namespace {

// Reads one file format: `n_fields` fields, the judgment subgroup at `jsg_field` (or "0" when
// it is -1), the docno and rel_level the last two.
Prefs parse_lines(std::string_view text, size_t n_fields, int jsg_field, const char* layout) {
  Prefs prefs;
  lines::for_each_line(text, [&](size_t line_no, std::string_view line) {
    std::string_view f[6];
    const size_t n = lines::split(line, f, n_fields + 1);
    if (n != n_fields) {
      fail_line(line_no, core::message("expected ", n_fields, " fields '", layout, "', got ", n,
                                       n > n_fields ? " or more" : ""));
    }
    const std::string_view level = f[n_fields - 1];
    double rel = 0;
    const char* end = level.data() + level.size();
    auto [ptr, ec] = std::from_chars(lines::number_start(level), end, rel);
    if (ec != std::errc() || ptr != end) {
      fail_line(line_no, core::message("rel_level ", quoted(level), " is not a number"));
    }
    prefs.add(f[0], f[1], jsg_field < 0 ? std::string_view("0") : f[jsg_field], f[n_fields - 2],
              rel, line_no);
  });
  return prefs;
}

}  // namespace

Prefs Prefs::parse(std::string_view text) {
  return parse_lines(text, 5, 2, "qid jg jsg docno rel_level");
}

Prefs Prefs::parse_qrels(std::string_view text) {
  return parse_lines(text, 4, -1, "qid jg docno rel_level");
}

namespace {

constexpr uint32_t kAbsent = UINT32_MAX;

// An equivalence class of a one-subgroup judgment group: the documents at one rel_level, as
// internal ranks members[begin, end) of the group, increasing.
struct Ec {
  double rel;
  size_t begin, end;
};

// One judgment group of a query, with trec_eval's JG counts.
struct Group {
  uint32_t name;
  std::vector<Ec> ecs;           // the classes by decreasing rel_level; empty for a pa group
  std::vector<uint32_t> members;
  std::vector<uint64_t> pa;      // several subgroups: bit j of row i: i preferred to j
  std::vector<double> rel;       // pa group: each document's rel_level, -1 if not in it
  int64_t ful_ret = 0, poss_ret = 0, ful_imp = 0, poss_imp = 0, notoccur = 0;
  int64_t num_rel = 0, num_rel_ret = 0, num_nonrel = 0, num_nonrel_ret = 0;
};

// trec_eval's RESULTS_PREFS of one query.
struct QueryPrefs {
  int64_t judged = 0, judged_ret = 0;
  size_t words = 0;                 // 64-bit words per pa row
  std::vector<Group> groups;
  std::vector<uint32_t> docno_of;   // string id of each internal rank
  // Preference pairs (i, j): i preferred to j by one group, one entry per group, as
  // (min * judged + max) * 2 + (i > j); sorted once built. trec_eval's counts array, sparse.
  std::vector<uint64_t> pairs;
  bool want_pairs = false;

  bool bit(const Group& g, int64_t i, int64_t j) const {
    return (g.pa[static_cast<size_t>(i) * words + static_cast<size_t>(j) / 64] >> (j % 64)) & 1;
  }
  void add_pair(int64_t i, int64_t j) {
    if (!want_pairs) return;
    const auto lo = static_cast<uint64_t>(std::min(i, j));
    const auto hi = static_cast<uint64_t>(std::max(i, j));
    pairs.push_back((lo * static_cast<uint64_t>(judged) + hi) * 2 + (i > j));
  }
};

struct Row {
  uint32_t jg, jsg;
  double rel;
  uint32_t rank;
  uint32_t line;
};

class Former {
 public:
  Former(const Prefs& prefs, uint32_t query, QueryPrefs& out)
      : m_prefs(prefs), m_q(query), m_out(out) {}

  [[noreturn]] void fail(const Group& g, const std::string& what, uint32_t line) const {
    const std::string at = line ? core::message(" (line ", line, ")") : std::string();
    core::fail_value("query ", quoted(m_prefs.qid(m_q)), ", judgment group ",
                     quoted(m_prefs.str(g.name)), ": ", what, at);
  }
  std::string docno(uint32_t rank) const { return quoted(m_prefs.str(m_out.docno_of[rank])); }

  // Equivalence classes (form_jg_ec, add_ec_pref_to_jg).
  void ec_group(const Row* rows, size_t n, Group& g) {
    for (size_t i = 0; i < n; ++i) {
      if (i == 0 || rows[i].rel != rows[i - 1].rel) {
        g.ecs.push_back(Ec{rows[i].rel, g.members.size(), g.members.size()});
      }
      g.members.push_back(rows[i].rank);
      g.ecs.back().end = g.members.size();
    }
    const int64_t njr = m_out.judged_ret;
    for (size_t e1 = 0; e1 < g.ecs.size(); ++e1) {
      const Ec& a = g.ecs[e1];
      size_t ret = a.begin;
      while (ret < a.end && g.members[ret] < njr) ++ret;
      if (a.rel > 0.0) {
        g.num_rel_ret += static_cast<int64_t>(ret - a.begin);
        g.num_rel += static_cast<int64_t>(a.end - a.begin);
      } else {
        g.num_nonrel_ret += static_cast<int64_t>(ret - a.begin);
        g.num_nonrel += static_cast<int64_t>(a.end - a.begin);
      }
      for (size_t e2 = e1 + 1; e2 < g.ecs.size(); ++e2) {
        const Ec& b = g.ecs[e2];
        for (size_t x = a.begin; x < a.end; ++x) {
          for (size_t y = b.begin; y < b.end; ++y) {
            const int64_t r1 = g.members[x], r2 = g.members[y];
            if (r1 == r2) {
              const Row* at = std::find_if(rows, rows + n, [&](const Row& r) {
                return r.rank == r2 && r.rel == b.rel;
              });
              fail(g, "document " + docno(static_cast<uint32_t>(r1)) +
                          " has two rel_levels in one subgroup", at->line);
            }
            m_out.add_pair(r1, r2);
            if (r1 < r2) {
              if (r2 < njr) ++g.ful_ret;
              else if (r1 < njr) ++g.ful_imp;
              else ++g.notoccur;
            } else {
              if (r1 < njr) ++g.poss_ret;
              else if (r2 < njr) ++g.poss_imp;
              else ++g.notoccur;
            }
          }
        }
      }
    }
    g.poss_ret += g.ful_ret;
    g.poss_imp += g.ful_imp;
  }

  // Preference array with transitive preferences (form_jg_pa, add_transitives,
  // add_pa_pref_to_jg).
  void pa_group(const Row* rows, size_t n, Group& g) {
    const int64_t judged = m_out.judged, njr = m_out.judged_ret;
    const size_t words = m_out.words;
    g.pa.assign(static_cast<size_t>(judged) * words, 0);
    g.rel.assign(static_cast<size_t>(judged), -1.0);
    auto set = [&](size_t i, size_t j) { g.pa[i * words + j / 64] |= uint64_t{1} << (j % 64); };
    for (size_t i = 0; i < n; ++i) {
      double& rel = g.rel[rows[i].rank];
      if ((rel > 0.0 && rows[i].rel == 0.0) || (rel == 0.0 && rows[i].rel > 0.0)) {
        fail(g, "document " + docno(rows[i].rank) + " has both 0 and non-0 rel_level",
             rows[i].line);
      }
      rel = rows[i].rel;
      // preferred to every document of its subgroup at a lower level (rows are sorted by
      // subgroup, then decreasing level)
      size_t j = i + 1;
      while (j < n && rows[j].jsg == rows[i].jsg && rows[j].rel == rows[i].rel) ++j;
      for (; j < n && rows[j].jsg == rows[i].jsg; ++j) set(rows[i].rank, rows[j].rank);
    }
    // Transitive closure of the reflexive relation: what trec_eval's repeated boolean matrix
    // products converge to (Warshall's algorithm gets there in O(n^3 / 64)).
    for (int64_t i = 0; i < judged; ++i) set(i, i);
    for (int64_t k = 0; k < judged; ++k) {
      const uint64_t* row_k = &g.pa[static_cast<size_t>(k) * words];
      for (int64_t i = 0; i < judged; ++i) {
        if (!m_out.bit(g, i, k)) continue;
        uint64_t* row_i = &g.pa[static_cast<size_t>(i) * words];
        for (size_t w = 0; w < words; ++w) row_i[w] |= row_k[w];
      }
    }
    for (int64_t i = 0; i < judged; ++i) {
      const auto d = static_cast<size_t>(i);
      g.pa[d * words + d / 64] &= ~(uint64_t{1} << (d % 64));
    }
    for (int64_t i = 0; i < judged; ++i) {
      for (int64_t j = i + 1; j < judged; ++j) {
        if (m_out.bit(g, i, j) && m_out.bit(g, j, i)) {
          fail(g, "its subgroups prefer " + docno(static_cast<uint32_t>(i)) + " and " +
                      docno(static_cast<uint32_t>(j)) + " each to the other", 0);
        }
      }
    }
    for (int64_t i = 0; i < judged; ++i) {
      const double rel = g.rel[i];
      int64_t& count = rel > 0.0 ? (i < njr ? g.num_rel_ret : g.num_rel)
                                 : (i < njr ? g.num_nonrel_ret : g.num_nonrel);
      if (rel >= 0.0) ++count;
    }
    g.num_rel += g.num_rel_ret;
    g.num_nonrel += g.num_nonrel_ret;
    for (int64_t i = 0; i < judged; ++i) {
      const uint64_t* row = &g.pa[static_cast<size_t>(i) * words];
      for (size_t w = 0; w < words; ++w) {
        for (uint64_t bits = row[w]; bits; bits &= bits - 1) {
          const int64_t j = static_cast<int64_t>(w * 64) + __builtin_ctzll(bits);
          m_out.add_pair(i, j);
          if (i < njr) {
            if (j < i) ++g.poss_ret;       // area A2: not fulfilled
            else if (j < njr) ++g.ful_ret;  // A1
            else ++g.ful_imp;               // A3
          } else {
            if (j < njr) ++g.poss_imp;      // A4
            else ++g.notoccur;              // A5
          }
        }
      }
    }
    g.poss_ret += g.ful_ret;
    g.poss_imp += g.ful_imp;
  }

 private:
  const Prefs& m_prefs;
  uint32_t m_q;
  QueryPrefs& m_out;
};

// form_prefs_counts for one query (rq: the run's query, or kNone for a run without it).
QueryPrefs form(const Prefs& prefs, uint32_t q, const Run& run, uint32_t rq, uint64_t max_docs,
                int version, bool want_pairs) {
  QueryPrefs out;
  out.want_pairs = want_pairs;
  const std::vector<Prefs::Entry>& entries = prefs.entries(q);
  std::unordered_map<uint32_t, uint32_t> rank;  // docno string id -> internal rank
  for (const auto& e : entries) rank.emplace(e.docno, kAbsent);
  if (rq != index::StringMap::kNone) {
    // form_prefs_and_ranks sorts by score (9: a float, 10: a double) descending, ties by
    // docno ascending
    std::vector<uint32_t> docs = run.docs(rq);
    std::sort(docs.begin(), docs.end(), [&](uint32_t a, uint32_t b) {
      const double sa = version < 10 ? run.score32(a) : run.score(a);
      const double sb = version < 10 ? run.score32(b) : run.score(b);
      if (sa != sb) return sa > sb;
      return run.docno(a) < run.docno(b);
    });
    if (docs.size() > max_docs) docs.resize(max_docs);
    for (uint32_t doc : docs) {
      const uint32_t id = prefs.find_str(run.docno(doc));
      auto it = id == index::StringMap::kNone ? rank.end() : rank.find(id);
      if (it == rank.end()) continue;
      it->second = static_cast<uint32_t>(out.docno_of.size());
      out.docno_of.push_back(id);
    }
  }
  out.judged_ret = static_cast<int64_t>(out.docno_of.size());
  std::vector<uint32_t> rest;  // judged, not retrieved: ranked after, in docno order
  for (const auto& [id, r] : rank) {
    if (r == kAbsent) rest.push_back(id);
  }
  std::sort(rest.begin(), rest.end(),
            [&](uint32_t a, uint32_t b) { return prefs.str(a) < prefs.str(b); });
  for (uint32_t id : rest) {
    rank[id] = static_cast<uint32_t>(out.docno_of.size());
    out.docno_of.push_back(id);
  }
  out.judged = static_cast<int64_t>(out.docno_of.size());
  out.words = (static_cast<size_t>(out.judged) + 63) / 64;

  std::vector<Row> rows;
  rows.reserve(entries.size());
  for (const auto& e : entries) {
    const double rel = version < 10 ? static_cast<float>(e.rel) : e.rel;  // atof into a float
    rows.push_back(Row{e.jg, e.jsg, rel, rank[e.docno], e.line});
  }
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (a.jg != b.jg) return prefs.str(a.jg) < prefs.str(b.jg);
    if (a.jsg != b.jsg) return prefs.str(a.jsg) < prefs.str(b.jsg);
    if (a.rel != b.rel) return a.rel > b.rel;
    return a.rank < b.rank;
  });
  Former former(prefs, q, out);
  for (size_t start = 0; start < rows.size();) {
    size_t end = start;
    bool several = false;
    for (; end < rows.size() && rows[end].jg == rows[start].jg; ++end) {
      several |= rows[end].jsg != rows[start].jsg;
    }
    Group& g = out.groups.emplace_back();
    g.name = rows[start].jg;
    if (several) {
      former.pa_group(&rows[start], end - start, g);
    } else {
      former.ec_group(&rows[start], end - start, g);
    }
    start = end;
  }
  std::sort(out.pairs.begin(), out.pairs.end());
  return out;
}

enum class Scope { kAll, kRet, kImp };

int64_t fulfilled(const Group& g, Scope s) {
  return s == Scope::kRet ? g.ful_ret : g.ful_ret + g.ful_imp;
}

int64_t possible(const Group& g, Scope s) {
  return s == Scope::kRet ? g.poss_ret
         : s == Scope::kImp ? g.poss_ret + g.poss_imp
                            : g.poss_ret + g.poss_imp + g.notoccur;
}

double simp(const QueryPrefs& p, Scope s) {
  int64_t ful = 0, poss = 0;
  for (const Group& g : p.groups) {
    ful += fulfilled(g, s);
    poss += possible(g, s);
  }
  return poss ? static_cast<double>(ful) / static_cast<double>(poss) : 0.0;
}

double avgjg(const QueryPrefs& p, Scope s) {
  double sum = 0.0;
  for (const Group& g : p.groups) {
    const int64_t poss = possible(g, s);
    if (poss) sum += static_cast<double>(fulfilled(g, s)) / static_cast<double>(poss);
  }
  return sum > 0.0 ? sum / static_cast<double>(p.groups.size()) : 0.0;
}

// prefs_pair*: per document pair that any group orders, the share of the groups' preferences
// that the ranking fulfils; summed in trec_eval's loop order (pairs of retrieved documents,
// then retrieved with unretrieved; pairs of unretrieved ones count as failures).
double pair(const QueryPrefs& p, Scope s) {
  const auto judged = static_cast<uint64_t>(p.judged), njr = static_cast<uint64_t>(p.judged_ret);
  double sum = 0.0;
  int64_t num_pairs = 0;
  for (int pass = 0; pass < 3; ++pass) {
    if ((pass == 1 && s == Scope::kRet) || (pass == 2 && s != Scope::kAll)) break;
    for (size_t k = 0; k < p.pairs.size();) {
      const uint64_t key = p.pairs[k] / 2;
      uint64_t forward = 0, backward = 0;
      for (; k < p.pairs.size() && p.pairs[k] / 2 == key; ++k) {
        ++(p.pairs[k] % 2 ? backward : forward);
      }
      const uint64_t lo = key / judged, hi = key % judged;
      const int area = hi < njr ? 0 : lo < njr ? 1 : 2;
      if (area != pass) continue;
      ++num_pairs;
      if (area < 2) sum += static_cast<double>(forward) / static_cast<double>(forward + backward);
    }
  }
  return num_pairs ? sum / static_cast<double>(num_pairs) : 0.0;
}

// m_prefs_avgjg_Rnonrel*.c's recalculate(): the group's preferences with only its first R
// non-relevant documents (rank order) kept.
void recalculate(const QueryPrefs& p, const Group& g, bool ret, int64_t& ful, int64_t& poss) {
  const int64_t njr = p.judged_ret;
  ful = poss = 0;
  if (!g.ecs.empty()) {
    // the last class (lowest level) cut to its first R documents; trec_eval reads R of them
    // even when it has fewer (possible with negative levels), here it stops at its end
    const Ec& last = g.ecs.back();
    const auto r = static_cast<size_t>(ret ? g.num_rel_ret : g.num_rel);
    const Ec nonrel{0.0, last.begin, last.begin + std::min(r, last.end - last.begin)};
    auto count = [&](const Ec& a, const Ec& b) {
      for (size_t x = a.begin; x < a.end && (!ret || g.members[x] < njr); ++x) {
        for (size_t y = b.begin; y < b.end && (!ret || g.members[y] < njr); ++y) {
          if (g.members[x] < g.members[y] && g.members[x] < njr) ++ful;
          else ++poss;
        }
      }
    };
    const size_t n = g.ecs.size();
    for (size_t e1 = 0; e1 < n; ++e1) {
      for (size_t e2 = e1 + 1; e2 + 1 < n; ++e2) count(g.ecs[e1], g.ecs[e2]);
    }
    for (size_t e1 = 0; e1 < n; ++e1) count(g.ecs[e1], nonrel);
  } else {
    const int64_t judged = p.judged, limit = ret ? njr : judged;
    int64_t first_discarded = 0, seen = 0;
    for (; first_discarded < limit; ++first_discarded) {
      if (g.rel[first_discarded] == 0.0 && ++seen == g.num_rel + 1) break;
    }
    auto skip = [&](int64_t i) { return i >= first_discarded && g.rel[i] == 0.0; };
    for (int64_t i = 0; i < (ret ? njr : judged); ++i) {
      if (skip(i)) continue;
      for (int64_t j = 0; j < (ret ? njr : judged); ++j) {
        if (j == i || skip(j) || !p.bit(g, i, j)) continue;
        if (i < njr && j > i) ++ful;  // areas A1 and A3
        else ++poss;                  // A2, A4, A5
      }
    }
  }
  poss += ful;
}

double avgjg_rnonrel(const QueryPrefs& p, bool ret) {
  double sum = 0.0;
  for (const Group& g : p.groups) {
    const int64_t r = ret ? g.num_rel_ret : g.num_rel;
    const int64_t n = ret ? g.num_nonrel_ret : g.num_nonrel;
    int64_t ful, poss;
    if (r >= n) {
      // R - N fulfilled preferences added for each relevant retrieved document
      const Scope s = ret ? Scope::kRet : Scope::kAll;
      ful = fulfilled(g, s) + g.num_rel_ret * (r - n);
      poss = possible(g, s) + g.num_rel * (r - n);
    } else {
      recalculate(p, g, ret, ful, poss);
    }
    // 0 / 0 is NaN here, as in trec_eval, and then leaves the query's value 0
    sum += static_cast<double>(ful) / static_cast<double>(poss);
  }
  return sum > 0.0 ? sum / static_cast<double>(p.groups.size()) : 0.0;
}

double value(PrefsMeasure m, const QueryPrefs& p) {
  int64_t n = 0;
  switch (m) {
    case PrefsMeasure::kNumPrefsPoss:
      for (const Group& g : p.groups) n += possible(g, Scope::kAll);
      return static_cast<double>(n);
    case PrefsMeasure::kNumPrefsFul:
      for (const Group& g : p.groups) n += fulfilled(g, Scope::kAll);
      return static_cast<double>(n);
    case PrefsMeasure::kNumPrefsFulRet:
      for (const Group& g : p.groups) n += fulfilled(g, Scope::kRet);
      return static_cast<double>(n);
    case PrefsMeasure::kSimp: return simp(p, Scope::kAll);
    case PrefsMeasure::kPair: return pair(p, Scope::kAll);
    case PrefsMeasure::kAvgjg: return avgjg(p, Scope::kAll);
    case PrefsMeasure::kAvgjgRnonrel: return avgjg_rnonrel(p, false);
    case PrefsMeasure::kSimpRet: return simp(p, Scope::kRet);
    case PrefsMeasure::kPairRet: return pair(p, Scope::kRet);
    case PrefsMeasure::kAvgjgRet: return avgjg(p, Scope::kRet);
    case PrefsMeasure::kAvgjgRnonrelRet: return avgjg_rnonrel(p, true);
    case PrefsMeasure::kSimpImp: return simp(p, Scope::kImp);
    case PrefsMeasure::kPairImp: return pair(p, Scope::kImp);
    case PrefsMeasure::kAvgjgImp: return avgjg(p, Scope::kImp);
  }
  return 0.0;
}

}  // namespace

Evaluation evaluate_prefs(const Prefs& prefs, const Run& run,
                          const std::vector<PrefsMeasure>& measures, const EvalOptions& options) {
  Evaluation ev;
  ev.width = measures.size();
  const std::vector<uint32_t> run_query = select_queries(prefs, run, options.complete, ev);
  ev.values.assign(ev.queries.size() * ev.width, 0.0);
  const bool want_pairs = std::any_of(measures.begin(), measures.end(), [](PrefsMeasure m) {
    return m == PrefsMeasure::kPair || m == PrefsMeasure::kPairRet || m == PrefsMeasure::kPairImp;
  });
  // an inconsistent query fails the evaluation; the first one in qid order is reported,
  // whatever the threads
  std::vector<std::exception_ptr> errors(ev.queries.size());
  core::parallel_for(ev.queries.size(), options.threads, [&](size_t row) {
    // trec_eval 9 -c does not evaluate a query the run lacks (every value 0); 10 evaluates it
    // on a one-document ranking of no judged document: all its preferences unretrieved
    if (ev.missing[row] && options.version < 10) return;
    try {
      const QueryPrefs p = form(prefs, ev.queries[row], run, run_query[row], options.max_docs,
                                options.version, want_pairs);
      double* out = ev.values.data() + row * ev.width;
      for (size_t m = 0; m < measures.size(); ++m) out[m] = value(measures[m], p);
    } catch (...) {
      errors[row] = std::current_exception();
    }
  });
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return ev;
}

}  // namespace mirkit::eval
