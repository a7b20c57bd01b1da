#include "index/builder.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <exception>
#include <mutex>
#include <thread>

#include "core/errors.hpp"
#include "core/files.hpp"
#include "codecs/elias.hpp"
#include "codecs/elias_fano.hpp"
#include "core/parallel.hpp"
#include "index/format.hpp"
#include "index/ngram_counts.hpp"
#include "index/reader.hpp"
#include "index/run_merge.hpp"
#include "index/string_map.hpp"

namespace mirkit::index {

namespace fs = std::filesystem;
using core::FileWriter;

DuplicateIdError::DuplicateIdError(size_t index, uint64_t first, const std::string& id)
    : std::invalid_argument(core::message("duplicate document id '", id,
                                          "' (first seen as document #", first, ")")),
      batch_index(index),
      first_docid(first) {}

namespace {

constexpr uint32_t kStopTerm = UINT32_MAX - 1;  // token cache value: the token is dropped

// Postings of one term in the current run: varint (docid gap, tf, tf position gaps) per
// posting; the first gap is taken from 0, so it is the absolute docid.
struct TermBuffer {
  std::vector<uint8_t> bytes;
  uint32_t last_docid = 0;
  uint32_t df = 0;
};

// What one worker produces for its slice of a batch.
struct Worker {
  StringMap cache;                      // raw token -> run term id or kStopTerm
  std::vector<uint32_t> mark, slot;     // per run term id: last document seen, pair index
  uint32_t stamp = 0;
  std::string term;                     // scratch for to_term
  std::vector<uint32_t> token_terms, token_positions, fill;
  std::vector<uint32_t> doc_pairs_end, doc_lengths;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;  // (term, tf) per document, then the next
  std::vector<uint32_t> positions;                   // grouped by pair, ascending
  NgramCounter lm;  // words and bigrams before stopwords and stemming (spelling correction)

  void reset_output() {
    doc_pairs_end.clear();
    doc_lengths.clear();
    pairs.clear();
    positions.clear();
  }
  void reset_terms() {  // run term ids are about to be reused
    cache.clear();
    std::vector<uint32_t>().swap(mark);
    std::vector<uint32_t>().swap(slot);
    stamp = 0;
  }
};

// The current run, from memory (spilled runs are read by FileRunSource).
class MemoryRunSource : public RunSource {
 public:
  // order: the run's term ids sorted by term; those of df 0 (entered the dictionary in a batch
  // that failed) are left out.
  MemoryRunSource(const StringMap& dict, const std::vector<TermBuffer>& buffers,
                  std::vector<uint32_t> order)
      : m_dict(dict), m_buffers(buffers), m_order(std::move(order)) {
    m_order.erase(std::remove_if(m_order.begin(), m_order.end(),
                                 [&](uint32_t t) { return m_buffers[t].df == 0; }),
                  m_order.end());
  }
  size_t size() const override { return m_order.size(); }
  RunEntry entry(size_t i) const override {
    const uint32_t t = m_order[i];
    const TermBuffer& b = m_buffers[t];
    return RunEntry{m_dict.key(t), b.df, b.bytes.data(), b.bytes.size()};
  }

 private:
  const StringMap& m_dict;
  const std::vector<TermBuffer>& m_buffers;
  std::vector<uint32_t> m_order;
};

// A set of 64-bit id hashes (open addressing, load <= 1/2); 0 marks an empty slot.
class IdHashSet {
 public:
  IdHashSet() : m_slots(1 << 16, 0) {}
  bool contains(uint64_t h) const {
    h = h ? h : 1;
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      if (m_slots[i] == h) return true;
      if (m_slots[i] == 0) return false;
    }
  }
  void insert(uint64_t h) {
    h = h ? h : 1;
    size_t i = h & mask();
    while (m_slots[i] != 0) {
      if (m_slots[i] == h) return;
      i = (i + 1) & mask();
    }
    m_slots[i] = h;
    if (2 * ++m_size > m_slots.size()) grow();
  }
  size_t memory() const { return m_slots.capacity() * sizeof(uint64_t); }

