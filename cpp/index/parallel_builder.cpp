#include "index/parallel_builder.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <filesystem>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "core/parallel.hpp"
#include "index/format.hpp"
#include "index/stored_fields.hpp"
#include "index/string_map.hpp"

namespace mirkit::index {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

constexpr size_t kWorkerBatch = 2048;         // documents per IndexBuilder::add_batch of a worker
constexpr size_t kMinRangeBytes = size_t{1} << 12;  // a thread per 4 KiB at most
constexpr size_t kReleaseBytes = size_t{8} << 20;   // read file pages given back every 8 MiB

// Global docids by 64-bit id hash (open addressing, load <= 1/2); a hash may repeat (distinct
// ids with one hash), so lookups visit every entry of a hash.
class IdTable {
 public:
  IdTable() : m_slots(1 << 16) {}
  template <class Fn>  // fn(docid) for each entry with hash h; stops when fn returns true
  bool any_of(uint64_t h, Fn&& fn) const {
    h = h ? h : 1;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      if (m_slots[i].hash == 0) return false;
      if (m_slots[i].hash == h && fn(m_slots[i].docid)) return true;
    }
  }
  void insert(uint64_t h, uint64_t docid) {
    h = h ? h : 1;
    size_t i = h & mask();
    while (m_slots[i].hash != 0) i = (i + 1) & mask();
    m_slots[i] = {h, docid};
    if (2 * ++m_size > m_slots.size()) grow();
  }
  size_t memory() const { return m_slots.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t hash = 0, docid = 0;
  };
  size_t mask() const { return m_slots.size() - 1; }
  void grow() {
    std::vector<Slot> old(m_slots.size() * 2);
    old.swap(m_slots);
    m_size = 0;
    for (const Slot& s : old) {
      if (s.hash) insert(s.hash, s.docid);
    }
  }
  std::vector<Slot> m_slots;
  size_t m_size = 0;
};

// What one worker of add_jsonl produced besides its part.
struct WorkerOutput {
  std::vector<uint64_t> hashes, lines;  // per document added: id hash, line
  // With a store: per document added, its line's offset in the file and length.
  bool keep_spans = false;
  std::vector<std::pair<uint64_t, uint32_t>> spans;
  uint64_t error_line = 0;              // of the callback's error; 0: none
  double parse_seconds = 0;
};

// A batch of add_batch, copied: its ids and texts in two arenas, each document's end.
struct Batch {
  std::string ids, texts;
  std::vector<size_t> id_end, text_end;
};

// The workers of a stream of add_batch calls: worker w indexes the batches given to it, in
// order, into its part on a thread of its own, while the caller reads the next batch. A worker
// holds at most kQueueDepth batches (the one it is indexing included); the caller gives each
// batch to the worker with the least text pending, waiting for room.
class BatchWorkers {
 public:
  static constexpr size_t kQueueDepth = 2;
  explicit BatchWorkers(size_t n) : m_parts(n, nullptr), m_queues(n), m_pending(n, 0),
                                    m_load(n, 0) {
    for (size_t w = 0; w < n; ++w) m_threads.emplace_back([this, w] { run(w); });
  }
  ~BatchWorkers() { stop(/*cancel=*/true); }
  BatchWorkers(const BatchWorkers&) = delete;
  BatchWorkers& operator=(const BatchWorkers&) = delete;

