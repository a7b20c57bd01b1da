#include "query/engine.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <unordered_map>

#include "core/errors.hpp"
#include "core/memory.hpp"
#include "core/parallel.hpp"
#include "query/cursor.hpp"
#include "query/phrase.hpp"

namespace mirkit::query {

namespace {

// Stored bounds are float maxima of a double formula; the query computes the same formula in a
// slightly different order. Inflating every bound by one part in a million covers that rounding
// (a few ulps) with no measurable loss of pruning.
constexpr double kBoundSlack = 1.0 + 1e-6;

// Per-term upper bounds of a scorer at query weight 1 (W1 * max f), per block and overall.
struct TermBounds {
  float max = 0.0f;
  std::vector<float> blocks;
};

}  // namespace

void ScorerSpec::validate() const {
  if (kind == ScorerKind::kBm25) index::check_bm25(k1, b);
  if (kind == ScorerKind::kQueryLikelihood && !(std::isfinite(mu) && mu > 0)) {
    core::fail_value("query likelihood needs a finite mu > 0; got mu=", mu);
  }
}

const double* TfIdfScorer::log_table() {
  static const std::array<double, kTable> table = [] {
    std::array<double, kTable> t{};
    for (uint32_t i = 1; i < kTable; ++i) t[i] = std::log(static_cast<double>(i));
    return t;
  }();
  return table.data();
}

struct QueryEngine::Prepared {
  ScorerSpec spec;
  core::HugeVector<float> norms;  // BM25: k1 (1 - b + b |d| / avgdl), read at random
  bool stored = false;       // bounds from the index (scaled by the idf ratio)
  std::mutex mutex;
  std::unordered_map<uint32_t, std::shared_ptr<const TermBounds>> bounds;
};

namespace {

using Prepared = QueryEngine::Prepared;

// W1 and a of a term with document frequency df and collection frequency cf at query weight 1
// (scorers.hpp).
TermParams unit_params(const ScorerSpec& spec, const Collection& c, uint64_t df, uint64_t cf) {
  const double n = static_cast<double>(c.n_docs);
  switch (spec.kind) {
    case ScorerKind::kBm25:
      return {bm25_idf(spec.idf, c.n_docs, df) * (spec.k1 + 1.0), 0.0};
    case ScorerKind::kTfIdf:
      return {std::log(n / static_cast<double>(df)), 0.0};
    case ScorerKind::kQueryLikelihood:
      return {1.0, static_cast<double>(c.total_tokens) / (spec.mu * static_cast<double>(cf))};
    case ScorerKind::kImpact:
      return {1.0, 0.0};
  }
  return {};
}

// An upper bound of f over the whole collection, from its statistics alone (for the scale).
double f_limit(const ScorerSpec& spec, const Collection& c, const TermParams& unit) {
  const double longest = std::max<double>(1.0, c.max_length);
  switch (spec.kind) {
    case ScorerKind::kBm25:
      return 1.0;
    case ScorerKind::kTfIdf:
      return 1.0 + std::log(longest);
    case ScorerKind::kQueryLikelihood:
      return std::log1p(longest * unit.a);
    case ScorerKind::kImpact:
      return kMaxImpact;
  }
  return 0.0;
}

// Calls fn with the scorer object of a prepared spec.
template <class Fn>
decltype(auto) with_scorer(const Prepared& p, const index::IndexReader& r, double doc_weight,
                           Fn&& fn) {
  switch (p.spec.kind) {
    case ScorerKind::kTfIdf:
      return fn(TfIdfScorer{});
    case ScorerKind::kQueryLikelihood:
      return fn(QueryLikelihoodScorer{r.doc_lengths.data, p.spec.mu, doc_weight});
    case ScorerKind::kImpact:
      return fn(ImpactScorer{});
    case ScorerKind::kBm25:
      break;
  }
  return fn(Bm25Scorer{p.norms.data()});
}

// Appends the bound of one block of postings (docs, freqs) to tb.
template <class S>
void add_block_bound(TermBounds& tb, const S& scorer, const TermParams& unit,
                     const uint32_t* docs, const uint32_t* freqs, uint32_t n) {
  double best = 0.0;
  for (uint32_t i = 0; i < n; ++i) best = std::max(best, unit.weight * scorer.f(unit, docs[i], freqs[i]));
  tb.blocks.push_back(index::float_upper_bound(best));
  tb.max = std::max(tb.max, tb.blocks.back());
}

template <class S>
std::shared_ptr<const TermBounds> compute_bounds(const index::IndexReader& r, const S& scorer,
                                                 const TermParams& unit, uint32_t t) {
  auto tb = std::make_shared<TermBounds>();
  uint32_t docs[index::kBlockSize], freqs[index::kBlockSize];
  for (uint64_t b = r.term_blocks[t]; b < r.term_blocks[t + 1]; ++b) {
    const uint32_t n = r.decode_docids(t, b, docs);
    r.decode_freqs(b, n, freqs);
    add_block_bound(*tb, scorer, unit, docs, freqs, n);
  }
  return tb;
}

// The bounds of a list in memory (a phrase's matches), per block of kBlockSize postings.
template <class S>
std::shared_ptr<const TermBounds> list_bounds(const index::MemoryPostings& list, const S& scorer,
                                              const TermParams& unit) {
  auto tb = std::make_shared<TermBounds>();
  for (size_t first = 0; first < list.docids.size(); first += index::kBlockSize) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(index::kBlockSize, list.docids.size() - first));
    add_block_bound(*tb, scorer, unit, list.docids.data() + first, list.freqs.data() + first, n);
  }
  return tb;
}