 private:
  size_t mask() const { return m_slots.size() - 1; }
  void grow() {
    std::vector<uint64_t> old(m_slots.size() * 2, 0);
    old.swap(m_slots);
    m_size = 0;
    for (uint64_t h : old) {
      if (h) insert(h);
    }
  }
  std::vector<uint64_t> m_slots;
  size_t m_size = 0;
};

}  // namespace

struct IndexBuilder::State {
  std::string dir;
  BuildOptions options;
  analysis::Analyzer analyzer;
  const codecs::Codec* docid_codec;
  const codecs::Codec* freq_codec;
  unsigned threads;

  // current run
  StringMap dict;
  std::vector<TermBuffer> buffers;
  size_t buffer_bytes = 0;
  std::mutex dict_mutex;
  std::vector<Worker> workers;
  std::vector<std::string> run_files;

  // per document
  std::vector<uint32_t> doc_lengths;
  std::vector<uint32_t> doc_terms;  // distinct terms (only for document vectors)
  std::vector<uint64_t> id_offsets{0};
  IdHashSet id_hashes;
  std::unique_ptr<FileWriter> ids_file;

  uint64_t total_tokens = 0;
  uint32_t max_doc_length = 0;
  size_t peak_memory = 0;
  bool finished = false;
  BuildTimings timings;
  State(std::string directory, BuildOptions opts)
      : dir(std::move(directory)), options(std::move(opts)), analyzer(options.analyzer) {
    docid_codec = codecs::find_codec(options.docid_codec);
    freq_codec = codecs::find_codec(options.freq_codec);
    if (!docid_codec) core::fail_value("unknown docid codec '", options.docid_codec, "'");
    if (!freq_codec) core::fail_value("unknown freq codec '", options.freq_codec, "'");
    check_bm25(options.bm25.k1, options.bm25.b);
    threads = core::resolve_threads(options.threads);
    workers.resize(threads);
    ids_file = std::make_unique<FileWriter>(path(kDocIdsFile));
  }

  std::string path(const char* name) const { return (fs::path(dir) / name).string(); }

  size_t memory() const {
    size_t m = buffer_bytes + dict.memory() + buffers.capacity() * sizeof(TermBuffer);
    for (const Worker& w : workers) {
      m += w.cache.memory() + (w.mark.capacity() + w.slot.capacity()) * sizeof(uint32_t);
    }
    return m;
  }

  uint32_t term_of_token(Worker& w, std::string_view token) {
    uint32_t cached = w.cache.find(token);
    if (cached != StringMap::kNone) return w.cache.value(cached);
    uint32_t term = kStopTerm;
    if (analyzer.to_term(token, w.term)) {
      std::lock_guard<std::mutex> lock(dict_mutex);
      bool inserted;
      term = dict.insert(w.term, 0, inserted);
    }
    bool inserted;
    w.cache.insert(token, term, inserted);
    return term;
  }