  // The worker to give the next batch to, once one has room (ties go round, so idle workers
  // take turns); rethrows a worker's exception.
  size_t pick() {
    std::unique_lock<std::mutex> lock(m_mutex);
    const size_t n = m_load.size();
    size_t best = 0;
    m_room.wait(lock, [&] {  // the least loaded worker with room
      best = n;
      for (size_t k = 1; k <= n; ++k) {
        const size_t w = (m_last + k) % n;
        if (m_pending[w] < kQueueDepth && (best == n || m_load[w] < m_load[best])) best = w;
      }
      return m_error || best < n;
    });
    if (m_error) std::rethrow_exception(m_error);
    m_last = best;
    return best;
  }
  void give(size_t w, IndexBuilder* part, Batch batch) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_parts[w] = part;
      m_load[w] += batch.ids.size() + batch.texts.size() + 1;
      ++m_pending[w];
      m_queues[w].push_back(std::move(batch));
    }
    m_work.notify_all();
  }
  // Waits until every batch given is indexed; rethrows a worker's exception.
  void drain() {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_room.wait(lock, [&] {
      return std::all_of(m_pending.begin(), m_pending.end(), [](size_t p) { return p == 0; });
    });
    if (m_error) std::rethrow_exception(m_error);
  }
  // Ends the threads, after the batches given (cancel: dropping those not started).
  void stop(bool cancel) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_stopping = true;
      if (cancel) {
        for (auto& q : m_queues) q.clear();
      }
    }
    m_work.notify_all();
    for (auto& t : m_threads) {
      if (t.joinable()) t.join();
    }
  }

 private:
  void run(size_t w) {
    std::vector<std::string_view> ids, texts;
    for (;;) {
      Batch batch;
      IndexBuilder* part;
      bool failed;
      {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_work.wait(lock, [&] { return !m_queues[w].empty() || m_stopping; });
        if (m_queues[w].empty()) return;
        batch = std::move(m_queues[w].front());
        m_queues[w].pop_front();
        part = m_parts[w];
        failed = m_error != nullptr;
      }
      if (!failed) {
        try {
          ids.clear();
          texts.clear();
          for (size_t i = 0, a = 0, b = 0; i < batch.id_end.size(); ++i) {
            ids.emplace_back(batch.ids.data() + a, batch.id_end[i] - a);
            texts.emplace_back(batch.texts.data() + b, batch.text_end[i] - b);
            a = batch.id_end[i];
            b = batch.text_end[i];
          }
          part->add_batch(ids.data(), texts.data(), ids.size());
        } catch (...) {
          std::lock_guard<std::mutex> lock(m_mutex);
          if (!m_error) m_error = std::current_exception();
        }
      }
      {
        std::lock_guard<std::mutex> lock(m_mutex);
        --m_pending[w];
        m_load[w] -= batch.ids.size() + batch.texts.size() + 1;
      }
      m_room.notify_all();
    }
  }

  std::vector<IndexBuilder*> m_parts;
  std::vector<std::deque<Batch>> m_queues;
  std::vector<size_t> m_pending;  // batches given and not yet indexed
  std::vector<size_t> m_load;     // their bytes
  std::vector<std::thread> m_threads;
  std::mutex m_mutex;
  std::condition_variable m_work, m_room;
  std::exception_ptr m_error;
  size_t m_last = SIZE_MAX;  // the worker picked last
  bool m_stopping = false;
};

// A docid run of the collection: documents [local_first, local_first + count) of a part are
// those from global_first on.
struct Run {
  size_t part;
  uint64_t local_first, global_first, count;
};

}  // namespace

struct ParallelBuilder::State {
  static constexpr size_t kNone = SIZE_MAX;
  std::string dir;
  BuildOptions options;
  unsigned threads;
  std::vector<std::unique_ptr<IndexBuilder>> parts;
  std::vector<size_t> part_group;  // each part's group: a JSON Lines range, or a batch stream
  std::vector<uint64_t> part_docs;  // documents given to each part
  std::vector<Run> runs;            // every document's part, in collection order (count > 0)
  size_t n_groups = 0;
  // The open stream of add_batch calls: its group, its part by worker (kNone: none yet), and
  // with threads > 1 its workers.
  bool stream_open = false;
  size_t stream_group = 0;
  std::vector<size_t> stream_parts;
  std::unique_ptr<BatchWorkers> workers;
  bool broken = false;
  bool finished = false;
  IdTable ids;
  uint64_t n_docs = 0;
  ParallelTimings timings;