// Bounds of the index's term t (a local id), whose unit parameters are `unit`.
std::shared_ptr<const TermBounds> term_bounds(Prepared& p, const index::IndexReader& r,
                                              const TermParams& unit, uint32_t t) {
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.bounds.find(t);
    if (it != p.bounds.end()) return it->second;
  }
  // Computed outside the lock (a racing thread may compute the same bounds; both are equal).
  auto tb = with_scorer(p, r, 0.0, [&](const auto& scorer) {
    return compute_bounds(r, scorer, unit, t);
  });
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.bounds.emplace(t, std::move(tb)).first->second;
}

// Sorts by term, merges repeated terms (their weights add up) and checks ids and weights.
std::vector<QueryTerm> normalize(const std::vector<QueryTerm>& query, uint64_t n_terms) {
  std::vector<QueryTerm> terms;
  for (size_t i = 0; i < query.size(); ++i) {
    const QueryTerm& q = query[i];
    if (q.term >= n_terms) core::fail_index("query term id ", q.term, " out of range [0, ", n_terms, ")");
    if (!(std::isfinite(q.weight) && q.weight > 0)) {
      core::fail_value("query term weights must be finite and > 0; weight[", i, "]=", q.weight);
    }
    terms.push_back(q);
  }
  std::sort(terms.begin(), terms.end(), [](auto& a, auto& b) { return a.term < b.term; });
  size_t out = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (out > 0 && terms[out - 1].term == terms[i].term) {
      terms[out - 1].weight += terms[i].weight;
    } else {
      terms[out++] = terms[i];
    }
  }
  terms.resize(out);
  return terms;
}

// Checks the phrases and clauses of a query (term ids, offsets, weights).
void check_phrases(const std::vector<QueryPhrase>& phrases, uint64_t n_terms) {
  for (size_t i = 0; i < phrases.size(); ++i) {
    const QueryPhrase& q = phrases[i];
    check_phrase(PhraseSpec{q.terms, q.offsets, q.slop}, q.missing ? UINT64_MAX : n_terms);
    if (!(std::isfinite(q.weight) && q.weight >= 0)) {
      core::fail_value("phrase weights must be finite and >= 0; weight of phrase ", i, " is ",
                       q.weight);
    }
    if (q.weight > 0 && (q.terms.size() < 2 || q.occur == Occur::kMustNot)) {
      core::fail_value("phrase ", i, ": only a phrase of two terms or more that is not excluded "
                       "is scored (a term is scored as a query term)");
    }
  }
}

}  // namespace

// A query's phrases and clauses over one index: the scored phrases' matches there, with their
// df and cf (over the whole collection once the caller has added the segments' up), and the
// documents that may not enter the top k.
struct QueryEngine::PhraseState {
  struct Scored {
    index::MemoryPostings list;  // matches among the live documents here
    double weight = 0.0;
    uint64_t df = 0, cf = 0;
  };
  std::vector<Scored> scored;  // in the order of the query's scored phrases
  std::vector<uint8_t> reject;  // per document: deleted, or failing a clause; empty: no clause
  bool matches_nothing = false;  // a required clause has no document here
  uint64_t decoded = 0;          // postings decoded to find the matches

  const uint8_t* flags(const uint8_t* deleted) const {
    return reject.empty() ? deleted : reject.data();
  }
};

int64_t GlobalStats::find_term(std::string_view t) const {
  if (!slots) core::fail_value("global statistics: the term table is not built");
  return index::probe_term_table(slots->data(), slots->size(), t, index::term_hash(t),
                                 [this](uint32_t g) { return term(g); });
}

void GlobalStats::build_term_table() {
  slots = std::make_shared<const std::vector<index::TermSlot>>(index::build_term_table(
      n_terms(), [this](uint32_t g) { return index::term_hash(term(g)); }));
}

void GlobalStats::validate_lexicon() const {
  const uint64_t n = n_terms();
  if (n >= index::kEmptySlot) core::fail_value("global statistics: ", n, " terms, too many");
  if (cf.size != n || term_offsets.size != n + 1) {
    core::fail_value("global statistics: ", n, " df values, ", cf.size, " cf values and ",
                     term_offsets.size, " term offsets (expected n + 1)");
  }
  if (term_offsets[0] != 0 || term_offsets[n] != terms.size) {
    core::fail_value("global statistics: term offsets do not span the ", terms.size,
                     " bytes of terms");
  }
  for (uint64_t g = 0; g < n; ++g) {
    if (term_offsets[g + 1] < term_offsets[g] || (g > 0 && !(term(g - 1) < term(g)))) {
      core::fail_value("global statistics: terms not strictly sorted at term ", g);
    }
    if ((df[g] == 0 && !live_only) || df[g] > n_docs || cf[g] < df[g]) {
      core::fail_value("global statistics: term ", g, " has df ", df[g], " and cf ", cf[g],
                       " in ", n_docs, " documents");
    }
  }
  if (n_docs > index::kMaxDocs) core::fail_value("global statistics: n_docs=", n_docs);
}

void GlobalStats::validate(const index::IndexReader& shard) const {
  const uint64_t n = n_terms();
  if (local_to_global.size != shard.n_terms()) {
    core::fail_value("global statistics: local_to_global has ", local_to_global.size,
                     " entries for a shard of ", shard.n_terms(), " terms");
  }
  for (uint32_t t = 0; t < local_to_global.size; ++t) {
    const uint32_t g = local_to_global[t];
    if (g >= n || (t > 0 && g <= local_to_global[t - 1]) || term(g) != shard.term(t) ||
        (!live_only && (df[g] < shard.df[t] || cf[g] < shard.cf[t]))) {
      core::fail_value("global statistics: local term ", t, " maps to global term ", g,
                       ", which is out of order or not the same term, or has smaller statistics");
    }
  }
  if (deleted.size != 0 && (!live_only || deleted.size != shard.n_docs())) {
    core::fail_value("global statistics: ", deleted.size, " deletion flags for a shard of ",
                     shard.n_docs(), " documents (and live_only=", live_only, ")");
  }
  if ((n_docs < shard.n_docs() && !live_only) || n_docs > index::kMaxDocs) {
    core::fail_value("global statistics: n_docs=", n_docs, " for a shard of ", shard.n_docs());
  }
}