  // Phase 1 (parallel): analyze documents [lo, hi) into w's (term, tf) pairs and positions.
  void analyze_slice(Worker& w, const std::string_view* texts, size_t lo, size_t hi) {
    const bool want_positions = options.positions;
    w.reset_output();
    for (size_t i = lo; i < hi; ++i) {
      w.token_terms.clear();
      w.token_positions.clear();
      w.lm.start_document();
      analyzer.tokenize(texts[i], [&](std::string_view token, uint32_t position) {
        if (options.word_counts) w.lm.add(token);
        uint32_t term = term_of_token(w, token);
        if (term == kStopTerm) return;
        w.token_terms.push_back(term);
        if (want_positions) w.token_positions.push_back(position);
      });
      if (++w.stamp == 0) {  // stamps wrapped: forget every mark
        std::fill(w.mark.begin(), w.mark.end(), 0);
        w.stamp = 1;
      }
      const size_t first_pair = w.pairs.size();
      for (uint32_t t : w.token_terms) {
        if (t >= w.mark.size()) {
          w.mark.resize(std::max<size_t>(t + 1, 2 * w.mark.size()), 0);
          w.slot.resize(w.mark.size());
        }
        if (w.mark[t] != w.stamp) {
          w.mark[t] = w.stamp;
          w.slot[t] = static_cast<uint32_t>(w.pairs.size());
          w.pairs.emplace_back(t, 1);
        } else {
          ++w.pairs[w.slot[t]].second;
        }
      }
      if (want_positions) {
        // Counting sort of the token positions by pair.
        size_t n_pairs = w.pairs.size() - first_pair;
        w.fill.resize(n_pairs);
        uint32_t at = static_cast<uint32_t>(w.positions.size());
        for (size_t k = 0; k < n_pairs; ++k) {
          w.fill[k] = at;
          at += w.pairs[first_pair + k].second;
        }
        w.positions.resize(at);
        for (size_t k = 0; k < w.token_terms.size(); ++k) {
          uint32_t pair = w.slot[w.token_terms[k]] - static_cast<uint32_t>(first_pair);
          w.positions[w.fill[pair]++] = w.token_positions[k];
        }
      }
      w.doc_pairs_end.push_back(static_cast<uint32_t>(w.pairs.size()));
      w.doc_lengths.push_back(static_cast<uint32_t>(w.token_terms.size()));
    }
  }

  // Phase 2 (serial): append w's documents, numbered from first_docid, to the term buffers.
  void append_postings(const Worker& w, uint32_t first_docid) {
    if (buffers.size() < dict.size()) buffers.resize(dict.size());
    uint8_t tmp[5 * 2];
    size_t pair = 0, pos = 0;
    for (size_t d = 0; d < w.doc_pairs_end.size(); ++d) {
      const uint32_t docid = first_docid + static_cast<uint32_t>(d);
      for (; pair < w.doc_pairs_end[d]; ++pair) {
        auto [t, tf] = w.pairs[pair];
        TermBuffer& b = buffers[t];
        const size_t before = b.bytes.capacity();
        uint8_t* e = core::put_varint(tmp, docid - b.last_docid);
        e = core::put_varint(e, tf);
        b.bytes.insert(b.bytes.end(), tmp, e);
        if (options.positions) {
          uint32_t prev = 0;
          for (uint32_t k = 0; k < tf; ++k, ++pos) {
            core::append_varint(b.bytes, w.positions[pos] - prev);
            prev = w.positions[pos];
          }
        }
        b.last_docid = docid;
        ++b.df;
        buffer_bytes += b.bytes.capacity() - before;
      }
      doc_lengths.push_back(w.doc_lengths[d]);
      if (options.vectors) doc_terms.push_back(w.doc_pairs_end[d] - (d ? w.doc_pairs_end[d - 1] : 0));
      total_tokens += w.doc_lengths[d];
      max_doc_length = std::max(max_doc_length, w.doc_lengths[d]);
    }
  }