  State(std::string directory, BuildOptions opts)
      : dir(std::move(directory)), options(std::move(opts)) {
    threads = core::resolve_threads(options.threads);
    // Checks the options now (codecs, BM25): a throwaway builder refuses bad ones.
    fs::path probe = fs::path(dir) / "part-check";
    fs::create_directories(probe);
    { IndexBuilder check(probe.string(), options); }
    fs::remove_all(probe);
  }

  std::string part_dir(size_t k) const {
    return (fs::path(dir) / core::message("part-", k)).string();
  }

  void check_usable() const {
    if (finished) throw std::logic_error("ParallelBuilder: used after finish");
    if (broken) throw std::logic_error("ParallelBuilder: used after an input error");
  }

  IndexBuilder& new_part(unsigned part_threads, size_t budget, size_t group) {
    fs::create_directories(part_dir(parts.size()));
    BuildOptions o = options;
    o.threads = part_threads;
    o.memory_budget = budget;
    o.check_ids = false;  // this builder's id table checks every part
    part_group.push_back(group);
    part_docs.push_back(0);
    parts.push_back(std::make_unique<IndexBuilder>(part_dir(parts.size()), o));
    return *parts.back();
  }

  // The next `count` documents of the collection, from global_first on, are the part's next.
  void add_run(size_t part, uint64_t global_first, uint64_t count) {
    if (count == 0) return;
    Run* last = runs.empty() ? nullptr : &runs.back();
    if (last && last->part == part && last->local_first + last->count == part_docs[part] &&
        last->global_first + last->count == global_first) {
      last->count += count;
    } else {
      runs.push_back({part, part_docs[part], global_first, count});
    }
    part_docs[part] += count;
  }

  std::string id_of(uint64_t d) const {
    const auto run = std::upper_bound(runs.begin(), runs.end(), d, [](uint64_t v, const Run& r) {
                       return v < r.global_first;
                     }) - 1;
    return parts[run->part]->doc_id(run->local_first + (d - run->global_first));
  }
  // The global docid of an earlier document with this id, or -1.
  int64_t find(std::string_view id, uint64_t h) const {
    int64_t found = -1;
    ids.any_of(h, [&](uint64_t d) {
      if (id_of(d) != id) return false;
      found = static_cast<int64_t>(d);
      return true;
    });
    return found;
  }

  // Parts that no longer grow keep their run in memory until finish; past the budget, they
  // spill it. Not while workers index (their parts' memory is theirs).
  void bound_memory() {
    size_t used = ids.memory();
    for (const auto& p : parts) used += p->memory_used();
    if (used <= options.memory_budget) return;
    for (size_t k = 0; k < parts.size(); ++k) {
      if (!stream_open || part_group[k] != stream_group) parts[k]->spill();
    }
  }

  // Waits for the stream's workers (none: nothing to wait for); their error breaks the builder.
  void drain() {
    if (!workers) return;
    try {
      workers->drain();
    } catch (...) {
      broken = true;
      throw;
    }
  }
  void open_stream() {
    bound_memory();
    stream_open = true;
    stream_group = n_groups++;
    stream_parts.assign(threads, kNone);
    if (threads > 1) workers = std::make_unique<BatchWorkers>(threads);
  }
  // Ends the stream of batches: its workers done, its parts' timings counted.
  void close_stream() {
    if (!stream_open) return;
    drain();
    workers.reset();
    const ParallelTimings t = stream_timings();
    timings.analyze = t.analyze;
    timings.invert = t.invert;
    stream_open = false;
    bound_memory();
  }
  // The timings so far, the open stream's parts included (after drain()).
  ParallelTimings stream_timings() const {
    ParallelTimings t = timings;
    if (!stream_open) return t;
    for (size_t k : stream_parts) {
      if (k == kNone) continue;
      t.analyze += parts[k]->timings().analyze;
      t.invert += parts[k]->timings().invert;
    }
    return t;
  }