QueryEngine::QueryEngine(const index::IndexReader& reader, const analysis::Analyzer& analyzer,
                         const index::Bm25Params& stored, uint64_t total_tokens,
                         const GlobalStats* global)
    : m_reader(reader), m_analyzer(analyzer), m_stored(stored) {
  const auto& lengths = reader.doc_lengths;
  uint64_t n_docs = reader.n_docs();
  uint32_t max_length =
      lengths.size ? *std::max_element(lengths.data, lengths.data + lengths.size) : 0;
  if (global != nullptr) {
    if (!global->slots) global->validate_lexicon();  // else validated by its owner
    global->validate(reader);
    if (!global->live_only &&
        (global->max_length < max_length || global->total_tokens < total_tokens)) {
      core::fail_value("global statistics: max_length=", global->max_length, " total_tokens=",
                       global->total_tokens, " below the shard's ", max_length, " and ",
                       total_tokens);
    }
    m_global = *global;
    if (!m_global->slots) m_global->build_term_table();
    n_docs = global->n_docs;
    total_tokens = global->total_tokens;
    max_length = global->max_length;
  }
  m_collection.n_docs = n_docs;
  m_collection.total_tokens = total_tokens;
  m_collection.avg_length =
      n_docs == 0 || total_tokens == 0 ? 1.0 : static_cast<double>(total_tokens) / n_docs;
  m_collection.max_length = max_length;
}

QueryEngine::~QueryEngine() = default;

int64_t QueryEngine::find_term(std::string_view term) const {
  if (!m_global) return m_reader.find_term(term);
  const int64_t g = m_global->find_term(term);
  return g >= 0 && m_global->df[g] == 0 ? -1 : g;  // only deleted documents hold it: absent
}

uint64_t QueryEngine::n_query_terms() const {
  return m_global ? m_global->n_terms() : m_reader.n_terms();
}

int64_t QueryEngine::local_term(uint32_t term) const {
  if (!m_global) return term;
  const auto& map = m_global->local_to_global;
  const uint32_t* it = std::lower_bound(map.data, map.data + map.size, term);
  return it != map.data + map.size && *it == term ? it - map.data : -1;
}

uint64_t QueryEngine::term_df(uint32_t term) const {
  return m_global ? m_global->df[term] : m_reader.df[term];
}

uint64_t QueryEngine::term_cf(uint32_t term) const {
  return m_global ? m_global->cf[term] : m_reader.cf[term];
}

namespace {

// The analyzed terms of a text query, in text order (each occurrence once).
std::vector<std::string> query_words(const analysis::Analyzer& analyzer, std::string_view text) {
  std::vector<std::string> words;
  std::string term;
  analyzer.tokenize(text, [&](std::string_view token, uint32_t) {
    if (analyzer.to_term(token, term)) words.push_back(term);
  });
  return words;
}

// The terms of a phrase's text and their offsets; find(term) gives each one's id.
template <class Find>
void phrase_words(const analysis::Analyzer& analyzer, std::string_view text, Find&& find,
                  std::vector<int64_t>& ids, std::vector<uint32_t>& offsets) {
  ids.clear();
  offsets.clear();
  std::string term;
  uint32_t first = 0;
  analyzer.tokenize(text, [&](std::string_view token, uint32_t position) {
    if (!analyzer.to_term(token, term)) return;
    if (ids.empty()) first = position;
    ids.push_back(find(term));
    offsets.push_back(position - first);
  });
}

// The query terms of lookup results (-1: absent, dropped), each with weight 1.
std::vector<QueryTerm> found_terms(const std::vector<int64_t>& ids) {
  std::vector<QueryTerm> terms;
  for (const int64_t t : ids) {
    if (t >= 0) terms.push_back({static_cast<uint32_t>(t), 1.0});
  }
  return terms;
}

// search_batch() of either engine: each query's text analyzed on the worker threads, then its
// terms appended, then searched.
template <class Engine, class Filter, class Prior>
std::vector<QueryResult> batch(const Engine& engine, const std::vector<QueryInput>& queries,
                               uint32_t k, Algorithm algorithm, const ScorerSpec& spec,
                               unsigned threads, const Filter* filter, const Prior* prior) {
  std::vector<QueryResult> results(queries.size());
  core::parallel_for(queries.size(), threads, [&](size_t i) {
    const QueryInput& q = queries[i];
    if (q.text.empty()) {
      results[i] = engine.search(q.terms, q.phrases, k, algorithm, spec, filter, prior);
      return;
    }
    std::vector<QueryTerm> terms = engine.analyze(q.text);
    terms.insert(terms.end(), q.terms.begin(), q.terms.end());
    results[i] = engine.search(terms, q.phrases, k, algorithm, spec, filter, prior);
  });
  return results;
}

}  // namespace

std::vector<QueryTerm> QueryEngine::analyze(std::string_view text) const {
  const std::vector<std::string> words = query_words(m_analyzer, text);
  std::vector<int64_t> ids(words.size());
  if (m_global) {
    for (size_t i = 0; i < words.size(); ++i) ids[i] = find_term(words[i]);
  } else {
    m_reader.find_terms(words, ids.data());  // lookups overlapped
  }
  return found_terms(ids);
}

void QueryEngine::analyze_phrase(std::string_view text, std::vector<int64_t>& ids,
                                 std::vector<uint32_t>& offsets) const {
  phrase_words(m_analyzer, text, [this](const std::string& t) { return find_term(t); }, ids,
               offsets);
}