  // Run term ids sorted by term; resizes buffers to cover terms of failed batches (df 0).
  std::vector<uint32_t> sorted_terms() {
    buffers.resize(dict.size());
    std::vector<uint32_t> order(dict.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](uint32_t a, uint32_t b) { return dict.key(a) < dict.key(b); });
    return order;
  }

  void spill() {
    fs::create_directories(fs::path(dir) / "runs");
    std::string name = (fs::path(dir) / "runs" / core::message("run-", run_files.size())).string();
    {
      FileWriter out(name);
      for (uint32_t t : sorted_terms()) {
        const TermBuffer& b = buffers[t];
        if (b.df == 0) continue;  // entered the dictionary in a batch that failed
        write_run_entry(out, RunEntry{dict.key(t), b.df, b.bytes.data(), b.bytes.size()});
      }
      out.close();
    }
    run_files.push_back(name);
    dict.clear();
    std::vector<TermBuffer>().swap(buffers);
    buffer_bytes = 0;
    for (Worker& w : workers) w.reset_terms();
  }

  void check_ids(const std::string_view* ids, size_t n) {
    StringMap batch;
    for (size_t i = 0; i < n; ++i) {
      bool inserted;
      uint32_t first = batch.insert(ids[i], static_cast<uint32_t>(i), inserted);
      if (!inserted) throw DuplicateIdError(i, doc_lengths.size() + first, std::string(ids[i]));
      if (id_hashes.contains(StringMap::hash(ids[i]))) {
        int64_t earlier = find_written_id(ids[i]);
        if (earlier >= 0) throw DuplicateIdError(i, earlier, std::string(ids[i]));
      }
    }
  }

  // Linear scan of the ids written so far; only runs when a 64-bit id hash repeats.
  int64_t find_written_id(std::string_view id) {
    ids_file->flush();
    core::MappedFile written(path(kDocIdsFile));
    for (size_t d = 0; d + 1 < id_offsets.size(); ++d) {
      std::string_view s(reinterpret_cast<const char*>(written.data()) + id_offsets[d],
                         id_offsets[d + 1] - id_offsets[d]);
      if (s == id) return static_cast<int64_t>(d);
    }
    return -1;
  }

  void add_batch(const std::string_view* ids, const std::string_view* texts, size_t n) {
    if (finished) throw std::logic_error("IndexBuilder: add_batch after finish");
    if (n == 0) return;
    if (doc_lengths.size() + n > kMaxDocs) core::fail_value("too many documents for one index");
    if (options.check_ids) check_ids(ids, n);
    // Slices in proportion to text bytes, so threads get similar work.
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += texts[i].size() + 16;
    std::vector<size_t> bounds{0};
    size_t acc = 0;
    for (size_t i = 0, s = 1; i < n && s < threads; ++i) {
      acc += texts[i].size() + 16;
      if (acc * threads >= total * s) {
        bounds.push_back(i + 1);
        ++s;
      }
    }
    bounds.push_back(n);
    const size_t slices = bounds.size() - 1;
    const auto t0 = std::chrono::steady_clock::now();
    core::parallel_for(slices, threads, [&](size_t s) {
      analyze_slice(workers[s], texts, bounds[s], bounds[s + 1]);
    });
    const auto t1 = std::chrono::steady_clock::now();
    for (size_t s = 0; s < slices; ++s) {
      append_postings(workers[s], static_cast<uint32_t>(doc_lengths.size()));
    }
    for (size_t i = 0; i < n; ++i) {
      ids_file->write(ids[i].data(), ids[i].size());
      id_offsets.push_back(ids_file->bytes());
      if (options.check_ids) id_hashes.insert(StringMap::hash(ids[i]));
    }
    size_t mem = memory();
    peak_memory = std::max(peak_memory, mem);
    if (mem > options.memory_budget) spill();
    const auto t2 = std::chrono::steady_clock::now();
    timings.analyze += std::chrono::duration<double>(t1 - t0).count();
    timings.invert += std::chrono::duration<double>(t2 - t1).count();
  }

  // The sorted runs of this builder: the spilled ones, then the one in memory.
  void run_sources(std::vector<std::unique_ptr<RunSource>>& sources) {
    for (const std::string& f : run_files) sources.push_back(std::make_unique<FileRunSource>(f));
    sources.push_back(std::make_unique<MemoryRunSource>(dict, buffers, sorted_terms()));
  }

  BuildStats finish();
  // The word and bigram counts of `states`' workers, merged and written (ngram_counts.hpp).
  void write_word_counts(const std::vector<State*>& states, BuildStats& stats) {
    if (!options.word_counts) return;
    NgramCounter all;
    for (State* st : states) {
      for (Worker& w : st->workers) {
        w.lm.flush();
        if (all.n_words() == 0) std::swap(all, w.lm); else all.merge_from(w.lm);
        w.lm.clear();
      }
    }
    for (FileInfo& f : all.write(dir)) stats.files.push_back(std::move(f));
  }
  // `held`: bytes of the runs kept in memory while they merge (the builder's, or the parts').
  BuildStats write_index(std::vector<std::unique_ptr<RunSource>> sources,
                         const std::vector<const DocidMap*>& maps, size_t held);
  void write_vectors(uint64_t n_terms, uint64_t n_blocks, BuildStats& stats);
};