  // A batch goes to one part whole: to the worker with room and the least work pending (its
  // part made on its first batch, with 1/threads of the budget), as one docid run.
  void add_batch(const std::string_view* ids_, const std::string_view* texts, size_t n) {
    check_usable();
    if (n == 0) return;
    if (n_docs + n > kMaxDocs) core::fail_value("too many documents for one index");
    // Repeats, in batch order: within the batch, or of an earlier document (a known hash is
    // confirmed by comparing the ids, once the workers have written theirs).
    std::vector<uint64_t> hashes(n);
    std::vector<uint32_t> repeat(n, UINT32_MAX);
    StringMap batch;
    bool known = false;
    for (size_t i = 0; i < n; ++i) {
      bool inserted;
      uint32_t first = batch.insert(ids_[i], static_cast<uint32_t>(i), inserted);
      if (!inserted) repeat[i] = first;
      hashes[i] = StringMap::hash(ids_[i]);
      known = known || ids.any_of(hashes[i], [](uint64_t) { return true; });
    }
    if (known) drain();
    for (size_t i = 0; i < n; ++i) {
      if (repeat[i] != UINT32_MAX) throw DuplicateIdError(i, n_docs + repeat[i], std::string(ids_[i]));
      int64_t earlier = known ? find(ids_[i], hashes[i]) : -1;
      if (earlier >= 0) throw DuplicateIdError(i, earlier, std::string(ids_[i]));
    }
    if (!stream_open) open_stream();
    size_t w = 0;
    if (workers) {
      try {
        w = workers->pick();
      } catch (...) {
        broken = true;
        throw;
      }
    }
    if (stream_parts[w] == kNone) {
      stream_parts[w] = parts.size();
      new_part(1, std::max<size_t>(options.memory_budget / threads, size_t{1} << 16),
               stream_group);
    }
    const size_t k = stream_parts[w];
    add_run(k, n_docs, n);
    if (workers) {
      Batch b;
      for (size_t i = 0; i < n; ++i) {
        b.ids += ids_[i];
        b.texts += texts[i];
        b.id_end.push_back(b.ids.size());
        b.text_end.push_back(b.texts.size());
      }
      workers->give(w, parts[k].get(), std::move(b));
    } else {
      try {
        parts[k]->add_batch(ids_, texts, n);
      } catch (...) {
        broken = true;  // the run is recorded, its documents not
        throw;
      }
    }
    for (size_t i = 0; i < n; ++i) ids.insert(hashes[i], n_docs + i);
    n_docs += n;
    if (!workers) bound_memory();
  }

  JsonlResult add_jsonl(const std::string& path, const JsonlFields& fields,
                        const ResolveLine& resolve, uint64_t first, uint64_t stop,
                        uint64_t line, StoreWriter* store,
                        const std::vector<std::string>* store_fields);
  void read_range(const core::MappedFile& file, size_t lo, size_t hi, uint64_t first_line,
                  unsigned worker,
                  const JsonlFields& fields, const ResolveLine& resolve, IndexBuilder& part,
                  WorkerOutput& out);
};

