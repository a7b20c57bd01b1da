// Preference judgments and trec_eval 9.0.8's preference measures (its form_prefs_counts.c and
// m_prefs_*.c), computed as trec_eval computes them.
//
// Input (trec_eval -R prefs): lines `qid jg jsg docno rel_level`. A judgment group (jg, one
// user's information need) holds judgment subgroups (jsg); within a subgroup every document is
// preferred to every document with a lower rel_level. The subgroups of a group combine
// transitively; a group must be consistent (no cycle, no document both 0 and > 0). Different
// groups may disagree. rel_level 0 means non-relevant. -R qrels_prefs reads a qrels file
// `qid jg docno rel` the same way, with one subgroup "0" per group.
//
// Per query, the judged documents (those named in its preferences) get internal ranks: the
// retrieved ones 0 .. num_judged_ret - 1 in run order (score descending, ties by docno
// ascending, as form_prefs_counts sorts, on float scores (9) or doubles (10); only the top
// max_docs), the others after them in docno
// order. A preference A > B is then "ret" (both retrieved; fulfilled when A ranks above B),
// "imp" (one retrieved; fulfilled when it is A) or "notoccur" (neither; never fulfilled).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "eval/measures.hpp"
#include "eval/trec.hpp"
#include "index/string_map.hpp"

namespace mirkit::eval {

// Preference judgments per query.
class Prefs {
 public:
  struct Entry {
    uint32_t jg, jsg, docno;  // ids of strings (str())
    double rel;               // as read; trec_eval 9 keeps it as a float, 10 as a double
    uint32_t line;            // input line (0 if none), for errors
  };
  // Adds one line's judgment; `line` (0 if none) names it in errors.
  void add(std::string_view qid, std::string_view jg, std::string_view jsg, std::string_view docno,
           double rel, size_t line = 0);
  static Prefs parse(std::string_view text);        // qid jg jsg docno rel_level
  static Prefs parse_qrels(std::string_view text);  // qid jg docno rel_level (jsg "0")

  size_t n_queries() const { return m_qids.size(); }
  size_t size() const { return m_size; }
  std::string_view qid(uint32_t query) const { return m_qids.key(query); }
  uint32_t find_query(std::string_view qid) const { return m_qids.find(qid); }
  const std::vector<Entry>& entries(uint32_t query) const { return m_entries[query]; }
  std::string_view str(uint32_t id) const { return m_strings.key(id); }
  uint32_t find_str(std::string_view s) const { return m_strings.find(s); }

 private:
  index::StringMap m_qids;
  index::StringMap m_strings;  // judgment groups, subgroups and docnos
  std::vector<std::vector<Entry>> m_entries;
  size_t m_size = 0;
};

// trec_eval's preference measures, in the order it prints them.
enum class PrefsMeasure : uint8_t {
  kNumPrefsPoss,       // preferences, whatever was retrieved (summed in the summary)
  kNumPrefsFul,        // fulfilled, implied ones included (summed)
  kNumPrefsFulRet,     // fulfilled with both documents retrieved (summed)
  kSimp,               // fulfilled / possible
  kPair,               // per document pair, the share of the groups' preferences fulfilled
  kAvgjg,              // fulfilled / possible per group, averaged over groups
  kAvgjgRnonrel,       // avgjg with a group's non-relevant documents counted as R of them
  kSimpRet,            // simp over preferences between retrieved documents
  kPairRet,
  kAvgjgRet,
  kAvgjgRnonrelRet,
  kSimpImp,            // simp leaving out preferences between two unretrieved documents
  kPairImp,
  kAvgjgImp,
};

// One row per evaluated query (as evaluate() in measures.hpp); options used: complete,
// max_docs, threads, version (10: a query the run lacks is evaluated as an empty ranking). Throws std::invalid_argument for a query whose judgment groups are
// inconsistent, naming the query, the group and the document.
Evaluation evaluate_prefs(const Prefs& prefs, const Run& run,
                          const std::vector<PrefsMeasure>& measures, const EvalOptions& options);

}  // namespace mirkit::eval