BuildStats IndexBuilder::State::finish() {
  if (finished) throw std::logic_error("IndexBuilder: finish called twice");
  finished = true;
  std::vector<std::unique_ptr<RunSource>> sources;
  run_sources(sources);
  BuildStats stats = write_index(std::move(sources), {}, memory());
  if (!run_files.empty()) fs::remove_all(fs::path(dir) / "runs");
  write_word_counts({this}, stats);
  return stats;
}

// Writes the documents' files and the postings merged from `sources` (see merge_runs).
BuildStats IndexBuilder::State::write_index(std::vector<std::unique_ptr<RunSource>> sources,
                                            const std::vector<const DocidMap*>& maps,
                                            size_t held) {
  const auto started = std::chrono::steady_clock::now();
  BuildStats stats;
  stats.runs = static_cast<uint32_t>(run_files.size());

  // The documents' files are written (and fsynced) on a thread of their own (mostly waiting
  // for the disk) beside the postings' merge, which runs on this one and the builder's threads.
  BlockWriter out(dir, *docid_codec, *freq_codec, options.positions, options.bm25,
                  doc_lengths.data(), doc_lengths.size(), total_tokens);
  std::vector<FileInfo> doc_files, postings_files;
  std::exception_ptr doc_error;
  auto write_doc_files = [&] {
    try {
      ids_file->close();
      FileWriter offsets(path(kDocIdOffsetsFile));
      offsets.write_array(id_offsets.data(), id_offsets.size());
      offsets.close();
      doc_files.push_back({kDocIdOffsetsFile, offsets.bytes(), offsets.crc()});
      doc_files.push_back({kDocIdsFile, ids_file->bytes(), ids_file->crc()});
      FileWriter lengths(path(kDocLengthsFile));
      lengths.write_array(doc_lengths.data(), doc_lengths.size());
      lengths.close();
      doc_files.push_back({kDocLengthsFile, lengths.bytes(), lengths.crc()});
    } catch (...) {
      doc_error = std::current_exception();
    }
  };
  std::thread doc_thread;
  if (threads > 1) {
    doc_thread = std::thread(write_doc_files);
  } else {
    write_doc_files();
  }
  try {
    size_t ranges = 0;
    stats.term_ranges = merge_runs(sources, options.positions, out, maps, threads,
                                   options.memory_budget, &ranges);
    stats.range_memory = ranges;
    peak_memory = std::max(peak_memory, held + ranges);
    postings_files = out.close(threads);
  } catch (...) {
    if (doc_thread.joinable()) doc_thread.join();
    throw;
  }
  if (doc_thread.joinable()) doc_thread.join();
  if (doc_error) std::rethrow_exception(doc_error);
  for (auto* files : {&doc_files, &postings_files}) {
    for (FileInfo& f : *files) stats.files.push_back(std::move(f));
  }
  sources.clear();
  dict.clear();  // the last run's memory goes back before the vectors take theirs
  std::vector<TermBuffer>().swap(buffers);
  buffer_bytes = 0;
  if (options.vectors) write_vectors(out.n_terms(), out.n_blocks(), stats);

  stats.n_docs = doc_lengths.size();
  stats.n_terms = out.n_terms();
  stats.n_postings = out.n_postings();
  stats.position_bytes = out.position_bytes();
  stats.total_tokens = total_tokens;
  stats.max_doc_length = max_doc_length;
  stats.peak_memory = peak_memory;
  timings.write +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return stats;
}

