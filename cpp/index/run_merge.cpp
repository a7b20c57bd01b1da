#include "index/run_merge.hpp"

#include <queue>
#include <stdexcept>

namespace mirkit::index {

void write_run_entry(core::FileWriter& out, const RunEntry& e) {
  uint8_t tmp[15];
  out.write(tmp, core::put_varint(tmp, static_cast<uint32_t>(e.term.size())) - tmp);
  out.write(e.term.data(), e.term.size());
  uint8_t* end = core::put_varint(tmp, e.df);
  end = core::put_varint(end, static_cast<uint32_t>(e.size));
  out.write(tmp, end - tmp);
  out.write(e.data, e.size);
}

FileRunSource::FileRunSource(const std::string& path) : m_file(path), m_p(m_file.data()) {}

bool FileRunSource::next(RunEntry& e) {
  const uint8_t* end = m_file.data() + m_file.size();
  if (m_p == end) return false;
  uint32_t len = 0, df = 0, size = 0;
  const uint8_t* p = core::get_varint(m_p, end, len);
  if (p && static_cast<size_t>(end - p) >= len) {
    e.term = std::string_view(reinterpret_cast<const char*>(p), len);
    p = core::get_varint(p + len, end, df);
    if (p) p = core::get_varint(p, end, size);
    if (p && static_cast<size_t>(end - p) >= size) {
      e.df = df;
      e.data = p;
      e.size = size;
      m_p = p + size;
      return true;
    }
  }
  throw std::runtime_error("run file " + m_file.path() + " is truncated");
}

namespace {

// Decodes one run entry's postings and feeds them to the block writer.
void replay(const RunEntry& e, uint32_t base, bool positions, BlockWriter& out,
            std::vector<uint32_t>& pos) {
  const uint8_t* p = e.data;
  const uint8_t* end = e.data + e.size;
  uint32_t docid = base;
  for (uint32_t k = 0; k < e.df; ++k) {
    uint32_t gap = 0, tf = 0;
    p = core::get_varint(p, end, gap);
    if (p) p = core::get_varint(p, end, tf);
    if (!p) throw std::runtime_error("corrupt run entry for term " + std::string(e.term));
    docid += gap;
    pos.resize(tf);
    if (positions) {
      uint32_t at = 0;
      for (uint32_t j = 0; j < tf && p; ++j) {
        uint32_t g = 0;
        p = core::get_varint(p, end, g);
        pos[j] = at += g;
      }
      if (!p) throw std::runtime_error("corrupt run entry for term " + std::string(e.term));
    }
    out.add(docid, tf, pos.data());
  }
}

}  // namespace

void merge_runs(const std::vector<std::unique_ptr<RunSource>>& sources, bool positions,
                BlockWriter& out, const std::vector<uint32_t>& bases) {
  std::vector<uint32_t> pos;
  // k-way merge by term; equal terms come out in run order, which is docid order.
  std::vector<RunEntry> heads(sources.size());
  auto later = [&](size_t a, size_t b) {
    return heads[a].term != heads[b].term ? heads[a].term > heads[b].term : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t s = 0; s < sources.size(); ++s) {
    if (sources[s]->next(heads[s])) heap.push(s);
  }
  std::vector<size_t> same;
  while (!heap.empty()) {
    same.clear();
    std::string_view term = heads[heap.top()].term;
    uint64_t df = 0;
    while (!heap.empty() && heads[heap.top()].term == term) {
      same.push_back(heap.top());
      df += heads[heap.top()].df;
      heap.pop();
    }
    out.begin_term(term, df);
    for (size_t s : same) replay(heads[s], bases.empty() ? 0 : bases[s], positions, out, pos);
    out.end_term();
    for (size_t s : same) {
      if (sources[s]->next(heads[s])) heap.push(s);
    }
  }
}

}  // namespace mirkit::index
