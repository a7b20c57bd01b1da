#include "index/run_merge.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <queue>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/parallel.hpp"

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

namespace {

// The entry whose header starts at p (end: the file's end), or nullptr when it is truncated.
const uint8_t* read_entry(const uint8_t* p, const uint8_t* end, RunEntry& e) {
  uint32_t len = 0, df = 0, size = 0;
  p = core::get_varint(p, end, len);
  if (!p || static_cast<size_t>(end - p) < len) return nullptr;
  e.term = std::string_view(reinterpret_cast<const char*>(p), len);
  p = core::get_varint(p + len, end, df);
  if (p) p = core::get_varint(p, end, size);
  if (!p || static_cast<size_t>(end - p) < size) return nullptr;
  e.df = df;
  e.data = p;
  e.size = size;
  return p + size;
}

}  // namespace

FileRunSource::FileRunSource(const std::string& path) : m_file(path) {
  const uint8_t* begin = m_file.data();
  const uint8_t* end = begin + m_file.size();
  RunEntry e;
  for (const uint8_t* p = begin; p != end;) {
    m_offsets.push_back(static_cast<uint64_t>(p - begin));
    p = read_entry(p, end, e);
    if (!p) throw std::runtime_error("run file " + m_file.path() + " is truncated");
  }
}

RunEntry FileRunSource::entry(size_t i) const {
  RunEntry e;
  read_entry(m_file.data() + m_offsets[i], m_file.data() + m_file.size(), e);  // checked above
  return e;
}

namespace {

// One run entry's postings, read one at a time: the head posting's docid (mapped) and tf are
// decoded, its positions (if any) follow at m_p.
class PostingStream {
 public:
  PostingStream(const RunEntry& e, const DocidMap* map, bool positions)
      : m_term(e.term), m_p(e.data), m_end(e.data + e.size), m_left(e.df),
        m_positions(positions) {
    if (map != nullptr && !map->segments.empty()) {
      m_seg = map->segments.data();
      m_seg_end = m_seg + map->segments.size();
    }
    advance();
  }
  bool live() const { return m_live; }
  uint32_t docid() const { return m_docid; }

  // Feeds the head posting to `out` and reads the next one.
  void emit(BlockWriter& out, std::vector<uint32_t>& pos) {
    pos.resize(m_tf);
    if (m_positions) {
      uint32_t at = 0;
      for (uint32_t j = 0; j < m_tf && m_p; ++j) {
        uint32_t g = 0;
        m_p = core::get_varint(m_p, m_end, g);
        pos[j] = at += g;
      }
      if (!m_p) corrupt();
    }
    out.add(m_docid, m_tf, pos.data());
    advance();
  }

 private:
  [[noreturn]] void corrupt() const {
    throw std::runtime_error("corrupt run entry for term " + std::string(m_term));
  }
  void advance() {
    if (m_left == 0) {
      m_live = false;
      return;
    }
    --m_left;
    uint32_t gap = 0;
    m_p = core::get_varint(m_p, m_end, gap);
    if (m_p) m_p = core::get_varint(m_p, m_end, m_tf);
    if (!m_p) corrupt();
    m_local += gap;
    if (m_seg == nullptr) {
      m_docid = m_local;
      return;
    }
    while (m_seg + 1 != m_seg_end && m_local >= m_seg[1].local_first) ++m_seg;
    m_docid = m_local - m_seg->local_first + m_seg->global_first;
  }