void ParallelBuilder::State::read_range(const core::MappedFile& file, size_t lo, size_t hi,
                                        uint64_t first_line, unsigned worker,
                                        const JsonlFields& fields, const ResolveLine& resolve,
                                        IndexBuilder& part, WorkerOutput& out) {
  const char* data = reinterpret_cast<const char*>(file.data());
  JsonlLineReader reader(fields);
  std::string id, text, with_newline;
  // The batch: ids and texts in two arenas, views made when it is full.
  std::string id_arena, text_arena;
  std::vector<size_t> id_end, text_end;
  std::vector<uint64_t> lines;
  std::vector<std::string_view> id_views, text_views;

  // Adds the batch to the part (repeated ids are found later, across all parts).
  auto add = [&] {
    id_views.clear();
    text_views.clear();
    for (size_t i = 0, a = 0, b = 0; i < id_end.size(); ++i) {
      id_views.emplace_back(id_arena.data() + a, id_end[i] - a);
      text_views.emplace_back(text_arena.data() + b, text_end[i] - b);
      a = id_end[i];
      b = text_end[i];
    }
    part.add_batch(id_views.data(), text_views.data(), id_views.size());
    for (size_t i = 0; i < id_views.size(); ++i) {
      out.hashes.push_back(StringMap::hash(id_views[i]));
      out.lines.push_back(lines[i]);
    }
    id_arena.clear();
    text_arena.clear();
    id_end.clear();
    text_end.clear();
    lines.clear();
  };

  auto parse_started = Clock::now();
  uint64_t line = first_line;
  size_t released = lo;  // the range's bytes before this are given back to the page cache
  for (size_t at = lo; at < hi; ++line) {
    if (at - released >= kReleaseBytes) {  // the file's pages need not stay in this process
      file.release(released, at - released);
      released = at;
    }
    const char* start = data + at;
    const void* nl = std::memchr(start, '\n', hi - at);
    const size_t len = nl ? static_cast<const char*>(nl) - start : hi - at;
    at += len + 1;
    const std::string_view record(start, len);
    const LineStatus status = reader.read(record, id, text);
    if (status == LineStatus::kBlank) continue;
    if (status == LineStatus::kUnsure) {
      std::string_view bytes(start, len + 1);
      if (!nl) {  // the last line, without its '\n'
        with_newline.assign(record);
        with_newline += '\n';
        bytes = with_newline;
      }
      LineOutcome outcome = resolve(worker, line, bytes);
      if (outcome.kind == LineOutcome::kSkip) continue;
      if (outcome.kind == LineOutcome::kError) {
        out.parse_seconds += seconds_since(parse_started);
        add();
        out.error_line = line;
        return;
      }
      id.swap(outcome.id);
      text.swap(outcome.text);
    }
    id_arena += id;
    text_arena += text;
    id_end.push_back(id_arena.size());
    text_end.push_back(text_arena.size());
    lines.push_back(line);
    if (out.keep_spans) {
      if (len > UINT32_MAX) core::fail_value("line ", line, " has ", len, " bytes; a stored "
                                             "document takes under 4 GiB");
      out.spans.emplace_back(static_cast<uint64_t>(start - data), static_cast<uint32_t>(len));
    }
    if (id_end.size() == kWorkerBatch) {
      out.parse_seconds += seconds_since(parse_started);
      add();
      parse_started = Clock::now();
    }
  }
  out.parse_seconds += seconds_since(parse_started);
  add();
}

