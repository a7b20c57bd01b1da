// TREC relevance judgments (qrels) and runs, held the way trec_eval holds them, and their text
// formats:
//
//   qrels:  qid iter docno rel                       (exactly 4 fields; rel an integer)
//   run:    qid iter docno rank score tag [ignored]  (at least 6 fields)
//
// Fields are separated by any run of spaces or tabs; blank lines and lines starting with '#'
// are skipped (trec_eval skips them in runs; we accept them in qrels too). The rank column of a
// run is ignored, as trec_eval ignores it: documents are ranked by score. A score is kept as a
// double and ranked as a C float, as trec_eval 9 keeps it (scores closer than float precision
// tie), or as the double trec_eval 10 keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "index/string_map.hpp"

namespace mirkit::eval {

// A malformed line of a qrels or run text; `line` is 1-based.
class ParseError : public std::invalid_argument {
 public:
  ParseError(size_t line, const std::string& reason)
      : std::invalid_argument(reason), m_line(line) {}
  size_t line() const { return m_line; }

 private:
  size_t m_line;
};

// Relevance values of judged documents, per query. Negative values mark documents in the pool
// but not judged (trec_eval's convention); they count neither as relevant nor as non-relevant.
class Qrels {
 public:
  static constexpr int32_t kNotInPool = -1;  // trec_eval's RELVALUE_NONPOOL
  static constexpr int32_t kUnjudged = -2;   // RELVALUE_UNJUDGED: in the pool, value < 0

  // Adds one judgment; `line` (0 if none) names it in the duplicate error. Call finish()
  // after the last one, before relevance().
  void add(std::string_view qid, std::string_view docno, int32_t rel, size_t line = 0);
  void finish();
  static Qrels parse(std::string_view text);

  size_t n_queries() const { return m_qids.size(); }
  size_t size() const { return m_judgments.size(); }
  std::string_view qid(uint32_t query) const { return m_qids.key(query); }
  uint32_t find_query(std::string_view qid) const { return m_qids.find(qid); }
  // The relevance of docno for a query: its judged value (>= 0), kUnjudged or kNotInPool.
  int32_t relevance(uint32_t query, std::string_view docno) const;
  // How many documents of a query are judged at each level 0, 1, ... (negative ones left out).
  const std::vector<int64_t>& levels(uint32_t query) const { return m_levels[query]; }
  // Every judgment (query, docno, rel), in the order added.
  struct Judgment {
    uint32_t query;
    uint32_t key;  // into m_judgments: the docno is its key less the 4-byte query prefix
    int32_t rel;
  };
  const std::vector<Judgment>& judgments() const { return m_list; }
  std::string_view docno(const Judgment& j) const { return m_judgments.key(j.key).substr(4); }

 private:
  index::StringMap m_qids;
  index::StringMap m_judgments;  // key: 4-byte query id + docno, value: rel as uint32
  std::vector<std::vector<int64_t>> m_levels;
  std::vector<Judgment> m_list;
  // Per query, a small open-addressing table of its judgments (it stays in cache while the
  // query's run is looked up): slots (hash >> 32) << 32 | (index into m_list + 1), 0 = empty.
  struct Table {
    size_t first;
    uint64_t mask;
  };
  std::vector<Table> m_tables;
  std::vector<uint64_t> m_slots;
  std::vector<size_t> m_lines;  // per judgment key: its line (duplicate errors)
  std::string m_key;            // scratch
};

// Retrieved documents with scores, per query.
class Run {
 public:
  // Adds one retrieved document; `line` (0 if none) names it in errors. A query's documents
  // must be distinct when `check_duplicates` is set on the run (always for parsed text).
  void add(std::string_view qid, std::string_view docno, double score, size_t line = 0) {
    add(add_query(qid, line), docno, score, line);
  }
  // The same, for the query of index add_query() returned (saves finding it per document).
  void add(uint32_t query, std::string_view docno, double score, size_t line = 0);
  static Run parse(std::string_view text);
  // The index of a query, added with no documents yet when new.
  uint32_t add_query(std::string_view qid, size_t line = 0);
  // Room for `docs` more documents whose docnos take `bytes` in all (an estimate is fine), and
  // for `query_docs` more of one query.
  void reserve(size_t docs, size_t bytes);
  void reserve_query(uint32_t query, size_t query_docs) { m_docs[query].reserve(query_docs); }
  void set_check_duplicates(bool on) { m_check = on; }

  size_t n_queries() const { return m_qids.size(); }
  size_t size() const { return m_scores.size(); }
  std::string_view qid(uint32_t query) const { return m_qids.key(query); }
  uint32_t find_query(std::string_view qid) const { return m_qids.find(qid); }
  const std::string& tag() const { return m_tag; }
  void set_tag(std::string tag) { m_tag = std::move(tag); }

  // The documents of a query in input order: indices into docno()/score().
  const std::vector<uint32_t>& docs(uint32_t query) const { return m_docs[query]; }
  std::string_view docno(uint32_t doc) const {
    return {m_arena.data() + m_offsets[doc], m_offsets[doc + 1] - m_offsets[doc]};
  }
  double score(uint32_t doc) const { return m_scores[doc]; }
  float score32(uint32_t doc) const { return static_cast<float>(m_scores[doc]); }
  // A query's documents ranked as trec_eval `version` (9 or 10) ranks them: score (a float
  // for 9, a double for 10) descending, ties by docno descending (strcmp order).
  std::vector<uint32_t> ranked(uint32_t query, int version = 9) const;

 private:
  index::StringMap m_qids;
  std::vector<std::vector<uint32_t>> m_docs;
  std::vector<char> m_arena;
  std::vector<size_t> m_offsets{0};
  std::vector<double> m_scores;
  std::string m_tag;
  bool m_check = false;
  index::StringMap m_seen;  // 4-byte query id + docno, for duplicate checks
  std::vector<size_t> m_lines;
  std::string m_key;
};

}  // namespace mirkit::eval
