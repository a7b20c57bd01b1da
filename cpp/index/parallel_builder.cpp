#include "index/parallel_builder.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
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

}  // namespace

struct ParallelBuilder::State {
  std::string dir;
  BuildOptions options;
  unsigned threads;
  std::vector<std::unique_ptr<IndexBuilder>> parts;
  std::vector<uint64_t> part_base;  // first global docid of each part
  bool tail_open = false;           // parts.back() takes add_batch's documents
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

  IndexBuilder& new_part(unsigned part_threads, size_t budget) {
    fs::create_directories(part_dir(parts.size()));
    BuildOptions o = options;
    o.threads = part_threads;
    o.memory_budget = budget;
    o.check_ids = false;  // this builder's id table checks every part
    part_base.push_back(n_docs);
    parts.push_back(std::make_unique<IndexBuilder>(part_dir(parts.size()), o));
    return *parts.back();
  }

  // The part holding global docid d.
  size_t part_of(uint64_t d) const {
    return std::upper_bound(part_base.begin(), part_base.end(), d) - part_base.begin() - 1;
  }
  std::string id_of(uint64_t d) const {
    const size_t k = part_of(d);
    return parts[k]->doc_id(d - part_base[k]);
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
  // spill it.
  void bound_memory() {
    size_t used = ids.memory();
    for (const auto& p : parts) used += p->memory_used();
    if (used <= options.memory_budget) return;
    for (size_t k = 0; k + (tail_open ? 1 : 0) < parts.size(); ++k) parts[k]->spill();
  }

  void add_batch(const std::string_view* ids_, const std::string_view* texts, size_t n) {
    check_usable();
    if (n == 0) return;
    if (n_docs + n > kMaxDocs) core::fail_value("too many documents for one index");
    // Repeats, in batch order: within the batch, or of an earlier document.
    std::vector<uint64_t> hashes(n);
    StringMap batch;
    for (size_t i = 0; i < n; ++i) {
      bool inserted;
      uint32_t first = batch.insert(ids_[i], static_cast<uint32_t>(i), inserted);
      if (!inserted) throw DuplicateIdError(i, n_docs + first, std::string(ids_[i]));
      hashes[i] = StringMap::hash(ids_[i]);
      int64_t earlier = find(ids_[i], hashes[i]);
      if (earlier >= 0) throw DuplicateIdError(i, earlier, std::string(ids_[i]));
    }
    if (!tail_open) {
      new_part(threads, options.memory_budget);
      tail_open = true;
    }
    parts.back()->add_batch(ids_, texts, n);
    for (size_t i = 0; i < n; ++i) ids.insert(hashes[i], n_docs + i);
    n_docs += n;
    bound_memory();
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

  tail_open = false;
  const size_t first_part = parts.size();
  const uint64_t base = n_docs;
  for (size_t w = 0; w < workers; ++w) {
    new_part(1, std::max<size_t>(options.memory_budget / workers, size_t{1} << 16));
  }
  std::vector<WorkerOutput> outs(workers);
  for (WorkerOutput& o : outs) o.keep_spans = store != nullptr;
  core::parallel_for(workers, threads, [&](size_t w) {
    read_range(file, cut[w], cut[w + 1], first_line[w], static_cast<unsigned>(w), fields,
               resolve, *parts[first_part + w], outs[w]);
  });

  // Part bases, then repeated ids in collection order, the workers' own errors among them:
  // the earliest line wins (a worker stopped at its error, so its documents precede it).
  JsonlResult result;
  uint64_t next = base;
  for (size_t w = 0; w < workers; ++w) {
    part_base[first_part + w] = next;
    next += parts[first_part + w]->n_docs();
    timings.read_parse += outs[w].parse_seconds;
  }
  for (size_t w = 0; w < workers && result.error == JsonlResult::kNone; ++w) {
    const WorkerOutput& o = outs[w];
    const uint64_t pbase = part_base[first_part + w];
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
  if (n == 0) return;
  // The tail part's own timings grow with each batch: count the difference.
  const BuildTimings before = m->tail_open ? m->parts.back()->timings() : BuildTimings{};
  m->add_batch(ids, texts, n);
  const BuildTimings& after = m->parts.back()->timings();
  m->timings.analyze += after.analyze - before.analyze;
  m->timings.invert += after.invert - before.invert;
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
  s.finished = true;
  auto started = Clock::now();
  BuildStats stats;
  if (s.parts.size() == 1) {
    // One part: finished in its directory, its files moved up.
    stats = s.parts[0]->finish();
    for (const FileInfo& f : stats.files) {
      fs::rename(fs::path(s.part_dir(0)) / f.name, fs::path(s.dir) / f.name);
    }
    s.timings.write += seconds_since(started);
  } else {
    IndexBuilder target(s.dir, s.options);
    std::vector<IndexBuilder*> parts;
    for (auto& p : s.parts) parts.push_back(p.get());
    stats = target.merge_parts(parts);
    const double total = seconds_since(started);
    s.timings.write += target.timings().write;
    s.timings.merge += total - target.timings().write;
  }
  s.parts.clear();
  for (size_t k = 0; k < s.part_base.size(); ++k) fs::remove_all(s.part_dir(k));
  return stats;
}

std::vector<BuildStats> ParallelBuilder::finish_parts() {
  State& s = *m;
  s.check_usable();
  s.finished = true;
  auto started = Clock::now();
  std::vector<BuildStats> stats(s.parts.size());
  core::parallel_for(s.parts.size(), s.threads, [&](size_t k) { stats[k] = s.parts[k]->finish(); });
  s.timings.write += seconds_since(started);
  return stats;
}

std::string ParallelBuilder::part_directory(size_t k) const { return m->part_dir(k); }
uint64_t ParallelBuilder::n_docs() const { return m->n_docs; }
size_t ParallelBuilder::n_parts() const { return m->parts.size(); }
size_t ParallelBuilder::memory_used() const {
  size_t used = m->ids.memory();
  for (const auto& p : m->parts) used += p->memory_used();
  return used;
}
ParallelTimings ParallelBuilder::timings() const { return m->timings; }

}  // namespace mirkit::index