JsonlResult ParallelBuilder::State::add_jsonl(const std::string& path, const JsonlFields& fields,
                                              const ResolveLine& resolve, uint64_t first,
                                              uint64_t stop, uint64_t line, StoreWriter* store,
                                              const std::vector<std::string>* store_fields) {
  check_usable();
  close_stream();  // the file's documents follow the batches'
  auto started = Clock::now();
  core::MappedFile file(path);
  const char* data = reinterpret_cast<const char*>(file.data());
  const size_t size = static_cast<size_t>(std::min<uint64_t>(stop, file.size()));
  size_t begin = static_cast<size_t>(std::min<uint64_t>(first, size));
  if (begin == 0 && size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) {
    begin = 3;  // a byte order mark
  }

  // One contiguous range per worker, cut after a '\n'.
  const size_t workers = std::max<size_t>(
      1, std::min<size_t>(threads, (size - begin) / kMinRangeBytes));
  std::vector<size_t> cut{begin};
  for (size_t w = 1; w < workers; ++w) {
    size_t at = std::max(cut.back(), begin + (size - begin) * w / workers);
    const void* nl = at < size ? std::memchr(data + at, '\n', size - at) : nullptr;
    cut.push_back(nl ? static_cast<const char*>(nl) - data + 1 : size);
  }
  cut.push_back(size);
  // Each range's first line number.
  std::vector<uint64_t> first_line(workers + 1, 0);
  core::parallel_for(workers, threads, [&](size_t w) {
    first_line[w + 1] = std::count(data + cut[w], data + cut[w + 1], '\n');
  });
  first_line[0] = line;
  for (size_t w = 1; w <= workers; ++w) first_line[w] += first_line[w - 1];
  timings.read_parse += seconds_since(started);

  const size_t first_part = parts.size();
  const uint64_t base = n_docs;
  for (size_t w = 0; w < workers; ++w) {
    new_part(1, std::max<size_t>(options.memory_budget / workers, size_t{1} << 16), n_groups++);
  }
  std::vector<WorkerOutput> outs(workers);
  for (WorkerOutput& o : outs) o.keep_spans = store != nullptr;
  core::parallel_for(workers, threads, [&](size_t w) {
    read_range(file, cut[w], cut[w + 1], first_line[w], static_cast<unsigned>(w), fields,
               resolve, *parts[first_part + w], outs[w]);
  });

  // Each part a docid run, then repeated ids in collection order, the workers' own errors
  // among them: the earliest line wins (a worker stopped at its error, so its documents
  // precede it).
  JsonlResult result;
  uint64_t next = base;
  std::vector<uint64_t> part_base(workers);
  for (size_t w = 0; w < workers; ++w) {
    part_base[w] = next;
    add_run(first_part + w, next, parts[first_part + w]->n_docs());
    next += parts[first_part + w]->n_docs();
    timings.read_parse += outs[w].parse_seconds;
  }
  for (size_t w = 0; w < workers && result.error == JsonlResult::kNone; ++w) {
    const WorkerOutput& o = outs[w];
    const uint64_t pbase = part_base[w];
    for (size_t d = 0; d < o.hashes.size(); ++d) {
      const std::string id = ids.any_of(o.hashes[d], [](uint64_t) { return true; })
                                 ? id_of(pbase + d) : std::string();
      const int64_t earlier = id.empty() ? -1 : find(id, o.hashes[d]);
      if (earlier >= 0) {
        result.error = JsonlResult::kDuplicate;
        result.error_line = o.lines[d];
        result.duplicate_id = id;
        result.first_docid = static_cast<uint64_t>(earlier);
        break;
      }
      ids.insert(o.hashes[d], pbase + d);
    }
    if (result.error == JsonlResult::kNone && o.error_line != 0) {
      result.error = JsonlResult::kResolved;
      result.error_line = o.error_line;
      result.error_worker = static_cast<unsigned>(w);
    }
  }
  n_docs = next;
  result.n_docs = next - base;
  for (size_t w = 0; w < workers; ++w) {
    const BuildTimings& t = parts[first_part + w]->timings();
    timings.analyze += t.analyze;
    timings.invert += t.invert;
  }
  if (result.error != JsonlResult::kNone) {
    broken = true;
  } else {
    if (store != nullptr) {
      // The stored documents in docid order: the workers' ranges are in file order. The store
      // compresses on this thread (its blocks and dictionary depend on the whole sequence).
      const auto store_started = Clock::now();
      std::string stored;
      for (const WorkerOutput& o : outs) {
        for (const auto& [at, len] : o.spans) {
          stored.clear();
          stored_record(std::string_view(data + at, len), store_fields, stored);
          store->add(stored);
        }
      }
      timings.write += seconds_since(store_started);
    }
    bound_memory();
  }
  return result;
}

ParallelBuilder::ParallelBuilder(std::string directory, BuildOptions options)
    : m(std::make_unique<State>(std::move(directory), std::move(options))) {}
ParallelBuilder::~ParallelBuilder() = default;

void ParallelBuilder::add_batch(const std::string_view* ids, const std::string_view* texts,
                                size_t n) {
  m->add_batch(ids, texts, n);
}