void IndexBuilder::State::write_vectors(uint64_t n_terms, uint64_t n_blocks, BuildStats& stats) {
  const IndexLayout layout{doc_lengths.size(), n_terms, n_blocks, options.docid_codec,
                           options.freq_codec, options.positions, false};
  for (FileInfo& f : write_doc_vectors(dir, layout, doc_terms.data(), options.memory_budget,
                                       &peak_memory)) {
    stats.files.push_back(std::move(f));
  }
}

// Document vectors: the postings just written, read back and transposed. Docids are taken in
// ranges whose (term, tf) pairs fit the memory budget (doc_terms gives each document's count,
// so the output slots are known before the pass); each range visits every term through its
// skip list and decodes only the blocks that overlap the range. Terms are visited in id order,
// so each document's term ids come out ascending. The output depends only on the postings, so
// spilled and threaded builds, and merges, stay byte-identical to a build.
std::vector<FileInfo> write_doc_vectors(const std::string& directory, const IndexLayout& layout,
                                        const uint32_t* doc_terms, size_t memory_budget,
                                        size_t* peak) {
  const IndexReader reader(directory, layout);
  const uint64_t n_terms = layout.n_terms;
  const uint32_t n_docs = static_cast<uint32_t>(layout.n_docs);
  std::vector<uint32_t> counted;
  alignas(64) uint32_t docs[kBlockSize], freqs[kBlockSize];
  if (doc_terms == nullptr) {  // each document's distinct terms, from the postings
    counted.assign(n_docs, 0);
    for (uint32_t t = 0; t < n_terms; ++t) {
      for (uint64_t b = reader.term_blocks[t]; b < reader.term_blocks[t + 1]; ++b) {
        const uint32_t n = reader.decode_docids(t, b, docs);
        for (uint32_t i = 0; i < n; ++i) ++counted[docs[i]];
      }
    }
    doc_terms = counted.data();
  }
  const auto path = [&](const char* name) { return (fs::path(directory) / name).string(); };
  const codecs::Codec& ids_codec = codecs::elias_fano::kCodec;
  const codecs::Codec& tfs_codec = codecs::elias::kGammaCodec;
  FileWriter records(path(kDocVectorsFile));
  FileWriter ends(path(kDocVectorsEndFile));
  constexpr size_t kPairBytes = 2 * sizeof(uint32_t), kDocBytes = 2 * sizeof(uint64_t);
  std::vector<uint32_t> terms, tfs;  // the range's pairs, document by document
  std::vector<uint64_t> start, fill;
  std::vector<uint8_t> scratch;
  size_t peak_memory = 0;
  for (uint32_t lo = 0, hi = 0; lo < n_docs; lo = hi) {
    // The range [lo, hi): at least one document, else as many as the budget holds.
    uint64_t pairs = 0;
    do {
      pairs += doc_terms[hi++];
    } while (hi < n_docs &&
             (pairs + doc_terms[hi]) * kPairBytes + (hi + 1 - lo) * kDocBytes <= memory_budget);
    start.assign(1, 0);
    for (uint32_t d = lo; d < hi; ++d) start.push_back(start.back() + doc_terms[d]);
    fill.assign(start.begin(), start.end() - 1);
    terms.resize(pairs);
    tfs.resize(pairs);
    peak_memory = std::max<size_t>(peak_memory, pairs * kPairBytes + (hi - lo) * kDocBytes);
    for (uint32_t t = 0; t < n_terms; ++t) {
      const uint32_t* last = reader.block_last_docid.data;
      const uint64_t end = reader.term_blocks[t + 1];
      uint64_t b = std::lower_bound(last + reader.term_blocks[t], last + end, lo) - last;
      for (; b < end; ++b) {
        const uint32_t n = reader.decode_docids(t, b, docs);
        if (docs[0] >= hi) break;
        reader.decode_freqs(b, n, freqs);
        for (uint32_t i = 0; i < n; ++i) {
          if (docs[i] < lo || docs[i] >= hi) continue;
          const uint64_t k = fill[docs[i] - lo]++;
          terms[k] = t;
          tfs[k] = freqs[i];
        }
        if (last[b] >= hi) break;
      }
    }
    for (uint32_t d = lo; d < hi; ++d) {
      const uint64_t first = start[d - lo];
      const size_t n = doc_terms[d];
      if (fill[d - lo] != first + n) {
        throw std::runtime_error(core::message("document vectors: document ", d, " has ",
                                               fill[d - lo] - first, " postings, expected ", n));
      }
      scratch.resize(5 + ids_codec.max_encoded_bytes(terms.data() + first, n) +
                     tfs_codec.max_encoded_bytes(tfs.data() + first, n));
      uint8_t* e = core::put_varint(scratch.data(), static_cast<uint32_t>(n));
      e += ids_codec.encode(terms.data() + first, n, e);
      e += tfs_codec.encode(tfs.data() + first, n, e);
      records.write(scratch.data(), e - scratch.data());
      ends.put<uint64_t>(records.bytes());
    }
  }
  std::vector<FileInfo> files;
  for (FileWriter* f : {&records, &ends}) {
    f->close();
    files.push_back({fs::path(f->path()).filename().string(), f->bytes(), f->crc()});
  }
  if (peak) *peak = std::max(*peak, peak_memory);
  return files;
}