bool QueryEngine::uses_stored_bounds(const ScorerSpec& s) const {
  // An impact index stores the impacts' own maxima, which no collection statistic changes:
  // they hold on a shard and a segment too.
  if (m_stored.impacts) return s.kind == ScorerKind::kImpact;
  return !m_global && s.kind == ScorerKind::kBm25 && s.k1 == m_stored.k1 && s.b == m_stored.b;
}

std::shared_ptr<Prepared> QueryEngine::prepare(const ScorerSpec& spec) const {
  spec.validate();
  // An impact index's postings hold impacts, not term frequencies: only the impact scorer
  // reads them right, and it reads nothing else.
  if (m_stored.impacts && spec.kind != ScorerKind::kImpact) {
    core::fail_value("an impact index holds quantized impacts, not term frequencies: score it "
                     "with the impact scorer (mirkit.scoring.Impact)");
  }
  if (!m_stored.impacts && spec.kind == ScorerKind::kImpact) {
    core::fail_value("the impact scorer needs an impact index (IndexWriter(impacts=True) or "
                     "quantize=True); this index holds term frequencies");
  }
  std::lock_guard<std::mutex> lock(m_mutex);
  for (const auto& p : m_prepared) {
    if (p->spec.same_as(spec)) return p;
  }
  {
    auto fresh = std::make_shared<Prepared>();
    fresh->spec = spec;
    fresh->stored = uses_stored_bounds(spec);
    if (spec.kind == ScorerKind::kBm25) {
      const auto& lengths = m_reader.doc_lengths;
      fresh->norms.resize(lengths.size);
      for (size_t d = 0; d < lengths.size; ++d) {
        fresh->norms[d] = static_cast<float>(
            spec.k1 * (1.0 - spec.b + spec.b * lengths[d] / m_collection.avg_length));
      }
    }
    m_prepared.push_back(std::move(fresh));
  }
  return m_prepared.back();
}

namespace {

// Index into kThresholdRanks of the stored thresholds that prime a query's top k: the smallest
// rank >= k, for the pruned disjunctive algorithms with the index's own bounds (BM25 at its
// parameters; every BM25 contribution is >= 0); kNumThresholdRanks when there is none.
size_t prime_rank(const Prepared& p, Algorithm a, uint32_t k, bool stored_thresholds) {
  if (!p.stored || !stored_thresholds || !uses_bounds(a)) return index::kNumThresholdRanks;
  size_t r = 0;
  while (r < index::kNumThresholdRanks && index::kThresholdRanks[r] < k) ++r;
  return r;
}

}  // namespace

// The algorithm for its enum (also FieldedEngine's, query/bm25f.cpp).
template <class S>
void run_algorithm(Algorithm a, Plan<S>& plan, TopKQueue& topk) {
  switch (a) {
    case Algorithm::kTaat: return taat(plan, topk);
    case Algorithm::kExhaustive: return exhaustive_or(plan, topk);
    case Algorithm::kAnd: return ranked_and(plan, topk);
    case Algorithm::kWand: return wand(plan, topk);
    case Algorithm::kBlockMaxWand: return block_max_wand(plan, topk);
    case Algorithm::kMaxScore: return maxscore(plan, topk);
  }
}
template void run_algorithm<Bm25FScorer>(Algorithm, Plan<Bm25FScorer>&, TopKQueue&);

namespace {

// The top k, best first, with scores back in doubles, into `result`.
void take_results(TopKQueue& topk, double scale, QueryResult& result) {
  const auto ranked = topk.finish();
  result.docids.reserve(ranked.size());
  result.scores.reserve(ranked.size());
  for (const auto& [s, d] : ranked) {
    result.docids.push_back(d);
    result.scores.push_back(static_cast<double>(s) / scale);
  }
}

}  // namespace

// A query before any scorer object exists: its terms mapped to the index's ids, with their unit
// parameters, the fixed-point scale, the upper bounds the pruning algorithms need and the
// threshold that primes the top k.
struct QueryEngine::QueryPlan {
  struct Term {
    int64_t local = -1;      // the index's id of the query term; -1 when a shard lacks it
    double weight = 0.0;     // query weight
    TermParams unit;         // W1 and a at query weight 1
    // Upper bounds (pruning algorithms only): max_bound and blocks[b], times factor.
    const float* blocks = nullptr;
    float max_bound = 0.0f;
    double factor = 0.0;
    const index::MemoryPostings* list = nullptr;  // a phrase's matches
  };
  std::vector<Term> terms;  // one per distinct query term, in term-id order
  std::vector<Term> phrases;  // the scored phrases that match here or elsewhere
  bool constrained = false;   // required/excluded clauses: no threshold priming
  bool matches_nothing = false;
  double scale = 1.0;
  double weight_sum = 0.0;  // of the query weights (query likelihood's document part)
  double prior_max = 0.0;   // the largest prior boost (DocPrior::max), 0 without a prior
  Score threshold = kNoThreshold;
  std::vector<std::shared_ptr<const TermBounds>> keep;  // computed bounds in use
};