JsonlResult ParallelBuilder::add_jsonl(const std::string& path, const JsonlFields& fields,
                                       const ResolveLine& resolve, uint64_t first, uint64_t stop,
                                       uint64_t line, StoreWriter* store,
                                       const std::vector<std::string>* store_fields) {
  try {
    return m->add_jsonl(path, fields, resolve, first, stop, line, store, store_fields);
  } catch (...) {
    m->broken = true;  // some parts have some of the file's documents
    throw;
  }
}

BuildStats ParallelBuilder::finish() {
  State& s = *m;
  s.check_usable();
  s.close_stream();
  s.finished = true;
  auto started = Clock::now();
  BuildStats stats;
  if (s.parts.size() == 1 && s.threads == 1) {
    // One part (its docids are the collection's) and one thread: finished in its directory, its
    // files moved up. (With more threads a lone part, of one batch or a small file, is merged
    // like several, so that the commit runs on every thread rather than on the part's one.)
    stats = s.parts[0]->finish();
    for (const FileInfo& f : stats.files) {
      fs::rename(fs::path(s.part_dir(0)) / f.name, fs::path(s.dir) / f.name);
    }
    s.timings.write += seconds_since(started);
  } else {
    IndexBuilder target(s.dir, s.options);
    std::vector<IndexBuilder*> parts;
    for (auto& p : s.parts) parts.push_back(p.get());
    std::vector<PartRun> runs;
    for (const Run& r : s.runs) runs.push_back({r.part, r.local_first, r.count});
    stats = target.merge_parts(parts, runs);
    const double total = seconds_since(started);
    s.timings.write += target.timings().write;
    s.timings.merge += total - target.timings().write;
  }
  const size_t n_parts = s.parts.size();
  s.parts.clear();
  for (size_t k = 0; k < n_parts; ++k) fs::remove_all(s.part_dir(k));
  return stats;
}

std::vector<FinishedPart> ParallelBuilder::finish_parts() {
  State& s = *m;
  s.check_usable();
  s.close_stream();
  s.finished = true;
  auto started = Clock::now();
  // Each group's parts and runs (its parts numbered from 0): a group of one part is finished
  // where it is, a batch stream's parts are merged into a directory of their own.
  const size_t n_groups = s.n_groups;
  std::vector<std::vector<size_t>> members(n_groups);
  std::vector<size_t> member_of(s.parts.size());
  for (size_t k = 0; k < s.parts.size(); ++k) {
    member_of[k] = members[s.part_group[k]].size();
    members[s.part_group[k]].push_back(k);
  }
  std::vector<std::vector<PartRun>> group_runs(n_groups);
  for (const Run& r : s.runs) {
    group_runs[s.part_group[r.part]].push_back({member_of[r.part], r.local_first, r.count});
  }
  std::vector<FinishedPart> out(n_groups);
  core::parallel_for(n_groups, s.threads, [&](size_t g) {
    if (members[g].size() == 1) {
      out[g] = {s.part_dir(members[g][0]), s.parts[members[g][0]]->finish()};
      return;
    }
    out[g].directory = s.part_dir(s.parts.size() + g);
    fs::create_directories(out[g].directory);
    BuildOptions o = s.options;
    o.threads = n_groups > 1 ? 1 : s.threads;
    IndexBuilder target(out[g].directory, o);
    std::vector<IndexBuilder*> parts;
    for (size_t k : members[g]) parts.push_back(s.parts[k].get());
    out[g].stats = target.merge_parts(parts, group_runs[g]);
    for (size_t k : members[g]) fs::remove_all(s.part_dir(k));
  });
  s.timings.write += seconds_since(started);
  return out;
}

uint64_t ParallelBuilder::n_docs() const { return m->n_docs; }
size_t ParallelBuilder::n_parts() const { return m->parts.size(); }
size_t ParallelBuilder::memory_used() const {
  m->drain();
  size_t used = m->ids.memory();
  for (const auto& p : m->parts) used += p->memory_used();
  return used;
}
ParallelTimings ParallelBuilder::timings() const {
  m->drain();
  return m->stream_timings();
}

}  // namespace mirkit::index