  std::string_view m_term;
  const uint8_t* m_p;
  const uint8_t* m_end;
  uint32_t m_left;
  bool m_positions;
  const DocidMap::Segment* m_seg = nullptr;
  const DocidMap::Segment* m_seg_end = nullptr;
  bool m_live = true;
  uint32_t m_local = 0, m_docid = 0, m_tf = 0;
};

// The postings of one term from several runs (disjoint docids), in docid order: the stream
// with the lowest docid emits until it passes the lowest of the others, so runs in docid order
// cost one comparison a posting.
void merge_postings(std::vector<PostingStream>& streams, BlockWriter& out,
                    std::vector<uint32_t>& pos) {
  for (;;) {
    size_t best = streams.size();
    uint64_t limit = UINT64_MAX;
    for (size_t s = 0; s < streams.size(); ++s) {
      if (!streams[s].live()) continue;
      if (best == streams.size() || streams[s].docid() < streams[best].docid()) {
        if (best != streams.size()) limit = std::min<uint64_t>(limit, streams[best].docid());
        best = s;
      } else {
        limit = std::min<uint64_t>(limit, streams[s].docid());
      }
    }
    if (best == streams.size()) return;
    PostingStream& head = streams[best];
    if (head.docid() >= limit) {
      throw std::runtime_error("run merge: two runs hold docid " + std::to_string(limit));
    }
    do {
      head.emit(out, pos);
    } while (head.live() && head.docid() < limit);
  }
}

// Entries [at, end) of one source, its docids mapped by map (null: as they are).
struct Cursor {
  const RunSource* source;
  size_t at, end;
  const DocidMap* map;
};

// The k-way merge by term of the cursors' entries into out.
void merge_range(std::vector<Cursor> cursors, bool positions, BlockWriter& out) {
  std::vector<uint32_t> pos;
  std::vector<RunEntry> heads(cursors.size());
  auto later = [&](size_t a, size_t b) {
    return heads[a].term != heads[b].term ? heads[a].term > heads[b].term : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  auto advance = [&](size_t c) {
    if (cursors[c].at == cursors[c].end) return;
    heads[c] = cursors[c].source->entry(cursors[c].at++);
    heap.push(c);
  };
  for (size_t c = 0; c < cursors.size(); ++c) advance(c);
  std::vector<size_t> same;
  std::vector<PostingStream> streams;
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
    streams.clear();
    for (size_t c : same) streams.emplace_back(heads[c], cursors[c].map, positions);
    merge_postings(streams, out, pos);
    out.end_term();
    for (size_t c : same) advance(c);
  }
}

// The first entry of source s whose term is not below `term`.
size_t lower_bound(const RunSource& s, std::string_view term) {
  size_t lo = 0, hi = s.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (s.entry(mid).term < term) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

// What an entry weighs in a term range: its postings bytes, plus what each term costs a range
// writer besides its blocks (its string, offsets, statistics, thresholds and hash: about 64
// bytes), so that ranges of many rare terms are cut as small in memory as ranges of few
// frequent ones.
static uint64_t entry_weight(const RunEntry& e) { return e.size + e.term.size() + 64; }

namespace {

// Each source's weight (its entries' entry_weight), the sources on `threads` threads.
std::vector<uint64_t> source_weights(const std::vector<std::unique_ptr<RunSource>>& sources,
                                     unsigned threads) {
  std::vector<uint64_t> volume(sources.size(), 0);
  core::parallel_for(sources.size(), threads, [&](size_t s) {
    for (size_t i = 0; i < sources[s]->size(); ++i) volume[s] += entry_weight(sources[s]->entry(i));
  });
  return volume;
}

// split_terms, given the sources' weights: about 16 samples a range in all, each weighing the
// volume since its source's previous sample (the sources sampled on `threads` threads), sorted;
// a range ends before the sample at which the running volume passes its share.
std::vector<std::string> split_by_weight(const std::vector<std::unique_ptr<RunSource>>& sources,
                                         const std::vector<uint64_t>& volume, size_t n_ranges,
                                         unsigned threads) {
  if (n_ranges <= 1) return {};
  uint64_t total = 0;
  for (uint64_t v : volume) total += v;
  if (total == 0) return {};
  const uint64_t step = std::max<uint64_t>(1, total / (16 * n_ranges));
  std::vector<std::vector<std::pair<std::string_view, uint64_t>>> taken(sources.size());
  core::parallel_for(sources.size(), threads, [&](size_t s) {
    const RunSource& source = *sources[s];
    uint64_t weight = 0;
    for (size_t i = 0; i < source.size(); ++i) {
      const RunEntry e = source.entry(i);
      weight += entry_weight(e);
      if (weight >= step || i + 1 == source.size()) {
        taken[s].emplace_back(e.term, weight);
        weight = 0;
      }
    }
  });
  std::vector<std::pair<std::string_view, uint64_t>> samples;
  for (const auto& t : taken) samples.insert(samples.end(), t.begin(), t.end());
  std::sort(samples.begin(), samples.end());
  std::vector<std::string> splits;
  uint64_t running = 0;
  for (const auto& [term, weight] : samples) {
    if (splits.size() + 1 == n_ranges) break;
    if (running >= total * (splits.size() + 1) / n_ranges &&
        (splits.empty() ? running > 0 : splits.back() < term)) {
      splits.emplace_back(term);
    }
    running += weight;
  }
  return splits;
}

}  // namespace

std::vector<std::string> split_terms(const std::vector<std::unique_ptr<RunSource>>& sources,
                                     size_t n_ranges) {
  if (n_ranges <= 1) return {};
  return split_by_weight(sources, source_weights(sources, 1), n_ranges, 1);
}

size_t merge_runs(const std::vector<std::unique_ptr<RunSource>>& sources, bool positions,
                  BlockWriter& out, const std::vector<const DocidMap*>& maps, unsigned threads,
                  size_t memory_budget, size_t* range_memory) {
  if (range_memory) *range_memory = 0;
  auto cursors_between = [&](std::string_view lo, std::string_view hi, bool first, bool last) {
    std::vector<Cursor> cursors;
    for (size_t s = 0; s < sources.size(); ++s) {
      const size_t begin = first ? 0 : lower_bound(*sources[s], lo);
      const size_t end = last ? sources[s]->size() : lower_bound(*sources[s], hi);
      cursors.push_back({sources[s].get(), begin, end, maps.empty() ? nullptr : maps[s]});
    }
    return cursors;
  };
  threads = core::resolve_threads(threads);
  if (threads <= 1) {
    merge_range(cursors_between({}, {}, true, true), positions, out);
    return 1;
  }
  // Ranges: two a thread, more when a range would weigh more than budget / (4 threads): its
  // writer's buffers grow by doubling, so the `threads` ranges held at once take at most about
  // budget / 2 (more only where one term outweighs a range).
  // The runs' entries are walked twice, each source on a thread: to weigh them, to sample them.
  const std::vector<uint64_t> volume = source_weights(sources, threads);
  uint64_t bytes = 0;
  for (uint64_t v : volume) bytes += v;
  const uint64_t range_cap = std::max<uint64_t>(memory_budget / (4 * threads), 1);
  const size_t n_ranges = static_cast<size_t>(std::min<uint64_t>(
      std::max<uint64_t>(2 * threads, (bytes + range_cap - 1) / range_cap), 1 << 16));
  const std::vector<std::string> splits = split_by_weight(sources, volume, n_ranges, threads);
  const size_t n = splits.size() + 1;
  if (n == 1) {
    merge_range(cursors_between({}, {}, true, true), positions, out);
    return 1;
  }
  // Each range into memory; the finished ones are appended in order, by whichever thread
  // finishes the one the next append waits for. Range r starts once r < next_append + threads
  // (the thread of range next_append never waits, so this cannot deadlock). `held` logs each
  // range's start (r + 1) and append (-(r + 1)) for the memory count.
  std::vector<std::unique_ptr<BlockWriter>> done(n);
  std::vector<size_t> bytes_of(n, 0);
  std::vector<int64_t> held;
  size_t next_append = 0;
  bool failed = false;
  std::mutex append_mutex;
  std::condition_variable appended;
  core::parallel_for(n, threads, [&](size_t r) {
    {
      std::unique_lock<std::mutex> lock(append_mutex);
      appended.wait(lock, [&] { return failed || r < next_append + threads; });
      if (failed) return;
      held.push_back(static_cast<int64_t>(r) + 1);
    }
    auto range = out.range_writer();
    try {
      merge_range(cursors_between(r ? splits[r - 1] : std::string_view(),
                                  r + 1 < n ? splits[r] : std::string_view(), r == 0, r + 1 == n),
                  positions, *range);
    } catch (...) {
      std::lock_guard<std::mutex> lock(append_mutex);
      failed = true;
      appended.notify_all();
      throw;
    }
    std::lock_guard<std::mutex> lock(append_mutex);
    bytes_of[r] = range->memory();
    done[r] = std::move(range);
    while (next_append < n && done[next_append]) {
      out.append(*done[next_append]);
      done[next_append++].reset();
      held.push_back(-static_cast<int64_t>(next_append));
    }
    appended.notify_all();
  });
  if (range_memory) {
    size_t now = 0;
    for (int64_t e : held) {
      if (e > 0) {
        now += bytes_of[e - 1];
        *range_memory = std::max(*range_memory, now);
      } else {
        now -= bytes_of[-e - 1];
      }
    }
  }
  return n;
}

}  // namespace mirkit::index