// Maps the query terms to the index's ids (prefetching their per-term arrays) and picks the
// fixed-point scale.
//
// The scale is a power of two that keeps every sum of contributions below 2^52 (below 2^53
// after rounding each contribution), so every integer score converts to its double exactly: the
// returned doubles rank and tie exactly as the integers do, and shards' results merge by their
// doubles (with 2^61, distinct sums could round to one double and show a tie out of docid
// order). A shard computes the scale, and the document part's weight, from every query term
// the whole collection holds, including those it lacks, so that its scores are the single
// index's.
void QueryEngine::plan_terms(QueryPlan& plan, const std::vector<QueryTerm>& terms,
                             Algorithm algorithm, const ScorerSpec& spec,
                             const PhraseState* phrases) const {
  plan.terms.resize(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    plan.terms[i].local = local_term(terms[i].term);
    plan.terms[i].weight = terms[i].weight;
    if (plan.terms[i].local >= 0) m_reader.prefetch_term(static_cast<uint32_t>(plan.terms[i].local));
  }
  double magnitude = 0.0;
  for (size_t i = 0; i < terms.size(); ++i) {
    QueryPlan::Term& t = plan.terms[i];
    // A conjunction with a term no document of the shard holds matches nothing here.
    if (t.local < 0 && algorithm == Algorithm::kAnd) {
      plan.matches_nothing = true;
      return;
    }
    t.unit = unit_params(spec, m_collection, term_df(terms[i].term), term_cf(terms[i].term));
    magnitude += t.weight * t.unit.weight * f_limit(spec, m_collection, t.unit);
    plan.weight_sum += t.weight;
  }
  if (phrases != nullptr) {
    plan.constrained = !phrases->reject.empty();
    for (const PhraseState::Scored& p : phrases->scored) {
      if (p.df == 0) continue;  // matches no live document: ignored, as an unknown term
      if (p.list.docids.empty() && algorithm == Algorithm::kAnd) {
        plan.matches_nothing = true;
        return;
      }
      QueryPlan::Term t;
      t.weight = p.weight;
      t.unit = unit_params(spec, m_collection, p.df, p.cf);
      t.list = &p.list;
      magnitude += t.weight * t.unit.weight * f_limit(spec, m_collection, t.unit);
      plan.weight_sum += t.weight;
      plan.phrases.push_back(t);
    }
  }
  magnitude += plan.prior_max;
  if (spec.kind == ScorerKind::kQueryLikelihood) {
    magnitude += plan.weight_sum * std::log1p(std::max<double>(1.0, m_collection.max_length) / spec.mu);
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);
  plan.scale = std::ldexp(1.0, std::clamp(52 - exponent, -1000, 1000));
}

// Prefetches the first blocks, then sets each term's upper bounds, stored in the index or
// computed for this scorer, and primes the threshold from the stored thresholds.
void QueryEngine::plan_bounds(QueryPlan& plan, uint32_t k, Algorithm algorithm,
                              Prepared& prepared, bool filtered) const {
  for (const QueryPlan::Term& t : plan.terms) {
    if (t.local >= 0) m_reader.prefetch_skips(static_cast<uint32_t>(t.local));
  }
  for (const QueryPlan::Term& t : plan.terms) {
    if (t.local >= 0) m_reader.prefetch_postings(static_cast<uint32_t>(t.local));
  }
  if (!uses_bounds(algorithm)) return;
  const uint64_t n_docs = m_reader.n_docs();
  // The stored thresholds hold for the whole index, not for the documents a filter passes nor
  // for the live documents of a segment with deletions (an impact index's stored bounds are
  // used with global statistics too).
  const size_t rank = filtered || m_global ? index::kNumThresholdRanks
                               : prime_rank(prepared, algorithm, k, m_reader.layout().thresholds);
  for (QueryPlan::Term& term : plan.terms) {
    if (term.local < 0) continue;  // a shard without the term: no postings here
    const uint32_t t = static_cast<uint32_t>(term.local);
    const double w = term.weight;
    term.factor = w * plan.scale * kBoundSlack;
    if (prepared.stored) {
      const double idf_ratio = m_stored.impacts ? 1.0
                               : bm25_idf(prepared.spec.idf, n_docs, m_reader.df[t]) /
                                     index::bm25_idf(n_docs, m_reader.df[t]);
      term.factor *= idf_ratio;
      term.blocks = m_reader.block_max_score.data + m_reader.term_blocks[t];
      term.max_bound = m_reader.term_max_score[t];
      if (rank < index::kNumThresholdRanks && !plan.constrained) {
        // At least r documents have this term's contribution >= v (the stored lower bound of
        // its r-th largest, r >= k), so the k-th best score is too. Contributions here differ
        // from the index's double scores by float rounding (well under 1e-6 relative) and
        // round to integers: floor(v * w * scale * idf_ratio * (1 - 1e-6)) - 1 is below every
        // one of them. A document scoring that much may still tie into the top k, so the
        // queue starts just below it.
        const float v = m_reader.term_thresholds[t * index::kNumThresholdRanks + rank];
        const double lower = std::floor(v * w * plan.scale * idf_ratio * (1.0 - 1e-6)) - 1.0;
        if (v > 0.0f) plan.threshold = std::max(plan.threshold, static_cast<Score>(lower) - 1);
      }
    } else {
      plan.keep.push_back(term_bounds(prepared, m_reader, term.unit, t));
      term.blocks = plan.keep.back()->blocks.data();
      term.max_bound = plan.keep.back()->max;
    }
  }
  // A phrase's bounds, from its matches. The terms' stored thresholds stay valid with phrases
  // in the query (phrase contributions are >= 0), but not with clauses that reject documents.
  for (QueryPlan::Term& phrase : plan.phrases) {
    phrase.factor = phrase.weight * plan.scale * kBoundSlack;
    plan.keep.push_back(with_scorer(prepared, m_reader, 0.0, [&](const auto& scorer) {
      return list_bounds(*phrase.list, scorer, phrase.unit);
    }));
    phrase.blocks = plan.keep.back()->blocks.data();
    phrase.max_bound = plan.keep.back()->max;
  }
}

