#include "eval/trec.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "core/errors.hpp"
#include "eval/lines.hpp"

namespace mirkit::eval {
namespace {

using lines::fail_line;
using lines::for_each_line;
using lines::number_start;
using lines::quoted;
using lines::split;

constexpr int32_t kMaxRelevance = 1 << 20;  // levels are counted in an array of this size

void make_key(std::string& key, uint32_t query, std::string_view docno) {
  key.resize(4 + docno.size());
  std::memcpy(key.data(), &query, 4);
  std::memcpy(key.data() + 4, docno.data(), docno.size());
}

// Sorts keys by their high 32 bits, descending (the order of equal ones is left unspecified):
// an LSD radix sort, 8 bits a pass, passes where every key has the same digit skipped (scores
// of one run often share their top bits). Several times faster than std::sort at a run's
// depth; short lists go to std::sort.
void sort_descending_by_high_word(std::vector<uint64_t>& keys) {
  constexpr size_t kShort = 64;
  if (keys.size() <= kShort) {
    std::sort(keys.begin(), keys.end(), std::greater<uint64_t>());
    return;
  }
  std::vector<uint64_t> buffer(keys.size());
  uint64_t* from = keys.data();
  uint64_t* to = buffer.data();
  for (int shift = 32; shift < 64; shift += 8) {
    size_t count[257] = {};
    for (size_t i = 0; i < keys.size(); ++i) ++count[255 - ((from[i] >> shift) & 0xFF) + 1];
    if (std::find(count + 1, count + 257, keys.size()) != count + 257) continue;  // one digit
    for (size_t d = 1; d < 257; ++d) count[d] += count[d - 1];
    for (size_t i = 0; i < keys.size(); ++i) {
      to[count[255 - ((from[i] >> shift) & 0xFF)]++] = from[i];
    }
    std::swap(from, to);
  }
  if (from != keys.data()) std::copy(from, from + keys.size(), keys.data());
}

}  // namespace

void Qrels::add(std::string_view qid, std::string_view docno, int32_t rel, size_t line) {
  if (qid.empty() || docno.empty()) fail_line(line, "empty query id or document id");
  if (rel >= kMaxRelevance) {
    fail_line(line, core::message("relevance ", rel, " is too large (at most ",
                                  kMaxRelevance - 1, ")"));
  }
  bool inserted = false;
  uint32_t query = m_qids.insert(qid, 0, inserted);
  if (inserted) m_levels.emplace_back();
  make_key(m_key, query, docno);
  uint32_t key = m_judgments.insert(m_key, static_cast<uint32_t>(rel), inserted);
  if (!inserted) {
    std::string where = line ? core::message(" (line ", m_lines[key], ")") : std::string();
    fail_line(line, core::message("document ", quoted(docno), " is judged twice for query ",
                                  quoted(qid), where));
  }
  m_lines.push_back(line);
  m_list.push_back(Judgment{query, key, rel});
  if (rel >= 0) {
    auto& levels = m_levels[query];
    if (levels.size() <= static_cast<size_t>(rel)) levels.resize(rel + 1, 0);
    ++levels[rel];
  }
}

void Qrels::finish() {
  std::vector<std::vector<uint32_t>> members(n_queries());
  for (size_t j = 0; j < m_list.size(); ++j) members[m_list[j].query].push_back(j);
  m_tables.clear();
  m_slots.clear();
  for (const auto& ids : members) {
    uint64_t size = 4;
    while (size < 2 * ids.size()) size *= 2;
    Table table{m_slots.size(), size - 1};
    m_slots.resize(m_slots.size() + size, 0);
    for (uint32_t j : ids) {
      uint64_t h = index::StringMap::hash(docno(m_list[j]));
      size_t i = h & table.mask;
      while (m_slots[table.first + i]) i = (i + 1) & table.mask;
      m_slots[table.first + i] = (h >> 32 << 32) | (j + 1);
    }
    m_tables.push_back(table);
  }
}

int32_t Qrels::relevance(uint32_t query, std::string_view docno) const {
  const Table& table = m_tables[query];
  const uint64_t h = index::StringMap::hash(docno);
  for (size_t i = h & table.mask;; i = (i + 1) & table.mask) {
    const uint64_t slot = m_slots[table.first + i];
    if (slot == 0) return kNotInPool;
    if ((slot >> 32) == (h >> 32)) {
      const Judgment& j = m_list[(slot & 0xFFFFFFFFu) - 1];
      if (this->docno(j) == docno) return j.rel < 0 ? kUnjudged : j.rel;
    }
  }
}

Qrels Qrels::parse(std::string_view text) {
  Qrels qrels;
  for_each_line(text, [&](size_t line_no, std::string_view line) {
    std::string_view f[5];
    size_t n = split(line, f, 5);
    if (n != 4) {
      fail_line(line_no, core::message("expected 4 fields 'qid iter docno relevance', got ", n,
                                       n == 5 ? " or more" : ""));
    }
    int32_t rel = 0;
    const char* end = f[3].data() + f[3].size();
    const char* first = number_start(f[3]);
    auto [ptr, ec] = std::from_chars(first, end, rel);
    if (ec != std::errc() || ptr != end) {
      fail_line(line_no, core::message("relevance ", quoted(f[3]), " is not an integer"));
    }
    qrels.add(f[0], f[2], rel, line_no);
  });
  qrels.finish();
  return qrels;
}

uint32_t Run::add_query(std::string_view qid, size_t line) {
  if (qid.empty()) fail_line(line, "empty query id");
  bool inserted = false;
  const uint32_t query = m_qids.insert(qid, 0, inserted);
  if (inserted) m_docs.emplace_back();
  return query;
}

void Run::reserve(size_t docs, size_t bytes) {
  m_scores.reserve(m_scores.size() + docs);
  m_offsets.reserve(m_offsets.size() + docs);
  m_arena.reserve(m_arena.size() + bytes);
}

void Run::add(uint32_t query, std::string_view docno, double score, size_t line) {
  if (docno.empty()) fail_line(line, "empty document id");
  if (std::isnan(score)) {
    fail_line(line, core::message("score of document ", quoted(docno), " for query ",
                                  quoted(m_qids.key(query)), " is NaN"));
  }
  if (m_scores.size() >= UINT32_MAX - 1) fail_line(line, "more than 2^32 - 2 retrieved documents");
  bool inserted = false;
  if (m_check) {
    make_key(m_key, query, docno);
    uint32_t id = m_seen.insert(m_key, 0, inserted);
    if (!inserted) {
      std::string where = line ? core::message(" (line ", m_lines[id], ")") : std::string();
      fail_line(line, core::message("document ", quoted(docno), " is retrieved twice for query ",
                                    quoted(m_qids.key(query)), where));
    }
    m_lines.push_back(line);
  }
  auto doc = static_cast<uint32_t>(m_scores.size());
  m_docs[query].push_back(doc);
  m_arena.insert(m_arena.end(), docno.begin(), docno.end());
  m_offsets.push_back(m_arena.size());
  m_scores.push_back(score);
}

Run Run::parse(std::string_view text) {
  Run run;
  run.set_check_duplicates(true);
  for_each_line(text, [&](size_t line_no, std::string_view line) {
    std::string_view f[6];
    size_t n = split(line, f, 6);
    if (n != 6) {
      fail_line(line_no,
                core::message("expected 6 fields 'qid iter docno rank score tag', got ", n));
    }
    double score = 0;
    const char* end = f[4].data() + f[4].size();
    const char* first = number_start(f[4]);
    auto [ptr, ec] = std::from_chars(first, end, score);
    if (ec == std::errc::result_out_of_range) {
      score = std::strtod(std::string(f[4]).c_str(), nullptr);  // +-inf or a denormal, as atof
    } else if (ec != std::errc() || ptr != end) {
      fail_line(line_no, core::message("score ", quoted(f[4]), " is not a number"));
    }
    run.add(f[0], f[2], score, line_no);
    run.m_tag.assign(f[5]);  // trec_eval keeps the tag of the last line
  });
  return run;
}

std::vector<uint32_t> Run::ranked(uint32_t query, int version) const {
  const std::vector<uint32_t>& docs = m_docs[query];
  std::vector<uint32_t> out(docs.begin(), docs.end());
  if (version >= 10) {
    // trec_eval 10 reads scores as doubles; -0 ties +0 (== compares them equal)
    std::sort(out.begin(), out.end(), [this](uint32_t a, uint32_t b) {
      if (m_scores[a] != m_scores[b]) return m_scores[a] > m_scores[b];
      return docno(a) > docno(b);
    });
    return out;
  }
  // Sort (order-preserving key of the float score, doc) descending; then put each run of
  // equal scores in descending docno order.
  std::vector<uint64_t> keys(docs.size());
  for (size_t i = 0; i < docs.size(); ++i) {
    uint32_t bits;
    float s = score32(docs[i]) + 0.0f;  // -0 ties +0
    std::memcpy(&bits, &s, 4);
    bits = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
    keys[i] = (uint64_t{bits} << 32) | docs[i];
  }
  sort_descending_by_high_word(keys);
  for (size_t i = 0; i < keys.size(); ++i) out[i] = static_cast<uint32_t>(keys[i]);
  for (size_t i = 0; i < keys.size();) {
    size_t j = i + 1;
    while (j < keys.size() && (keys[j] >> 32) == (keys[i] >> 32)) ++j;
    if (j - i > 1) {
      std::sort(out.begin() + i, out.begin() + j,
                [this](uint32_t a, uint32_t b) { return docno(a) > docno(b); });
    }
    i = j;
  }
  return out;
}

}  // namespace mirkit::eval
