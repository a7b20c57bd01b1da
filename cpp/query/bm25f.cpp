#include "query/bm25f.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "index/bm25.hpp"
#include "query/cursor.hpp"
#include "query/phrase.hpp"

namespace mirkit::query {

void check_bm25f(const Bm25FParams& p, size_t n_fields) {
  if (p.weights.size() != n_fields || p.b.size() != n_fields) {
    core::fail_value("BM25F needs one weight and one b per field (", n_fields, "); got ",
                     p.weights.size(), " weights and ", p.b.size(), " b");
  }
  for (size_t f = 0; f < n_fields; ++f) {
    if (!(std::isfinite(p.weights[f]) && p.weights[f] >= 0)) {
      core::fail_value("BM25F weights must be finite and >= 0; field ", f, " has ", p.weights[f]);
    }
    if (!(p.b[f] >= 0 && p.b[f] <= 1)) {
      core::fail_value("BM25F b must be in [0, 1]; field ", f, " has ", p.b[f]);
    }
  }
  if (!(std::isfinite(p.k1) && p.k1 >= 0)) {
    core::fail_value("BM25F k1 must be finite and >= 0; got ", p.k1);
  }
}

FieldedEngine::FieldedEngine(std::vector<FieldedSegment> segments)
    : m_segments(std::move(segments)) {
  if (!m_segments.empty()) m_n_fields = m_segments[0].fields.size();
  std::vector<uint64_t> totals(m_n_fields, 0);
  for (size_t s = 0; s < m_segments.size(); ++s) {
    const FieldedSegment& seg = m_segments[s];
    if (seg.fields.size() != m_n_fields || m_n_fields == 0) {
      core::fail_value("segment ", s, " has ", seg.fields.size(), " fields; expected ", m_n_fields,
                       " (>= 1)");
    }
    const uint64_t n = seg.fields[0]->n_docs();
    for (size_t f = 1; f < m_n_fields; ++f) {
      if (seg.fields[f]->n_docs() != n) {
        core::fail_value("segment ", s, ": field ", f, " has ", seg.fields[f]->n_docs(),
                         " documents, field 0 has ", n);
      }
    }
    if (seg.deleted.size != 0 && seg.deleted.size != n) {
      core::fail_value("segment ", s, ": ", seg.deleted.size, " deletion flags for ", n,
                       " documents");
    }
    m_live_first.push_back(static_cast<uint32_t>(m_n_live));
    std::vector<uint32_t> rank;
    uint32_t live = 0;
    if (seg.deleted.size != 0) rank.resize(n);
    for (uint64_t d = 0; d < n; ++d) {
      if (seg.deleted.size != 0) {
        rank[d] = live;
        if (seg.deleted[d]) continue;
      }
      ++live;
      for (size_t f = 0; f < m_n_fields; ++f) totals[f] += seg.fields[f]->doc_lengths[d];
    }
    m_live_rank.push_back(std::move(rank));
    m_n_live += live;
  }
  if (m_n_live >= kEndDocid) core::fail_value("too many live documents: ", m_n_live);
  m_totals = totals;
  for (uint64_t t : totals) {
    m_avg.push_back(m_n_live ? static_cast<double>(t) / static_cast<double>(m_n_live) : 0.0);
  }
}

namespace {

// The postings of a clause in one field index: a term's list, or a phrase's documents with
// their phrase frequencies in that field. Returns the postings decoded.
uint64_t field_list(const index::IndexReader& field, const FieldedTerm& t,
                    std::vector<uint32_t>& docs, std::vector<uint32_t>& tfs) {
  if (t.phrase.empty()) {
    const int64_t id = field.find_term(t.term);
    if (id >= 0) field.postings(static_cast<uint32_t>(id), docs, tfs);
    return docs.size();
  }
  if (!field.layout().positions) {
    core::fail_value("a phrase needs positions, and these field indexes have none (the index "
                     "was built with positions=False): rebuild it with positions=True");
  }
  PhraseSpec spec{{}, t.offsets, t.slop};
  for (const std::string& term : t.phrase) {
    const int64_t id = field.find_term(term);
    if (id < 0) return 0;  // a term absent from the field: no match there
    spec.terms.push_back(static_cast<uint32_t>(id));
  }
  index::MemoryPostings list;
  materialize_phrase(field, spec, nullptr, list);
  docs = std::move(list.docids);
  tfs = std::move(list.freqs);
  return docs.size();
}

// Drops the postings of `list` that `pass` does not pass.
void keep_passing(index::MemoryPostings& list, const uint8_t* pass) {
  size_t n = 0;
  for (size_t i = 0; i < list.docids.size(); ++i) {
    if (!pass[list.docids[i]]) continue;
    list.docids[n] = list.docids[i];
    list.freqs[n++] = list.freqs[i];
  }
  list.docids.resize(n);
  list.freqs.resize(n);
  list.finish_blocks();
}

}  // namespace

uint64_t FieldedEngine::gather(const FieldedTerm& t, const Bm25FParams& p,
                               const std::vector<double>& avg, const uint8_t* pass,
                               index::MemoryPostings& out, uint64_t& decoded) const {
  uint64_t df = 0;
  std::vector<std::vector<uint32_t>> docs(m_n_fields), tfs(m_n_fields);
  std::vector<size_t> at(m_n_fields);
  // 1 / avglen_f (0 for a field empty in every live document: it has no live posting).
  std::vector<double> inv_avg(m_n_fields);
  for (size_t f = 0; f < m_n_fields; ++f) inv_avg[f] = avg[f] > 0 ? 1.0 / avg[f] : 0.0;
  for (size_t s = 0; s < m_segments.size(); ++s) {
    const FieldedSegment& seg = m_segments[s];
    for (size_t f = 0; f < m_n_fields; ++f) {
      docs[f].clear();
      tfs[f].clear();
      at[f] = 0;
      if (t.field >= 0 && static_cast<size_t>(t.field) != f) continue;
      decoded += field_list(*seg.fields[f], t, docs[f], tfs[f]);
    }
    // A k-way merge of the fields' lists by docid (a few fields: a linear scan for the least).
    while (true) {
      uint32_t d = kEndDocid;
      for (size_t f = 0; f < m_n_fields; ++f) {
        if (at[f] < docs[f].size()) d = std::min(d, docs[f][at[f]]);
      }
      if (d == kEndDocid) break;
      const bool deleted = seg.deleted.size != 0 && seg.deleted[d];
      double tilde = 0.0;
      for (size_t f = 0; f < m_n_fields; ++f) {
        if (at[f] >= docs[f].size() || docs[f][at[f]] != d) continue;
        if (!deleted) {
          const double len = seg.fields[f]->doc_lengths[d];
          tilde += p.weights[f] * tfs[f][at[f]] / (1.0 - p.b[f] + p.b[f] * len * inv_avg[f]);
        }
        ++at[f];
      }
      if (deleted) continue;
      ++df;
      const uint32_t live = m_live_first[s] + (seg.deleted.size ? m_live_rank[s][d] : d);
      if (pass != nullptr && !pass[live]) continue;
      const float bits = static_cast<float>(tilde);
      uint32_t freq;
      std::memcpy(&freq, &bits, sizeof freq);
      out.docids.push_back(live);
      out.freqs.push_back(freq);
    }
  }
  out.finish_blocks();
  return df;
}

template <class S>
void run_algorithm(Algorithm a, Plan<S>& plan, TopKQueue& topk);  // engine.cpp

std::vector<uint64_t> FieldedEngine::clause_dfs(const std::vector<FieldedTerm>& terms) const {
  const Bm25FParams unit{std::vector<double>(m_n_fields, 1.0), std::vector<double>(m_n_fields, 0.0),
                         1.0};
  std::vector<uint64_t> out;
  uint64_t decoded = 0;
  for (const FieldedTerm& t : terms) {
    if (t.field >= static_cast<int32_t>(m_n_fields) || t.field < -1) {
      core::fail_value("field ", t.field, " out of range (", m_n_fields, " fields)");
    }
    index::MemoryPostings list;
    out.push_back(gather(t, unit, m_avg, nullptr, list, decoded));
  }
  return out;
}

QueryResult FieldedEngine::search(const std::vector<FieldedTerm>& terms, const Bm25FParams& p,
                                  uint32_t k, Algorithm algorithm, const uint8_t* pass,
                                  const FieldedGlobal* global, const DocPrior* prior) const {
  check_bm25f(p, m_n_fields);
  if (k == 0) core::fail_value("k must be >= 1, got 0");
  if (prior != nullptr && (prior->boost == nullptr || !(std::isfinite(prior->max) &&
                                                        prior->max >= 0))) {
    core::fail_value("a prior needs its boosts and a finite max >= 0; got max=", prior->max);
  }
  if (global != nullptr && (global->avg.size() != m_n_fields ||
                            global->dfs.size() != terms.size() || global->n_live < m_n_live)) {
    core::fail_value("global statistics need one average length per field (", m_n_fields,
                     "), one df per clause (", terms.size(), ") and n_live >= ", m_n_live,
                     "; got ", global->avg.size(), ", ", global->dfs.size(), " and ",
                     global->n_live);
  }
  const uint64_t n_docs = global ? global->n_live : m_n_live;
  const std::vector<double>& avg = global ? global->avg : m_avg;
  // Repeated clauses (the same term or phrase, field and occur) add up their weights.
  using Key = std::tuple<int32_t, int32_t, std::string, std::vector<std::string>,
                         std::vector<uint32_t>, uint32_t>;
  std::map<Key, double> merged;
  std::map<Key, uint64_t> global_df;  // with `global`: each clause's df in the collection
  for (size_t i = 0; i < terms.size(); ++i) {
    const FieldedTerm& t = terms[i];
    if (!(std::isfinite(t.weight) && t.weight > 0)) {
      core::fail_value("query term weights must be finite and > 0; '", t.term, "' has ", t.weight);
    }
    if (t.field >= static_cast<int32_t>(m_n_fields) || t.field < -1) {
      core::fail_value("field ", t.field, " out of range (", m_n_fields, " fields)");
    }
    if (t.occur != FieldedOccur::kShould && t.occur != FieldedOccur::kMust &&
        t.occur != FieldedOccur::kMustNot) {
      core::fail_value("occur must be 0, 1 or 2; '", t.term, "' has ",
                       static_cast<int32_t>(t.occur));
    }
    if (!t.phrase.empty()) {
      if (t.phrase.size() != t.offsets.size()) {
        core::fail_value("a phrase has ", t.phrase.size(), " terms but ", t.offsets.size(),
                         " offsets");
      }
      for (size_t j = 1; j < t.offsets.size(); ++j) {
        if (t.offsets[j] <= t.offsets[j - 1]) {
          core::fail_value("phrase offsets must be strictly increasing; offsets[", j, "]=",
                           t.offsets[j], " follows ", t.offsets[j - 1]);
        }
      }
    }
    const bool is_phrase = !t.phrase.empty();  // a term's offsets and slop do not count
    const Key key{t.field, static_cast<int32_t>(t.occur), t.term, t.phrase,
                  is_phrase ? t.offsets : std::vector<uint32_t>{}, is_phrase ? t.slop : 0};
    merged[key] += t.weight;
    if (global != nullptr) global_df.emplace(key, global->dfs[i]);
  }
  QueryResult result;
  if (m_n_live == 0 || merged.empty()) return result;
  auto clause = [](const Key& key, double weight) {
    return FieldedTerm{std::get<2>(key), weight, std::get<0>(key), std::get<3>(key),
                       std::get<4>(key), std::get<5>(key),
                       static_cast<FieldedOccur>(std::get<1>(key))};
  };
  // Required and excluded clauses: the documents a scored list may hold (with the filter's),
  // one byte per live document; the lists of required clauses are kept to be scored.
  std::vector<uint8_t> allow;
  std::map<Key, std::pair<index::MemoryPostings, uint64_t>> required;
  for (const auto& [key, weight] : merged) {
    const auto occur = static_cast<FieldedOccur>(std::get<1>(key));
    if (occur == FieldedOccur::kShould) continue;
    if (allow.empty()) {
      allow.assign(m_n_live, 1);
      if (pass != nullptr) std::copy(pass, pass + m_n_live, allow.begin());
    }
    index::MemoryPostings list;
    const uint64_t df =
        gather(clause(key, weight), p, avg, nullptr, list, result.postings_decoded);
    if (occur == FieldedOccur::kMustNot) {
      for (const uint32_t d : list.docids) allow[d] = 0;
      continue;
    }
    // Required: a document keeps its flag only if it holds this clause too.
    std::vector<uint8_t> holds(m_n_live, 0);
    for (const uint32_t d : list.docids) holds[d] = 1;
    for (uint64_t d = 0; d < m_n_live; ++d) allow[d] &= holds[d];
    required.emplace(key, std::make_pair(std::move(list), df));
  }
  if (!allow.empty()) pass = allow.data();
  struct Term {
    index::MemoryPostings list;
    double weight = 0.0;  // query weight * idf * (k1 + 1)
    std::vector<float> blocks;
    float max = 0.0f;
  };
  std::vector<Term> plan_terms;
  plan_terms.reserve(merged.size());
  double magnitude = 0.0;
  const Bm25FScorer scorer{p.k1};
  for (const auto& [key, weight] : merged) {
    if (static_cast<FieldedOccur>(std::get<1>(key)) == FieldedOccur::kMustNot) continue;
    Term t;
    uint64_t df;
    const auto kept = required.find(key);
    if (kept != required.end()) {
      t.list = std::move(kept->second.first);
      df = kept->second.second;
      keep_passing(t.list, pass);
    } else {
      df = gather(clause(key, weight), p, avg, pass, t.list, result.postings_decoded);
    }
    if (global != nullptr) df = global_df.at(key);
    if (t.list.docids.empty()) {
      if (algorithm == Algorithm::kAnd) return result;  // a conjunction matches nothing
      if (df == 0) continue;                             // an unknown term counts nowhere
    }
    // Every term of the live collection counts in the scale, with or without a filter, so a
    // filtered query scores its documents exactly as the unfiltered one.
    t.weight = weight * index::bm25_idf(n_docs, df) * (p.k1 + 1.0);
    magnitude += t.weight;  // f < 1
    if (t.list.docids.empty()) continue;
    plan_terms.push_back(std::move(t));
  }
  if (plan_terms.empty()) return result;
  if (prior != nullptr) magnitude += prior->max;
  // The fixed-point scale of the engine (engine.cpp, plan_terms): every sum below 2^52.
  int exponent = 0;
  std::frexp(magnitude, &exponent);
  const double scale = std::ldexp(1.0, std::clamp(52 - exponent, -1000, 1000));

  Plan<Bm25FScorer> run{scorer, {}, static_cast<uint32_t>(m_n_live)};
  run.cursors.reserve(plan_terms.size());
  std::vector<ListPriorBounds> prior_bounds;  // per term, with a prior and pruning
  prior_bounds.reserve(plan_terms.size());
  if (prior != nullptr) {
    run.prior = prior->boost;
    run.prior_scale = scale;
  }
  for (Term& t : plan_terms) {
    const TermParams params{t.weight * scale, 0.0};
    run.cursors.emplace_back(index::PostingCursor(t.list), params);
    if (prior != nullptr) run.cursors.back().set_prior(prior->boost);
    if (!uses_bounds(algorithm)) continue;
    if (prior != nullptr) {
      prior_bounds.push_back(list_prior_bounds(index::PostingCursor(t.list), prior->boost));
      const ListPriorBounds& pb = prior_bounds.back();
      run.cursors.back().set_prior_bounds(ceil_to_score(pb.max * scale), pb.blocks.data(), scale);
    }
    // Bounds of this query's weights, from the values scored: per block of kBlockSize
    // postings the largest f, as a float rounded up, times the term's weight and scale with
    // the engine's slack (a contribution rounds its double product, the bound is its ceiling).
    // f increases with tf~, so the block's largest f is f of its largest tf~; the bits of
    // non-negative floats order as the floats do, so the largest is an integer maximum.
    const size_t n = t.list.docids.size();
    for (size_t first = 0; first < n; first += index::kBlockSize) {
      const auto block = t.list.freqs.begin() + static_cast<ptrdiff_t>(first);
      const uint32_t top = *std::max_element(block, block + static_cast<ptrdiff_t>(
                                                 std::min(n - first, size_t{index::kBlockSize})));
      const double best = scorer.f(params, 0, top);
      t.blocks.push_back(index::float_upper_bound(best));
      t.max = std::max(t.max, t.blocks.back());
    }
    const double factor = t.weight * scale * (1.0 + 1e-6);
    run.cursors.back().set_bounds(ceil_to_score(t.max * factor), t.blocks.data(), factor);
  }
  TopKQueue topk(k);
  run_algorithm(algorithm, run, topk);
  result.postings_scored = run.postings_scored;
  result.docs_scored = run.docs_scored;
  for (const auto& [s, d] : topk.finish()) {
    result.docids.push_back(d);
    result.scores.push_back(static_cast<double>(s) / scale);
  }
  return result;
}

std::vector<QueryResult> FieldedEngine::search_batch(
    const std::vector<std::vector<FieldedTerm>>& queries, const Bm25FParams& params, uint32_t k,
    Algorithm algorithm, unsigned threads, const uint8_t* pass,
    const std::vector<FieldedGlobal>* global, const DocPrior* prior) const {
  check_bm25f(params, m_n_fields);
  if (global != nullptr && global->size() != queries.size()) {
    core::fail_value("global statistics for ", global->size(), " queries; there are ",
                     queries.size());
  }
  std::vector<QueryResult> out(queries.size());
  core::parallel_for(queries.size(), threads, [&](size_t i) {
    out[i] = search(queries[i], params, k, algorithm, pass,
                    global == nullptr ? nullptr : &(*global)[i], prior);
  });
  return out;
}

}  // namespace mirkit::query