void QueryEngine::run_into(const std::vector<QueryTerm>& terms, uint32_t k, Algorithm algorithm,
                           Prepared& prepared, TopKQueue& topk, QueryResult& counters,
                           double& scale, const DocFilter* filter,
                           const PhraseState* phrases, const DocPrior* prior) const {
  const uint64_t n_docs = m_reader.n_docs();  // of this index (a shard: fewer than N)
  if (n_docs == 0) return;
  if (phrases != nullptr) counters.postings_decoded += phrases->decoded;
  if (filter != nullptr && !filter->active()) filter = nullptr;
  if (filter != nullptr && filter->count() == 0) return;  // nothing here may enter
  QueryPlan plan;
  if (prior != nullptr) plan.prior_max = prior->max;
  plan_terms(plan, terms, algorithm, prepared.spec, phrases);
  if (plan.matches_nothing || (phrases != nullptr && phrases->matches_nothing)) return;
  plan_bounds(plan, k, algorithm, prepared, filter != nullptr);
  // The stored thresholds stay valid with a prior: its boosts are >= 0.
  topk.prime(plan.threshold);
  scale = plan.scale;
  // A prior's bounds per list (a phrase's computed here, over its matches), so that no
  // document is pruned that its prior could lift into the top k.
  std::vector<std::shared_ptr<const ListPriorBounds>> prior_lists;
  const bool prior_bounds = prior != nullptr && uses_bounds(algorithm);
  auto prior_bounds_of = [&](const QueryPlan::Term& t) -> const ListPriorBounds* {
    if (t.list != nullptr) {
      prior_lists.push_back(std::make_shared<const ListPriorBounds>(
          list_prior_bounds(index::PostingCursor(*t.list), prior->boost)));
    } else if (prior->lists != nullptr) {
      prior_lists.push_back(prior->lists->get(m_reader, static_cast<uint32_t>(t.local)));
    } else {
      return nullptr;
    }
    return prior_lists.back().get();
  };

  // Dispatch: the cursors, with the plan's bounds, to the algorithm for this scorer type.
  with_scorer(prepared, m_reader, plan.weight_sum * plan.scale, [&](const auto& scorer) {
    using S = std::decay_t<decltype(scorer)>;
    Plan<S> run{scorer, {}, static_cast<uint32_t>(n_docs)};
    if (filter != nullptr) run.filter = filter;
    if (prior != nullptr) {
      run.prior = prior->boost;
      run.prior_scale = plan.scale;
    }
    run.cursors.reserve(plan.terms.size() + plan.phrases.size());
    auto add = [&](index::PostingCursor postings, const QueryPlan::Term& t) {
      run.cursors.emplace_back(std::move(postings),
                               TermParams{t.weight * t.unit.weight * plan.scale, t.unit.a});
      if (uses_bounds(algorithm)) {
        run.cursors.back().set_bounds(ceil_to_score(t.max_bound * t.factor), t.blocks, t.factor);
      }
      if (prior != nullptr) run.cursors.back().set_prior(prior->boost);
      if (prior_bounds) {
        // The boosts are exact doubles: the ceiling of the same product to_fixed rounds.
        const ListPriorBounds* b = prior_bounds_of(t);
        run.cursors.back().set_prior_bounds(ceil_to_score((b ? b->max : prior->max) * plan.scale),
                                            b ? b->blocks.data() : nullptr, plan.scale);
      }
    };
    for (const QueryPlan::Term& t : plan.terms) {
      if (t.local >= 0) add(m_reader.cursor(static_cast<uint32_t>(t.local)), t);
    }
    // Phrases: pseudo-terms over their matches.
    for (const QueryPlan::Term& t : plan.phrases) add(index::PostingCursor(*t.list), t);
    run_algorithm(algorithm, run, topk);
    for (const auto& c : run.cursors) counters.postings_decoded += c.postings_decoded();
    counters.postings_scored += run.postings_scored;
    counters.docs_scored += run.docs_scored;
  });
}

QueryResult QueryEngine::search(const std::vector<QueryTerm>& query, uint32_t k,
                                Algorithm algorithm, const ScorerSpec& spec,
                                const DocFilter* filter) const {
  return search(query, {}, k, algorithm, spec, filter);
}

namespace {

void check_prior(const DocPrior& p) {
  if (p.boost == nullptr || !(std::isfinite(p.max) && p.max >= 0)) {
    core::fail_value("a prior needs its boosts and a finite max >= 0; got max=", p.max);
  }
}

}  // namespace

void QueryEngine::match_phrases(const std::vector<QueryPhrase>& phrases, PhraseState& st) const {
  const uint64_t n_docs = m_reader.n_docs();
  const uint8_t* deleted = deleted_flags();
  bool any_must = false, any_clause = false;
  std::vector<uint32_t> allowed, docs, freqs;  // allowed: the intersection of required clauses
  std::vector<std::vector<uint32_t>> excluded;
  PhraseSpec spec;
  index::MemoryPostings list;
  for (const QueryPhrase& q : phrases) {
    if (q.terms.size() > 1 && !m_reader.layout().positions) {
      core::fail_value("this index has no positions (it was built with positions=False): a "
                       "phrase query needs them; rebuild it with positions=True");
    }
    // The clause in this index's term ids; `here`: every term of it occurs here.
    bool here = !q.missing;
    spec.terms.clear();
    spec.offsets = q.offsets;
    spec.slop = q.slop;
    for (const uint32_t t : q.terms) {
      const int64_t local = here ? local_term(t) : -1;
      here = local >= 0;
      if (here) spec.terms.push_back(static_cast<uint32_t>(local));
    }
    list.docids.clear();
    list.freqs.clear();
    if (here && spec.terms.size() > 1) {
      PhraseCursor c(m_reader, spec);
      for (; c.docid() != kEndDocid; c.next()) {
        if (deleted != nullptr && deleted[c.docid()]) continue;
        list.docids.push_back(c.docid());
        list.freqs.push_back(c.freq());
      }
      st.decoded += c.postings_decoded();
    } else if (here && q.occur != Occur::kShould) {  // a required or excluded term
      m_reader.postings(spec.terms[0], docs, freqs);
      st.decoded += docs.size();
      for (const uint32_t d : docs) {
        if (deleted == nullptr || !deleted[d]) list.docids.push_back(d);
      }
    }
    if (q.occur == Occur::kMust) {
      if (!any_must) {
        allowed = list.docids;
      } else {
        docs.clear();
        std::set_intersection(allowed.begin(), allowed.end(), list.docids.begin(),
                              list.docids.end(), std::back_inserter(docs));
        allowed.swap(docs);
      }
      any_must = any_clause = true;
    } else if (q.occur == Occur::kMustNot) {
      excluded.push_back(list.docids);
      any_clause = true;
    }
    if (q.weight > 0) {
      PhraseState::Scored& p = st.scored.emplace_back();
      p.weight = q.weight;
      p.df = list.docids.size();
      for (const uint32_t f : list.freqs) p.cf += f;
      list.finish_blocks();
      p.list = std::move(list);
      list = index::MemoryPostings();
    }
  }
  if (!any_clause) return;
  st.matches_nothing = any_must && allowed.empty();
  st.reject.assign(n_docs, any_must ? 1 : 0);
  for (const uint32_t d : allowed) st.reject[d] = 0;
  for (const auto& e : excluded) {
    for (const uint32_t d : e) st.reject[d] = 1;
  }
  if (deleted != nullptr) {
    for (uint64_t d = 0; d < n_docs; ++d) st.reject[d] |= deleted[d] != 0;
  }
}