IndexBuilder::IndexBuilder(std::string directory, BuildOptions options)
    : m(std::make_unique<State>(std::move(directory), std::move(options))) {}
IndexBuilder::~IndexBuilder() = default;

void IndexBuilder::add_batch(const std::string_view* ids, const std::string_view* texts,
                             size_t n) {
  m->add_batch(ids, texts, n);
}
BuildStats IndexBuilder::finish() { return m->finish(); }
uint64_t IndexBuilder::n_docs() const { return m->doc_lengths.size(); }
size_t IndexBuilder::memory_used() const { return m->memory(); }
const BuildTimings& IndexBuilder::timings() const { return m->timings; }

void IndexBuilder::spill() {
  if (m->finished) throw std::logic_error("IndexBuilder: spill after finish");
  if (m->dict.size() != 0) m->spill();
}

std::string IndexBuilder::doc_id(uint64_t docid) const {
  if (docid + 1 >= m->id_offsets.size()) throw std::out_of_range("IndexBuilder::doc_id");
  m->ids_file->flush();
  core::MappedFile written(m->path(kDocIdsFile));
  return std::string(reinterpret_cast<const char*>(written.data()) + m->id_offsets[docid],
                     m->id_offsets[docid + 1] - m->id_offsets[docid]);
}

// The parts' documents, run by run, become this builder's; their runs, mapped to the merged
// docids, are merged into its files. The output is that of one builder fed every document in
// the same order (run_merge.hpp): each term's postings come out in merged docid order.
BuildStats IndexBuilder::merge_parts(const std::vector<IndexBuilder*>& parts,
                                     const std::vector<PartRun>& part_runs) {
  State& s = *m;
  if (s.finished || s.doc_lengths.size() != 0) {
    throw std::logic_error("IndexBuilder::merge_parts: the target must be new");
  }
  s.finished = true;
  for (IndexBuilder* part : parts) {
    if (part->m->finished) throw std::logic_error("IndexBuilder::merge_parts: a part is finished");
  }
  std::vector<PartRun> runs = part_runs;
  if (runs.empty()) {
    for (size_t k = 0; k < parts.size(); ++k) runs.push_back({k, 0, parts[k]->n_docs()});
  }
  // Each part's runs: its spilled ones opened, its last one sorted, the parts on the threads.
  std::vector<std::vector<std::unique_ptr<RunSource>>> part_sources(parts.size());
  core::parallel_for(parts.size(), s.threads,
                     [&](size_t k) { parts[k]->m->run_sources(part_sources[k]); });
  std::vector<std::unique_ptr<core::MappedFile>> ids(parts.size());
  size_t held = 0;  // the parts' runs in memory
  for (size_t k = 0; k < parts.size(); ++k) {
    State& p = *parts[k]->m;
    p.finished = true;
    p.ids_file->close();
    if (p.ids_file->bytes()) ids[k] = std::make_unique<core::MappedFile>(p.path(kDocIdsFile));
    s.total_tokens += p.total_tokens;
    s.max_doc_length = std::max(s.max_doc_length, p.max_doc_length);
    s.peak_memory += p.peak_memory;  // the parts held their memory at once
    held += p.memory();
  }
  // Document files, run by run: lengths and distinct-term counts appended, ids copied, offsets
  // shifted; each part's docid map gets a segment a run.
  std::vector<DocidMap> maps(parts.size());
  std::vector<uint64_t> next(parts.size(), 0);  // each part's first document not yet taken
  for (const PartRun& r : runs) {
    if (r.part >= parts.size() || r.local_first != next[r.part] ||
        r.count > parts[r.part]->n_docs() - r.local_first) {
      throw std::logic_error("IndexBuilder::merge_parts: runs must take each part's documents "
                             "in order");
    }
    if (r.count == 0) continue;
    State& p = *parts[r.part]->m;
    const uint64_t base = s.doc_lengths.size();
    if (base + r.count > kMaxDocs) core::fail_value("too many documents for one index");
    maps[r.part].segments.push_back(
        {static_cast<uint32_t>(r.local_first), static_cast<uint32_t>(base)});
    const size_t lo = r.local_first, hi = r.local_first + r.count;
    s.doc_lengths.insert(s.doc_lengths.end(), p.doc_lengths.begin() + lo,
                         p.doc_lengths.begin() + hi);
    if (!p.doc_terms.empty()) {
      s.doc_terms.insert(s.doc_terms.end(), p.doc_terms.begin() + lo, p.doc_terms.begin() + hi);
    }
    const uint64_t from = p.id_offsets[lo], to = p.id_offsets[hi];
    if (to > from) s.ids_file->write(ids[r.part]->data() + from, to - from);
    const uint64_t shift = s.id_offsets.back() - from;
    for (size_t d = lo + 1; d <= hi; ++d) s.id_offsets.push_back(shift + p.id_offsets[d]);
    next[r.part] = hi;
  }
  for (size_t k = 0; k < parts.size(); ++k) {
    if (next[k] != parts[k]->n_docs()) {
      throw std::logic_error("IndexBuilder::merge_parts: runs must cover every document");
    }
  }
  ids.clear();
  std::vector<std::unique_ptr<RunSource>> sources;
  std::vector<const DocidMap*> source_maps;
  size_t n_runs = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    n_runs += parts[k]->m->run_files.size();
    for (auto& source : part_sources[k]) {
      sources.push_back(std::move(source));
      source_maps.push_back(&maps[k]);
    }
  }
  BuildStats stats = s.write_index(std::move(sources), source_maps, held);
  stats.runs = static_cast<uint32_t>(n_runs);
  std::vector<State*> states;
  for (IndexBuilder* part : parts) states.push_back(part->m.get());
  s.write_word_counts(states, stats);
  for (IndexBuilder* part : parts) {
    State& p = *part->m;
    if (!p.run_files.empty()) fs::remove_all(fs::path(p.dir) / "runs");
    p.dict.clear();
    std::vector<TermBuffer>().swap(p.buffers);
  }
  return stats;
}

}  // namespace mirkit::index