QueryResult QueryEngine::search(const std::vector<QueryTerm>& query,
                                const std::vector<QueryPhrase>& phrases, uint32_t k,
                                Algorithm algorithm, const ScorerSpec& spec,
                                const DocFilter* filter, const DocPrior* prior) const {
  if (k == 0) core::fail_value("k must be >= 1, got 0");
  if (prior != nullptr) check_prior(*prior);
  check_phrases(phrases, n_query_terms());
  for (const QueryPhrase& q : phrases) {
    if (q.weight > 0 && m_global && !m_global->live_only) {
      core::fail_value("a shard of a distributed collection cannot score a phrase: its df over "
                       "the whole collection is unknown here");
    }
  }
  std::shared_ptr<Prepared> prepared = prepare(spec);
  const std::vector<QueryTerm> terms = normalize(query, n_query_terms());
  QueryResult result;
  const uint64_t n_docs = m_reader.n_docs();
  if ((terms.empty() && phrases.empty()) || n_docs == 0) return result;
  PhraseState state;
  if (!phrases.empty()) match_phrases(phrases, state);
  TopKQueue topk(static_cast<uint32_t>(std::min<uint64_t>(k, n_docs)), kNoThreshold,
                 state.flags(deleted_flags()));
  double scale = 1.0;
  run_into(terms, k, algorithm, *prepared, topk, result, scale, filter, &state, prior);
  take_results(topk, scale, result);
  return result;
}

std::vector<QueryResult> QueryEngine::search_batch(const std::vector<QueryInput>& queries,
                                                   uint32_t k, Algorithm algorithm,
                                                   const ScorerSpec& spec, unsigned threads,
                                                   const DocFilter* filter,
                                                   const DocPrior* prior) const {
  return batch(*this, queries, k, algorithm, spec, threads, filter, prior);
}

void QueryEngine::precompute_bounds(const ScorerSpec& spec, unsigned threads) const {
  std::shared_ptr<Prepared> prepared = prepare(spec);
  if (prepared->stored) return;
  const uint64_t n_terms = m_reader.n_terms();
  const uint64_t chunk = 4096;
  core::parallel_for((n_terms + chunk - 1) / chunk, threads, [&](size_t task) {
    const uint64_t end = std::min(n_terms, (task + 1) * chunk);
    for (uint64_t t = task * chunk; t < end; ++t) {
      const uint64_t q = m_global ? m_global->local_to_global[t] : t;  // its query term id
      term_bounds(*prepared, m_reader,
                  unit_params(prepared->spec, m_collection, term_df(q), term_cf(q)),
                  static_cast<uint32_t>(t));
    }
  });
}

// -- SegmentedEngine ------------------------------------------------------------------------

SegmentedEngine::SegmentedEngine(const std::vector<SegmentInput>& segments,
                                 const analysis::Analyzer& analyzer,
                                 const index::Bm25Params& stored, const GlobalStats& global,
                                 bool part)
    : m_global(global), m_analyzer(analyzer) {
  if (!m_global.live_only) core::fail_value("segment statistics must count live documents only");
  m_global.local_to_global = {};
  m_global.deleted = {};
  m_global.validate_lexicon();
  m_global.build_term_table();
  m_first.push_back(0);
  m_live_first.push_back(0);
  for (size_t s = 0; s < segments.size(); ++s) {
    const SegmentInput& in = segments[s];
    if (in.reader == nullptr) core::fail_value("segment ", s, ": no reader");
    const uint64_t n = in.reader->n_docs();
    if (m_first.back() + n > index::kMaxDocs) {
      core::fail_value("the segments hold ", m_first.back() + n, " documents in all, more than ",
                       index::kMaxDocs, ": merge some first");
    }
    GlobalStats g = m_global;  // shares the term table
    g.local_to_global = in.local_to_global;
    g.deleted = in.deleted;
    m_engines.push_back(std::make_unique<QueryEngine>(*in.reader, analyzer, stored,
                                                      in.total_tokens, &g));
    std::vector<uint32_t> before;
    uint64_t live = n;
    if (in.deleted.size) {  // validated: one flag a document
      before.resize((n + 63) / 64 + 1);
      uint32_t count = 0;
      for (uint64_t d = 0; d < n; ++d) {
        if (d % 64 == 0) before[d / 64] = count;
        count += in.deleted[d] == 0;
      }
      live = count;
    }
    m_live_before.push_back(std::move(before));
    m_first.push_back(static_cast<uint32_t>(m_first.back() + n));
    m_live_first.push_back(m_live_first.back() + live);
  }
  if (part ? m_live_first.back() > m_global.n_docs : m_live_first.back() != m_global.n_docs) {
    core::fail_value("segment statistics: n_docs=", m_global.n_docs, " but the segments hold ",
                     m_live_first.back(), " live documents", part ? " (more, as a part)" : "");
  }
}

SegmentedEngine::~SegmentedEngine() = default;

int64_t SegmentedEngine::find_term(std::string_view term) const {
  const int64_t g = m_global.find_term(term);
  return g >= 0 && m_global.df[g] == 0 ? -1 : g;  // only deleted documents hold it: absent
}

std::vector<QueryTerm> SegmentedEngine::analyze(std::string_view text) const {
  const std::vector<std::string> words = query_words(m_analyzer, text);
  std::vector<int64_t> ids(words.size());
  for (size_t i = 0; i < words.size(); ++i) ids[i] = find_term(words[i]);
  return found_terms(ids);
}

void SegmentedEngine::analyze_phrase(std::string_view text, std::vector<int64_t>& ids,
                                     std::vector<uint32_t>& offsets) const {
  phrase_words(m_analyzer, text, [this](const std::string& t) { return find_term(t); }, ids,
               offsets);
}

std::pair<size_t, uint32_t> SegmentedEngine::locate(uint32_t position) const {
  if (position >= m_first.back()) core::fail_index("position ", position, " out of range");
  const size_t s = std::upper_bound(m_first.begin(), m_first.end(), position) - m_first.begin() - 1;
  return {s, position - m_first[s]};
}

uint32_t SegmentedEngine::live_docid(size_t s, uint32_t docid) const {
  uint64_t rank = docid;
  if (!m_live_before[s].empty()) {
    const uint8_t* deleted = m_engines[s]->deleted_flags();
    rank = m_live_before[s][docid / 64];
    for (uint32_t d = docid / 64 * 64; d < docid; ++d) rank += deleted[d] == 0;
  }
  return static_cast<uint32_t>(m_live_first[s] + rank);
}

QueryResult SegmentedEngine::search(const std::vector<QueryTerm>& query, uint32_t k,
                                    Algorithm algorithm, const ScorerSpec& spec,
                                    const Filters* filters) const {
  return search(query, {}, k, algorithm, spec, filters);
}

QueryResult SegmentedEngine::search(const std::vector<QueryTerm>& query,
                                    const std::vector<QueryPhrase>& phrases, uint32_t k,
                                    Algorithm algorithm, const ScorerSpec& spec,
                                    const Filters* filters, const Priors* priors) const {
  if (k == 0) core::fail_value("k must be >= 1, got 0");
  if (filters != nullptr && filters->size() != m_engines.size()) {
    core::fail_value(filters->size(), " filters for ", m_engines.size(), " segments");
  }
  if (priors != nullptr) {
    if (priors->size() != m_engines.size()) {
      core::fail_value(priors->size(), " priors for ", m_engines.size(), " segments");
    }
    for (const DocPrior& p : *priors) {
      check_prior(p);
      // One scale for every segment: the same max everywhere.
      if (p.max != priors->front().max) core::fail_value("segment priors differ in max");
    }
  }
  spec.validate();
  check_phrases(phrases, m_global.n_terms());
  const std::vector<QueryTerm> terms = normalize(query, m_global.n_terms());
  QueryResult result;
  if ((terms.empty() && phrases.empty()) || m_global.n_docs == 0) return result;
  // Each segment's matches; the live ones of all segments make a scored phrase's df and cf.
  std::vector<QueryEngine::PhraseState> states(m_engines.size());
  if (!phrases.empty()) {
    for (size_t s = 0; s < m_engines.size(); ++s) m_engines[s]->match_phrases(phrases, states[s]);
  }
  for (size_t i = 0; i < (states.empty() ? 0 : states[0].scored.size()); ++i) {
    uint64_t df = 0, cf = 0;
    for (const auto& st : states) {
      df += st.scored[i].df;
      cf += st.scored[i].cf;
    }
    for (auto& st : states) {
      st.scored[i].df = df;
      st.scored[i].cf = cf;
    }
  }
  TopKQueue topk(static_cast<uint32_t>(std::min<uint64_t>(k, m_global.n_docs)));
  double scale = 1.0;
  for (size_t s = 0; s < m_engines.size(); ++s) {  // in collection order: see TopKQueue
    const QueryEngine& e = *m_engines[s];
    topk.set_segment(m_first[s], states[s].flags(e.deleted_flags()));
    e.run_into(terms, k, algorithm, *e.prepare(spec), topk, result, scale,
               filters != nullptr ? (*filters)[s] : nullptr, &states[s],
               priors != nullptr ? &(*priors)[s] : nullptr);
  }
  take_results(topk, scale, result);
  result.positions = std::move(result.docids);
  result.docids.resize(result.positions.size());
  for (size_t i = 0; i < result.positions.size(); ++i) {
    const auto [s, d] = locate(result.positions[i]);
    result.docids[i] = live_docid(s, d);
  }
  return result;
}

std::vector<QueryResult> SegmentedEngine::search_batch(const std::vector<QueryInput>& queries,
                                                       uint32_t k, Algorithm algorithm,
                                                       const ScorerSpec& spec,
                                                       unsigned threads,
                                                       const Filters* filters,
                                                       const Priors* priors) const {
  return batch(*this, queries, k, algorithm, spec, threads, filters, priors);
}

void SegmentedEngine::precompute_bounds(const ScorerSpec& spec, unsigned threads) const {
  for (const auto& e : m_engines) e->precompute_bounds(spec, threads);
}

}  // namespace mirkit::query
