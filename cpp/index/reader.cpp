#include "index/reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include "codecs/elias.hpp"
#include "codecs/elias_fano.hpp"
#include "codecs/vbyte.hpp"
#include "core/errors.hpp"
#include "index/string_map.hpp"

namespace mirkit::index {

namespace fs = std::filesystem;

namespace {
template <class... Parts>
[[noreturn]] void corrupt(const Parts&... parts) {
  throw CorruptIndexError(core::message("index corrupt: ", parts...));
}
}  // namespace

template <class T>
Array<T> IndexReader::map_array(const char* name, uint64_t count) {
  const core::MappedFile& f = file(name);
  if (f.size() != count * sizeof(T)) {
    corrupt(name, " has ", f.size(), " bytes, expected ", count * sizeof(T));
  }
  return Array<T>{reinterpret_cast<const T*>(f.data()), count};
}

const core::MappedFile& IndexReader::file(const char* name) const {
  for (const auto& [n, f] : m_files) {
    if (n == name) return f;
  }
  throw std::logic_error(std::string("index file not mapped: ") + name);
}

IndexReader::IndexReader(const std::string& directory, const IndexLayout& layout)
    : m_dir(directory), m_layout(layout) {
  m_docid_codec = codecs::find_codec(layout.docid_codec);
  m_freq_codec = codecs::find_codec(layout.freq_codec);
  if (!m_docid_codec) corrupt("unknown docid codec '", layout.docid_codec, "'");
  if (!m_freq_codec) corrupt("unknown freq codec '", layout.freq_codec, "'");
  m_freq_coding = freq_coding(*m_freq_codec);
  if (layout.n_docs > kMaxDocs) corrupt("n_docs=", layout.n_docs, " is too large");

  for (const IndexFile& f : kIndexFiles) {
    if (!has_file(layout, f)) continue;
    m_files.emplace_back(f.name, core::MappedFile((fs::path(directory) / f.name).string()));
  }
  const uint64_t nt = layout.n_terms, nb = layout.n_blocks, nd = layout.n_docs;
  term_offsets = map_array<uint64_t>(kTermOffsetsFile, nt + 1);
  df = map_array<uint32_t>(kTermDfFile, nt);
  cf = map_array<uint64_t>(kTermCfFile, nt);
  term_blocks = map_array<uint64_t>(kTermBlocksFile, nt + 1);
  term_max_score = map_array<float>(kTermMaxScoreFile, nt);
  block_last_docid = map_array<uint32_t>(kBlockLastDocidFile, nb);
  block_docs_end = map_array<uint64_t>(kBlockDocsEndFile, nb);
  block_freqs_end = map_array<uint64_t>(kBlockFreqsEndFile, nb);
  block_max_score = map_array<float>(kBlockMaxScoreFile, nb);
  doc_lengths = map_array<uint32_t>(kDocLengthsFile, nd);
  doc_id_offsets = map_array<uint64_t>(kDocIdOffsetsFile, nd + 1);
  const bool positions_file = layout.positions && !layout.positions_inline;
  if (positions_file) block_positions_end = map_array<uint64_t>(kBlockPositionsEndFile, nb);
  if (layout.thresholds) term_thresholds = map_array<float>(kThresholdFile, nt * kNumThresholdRanks);
  if (layout.term_hash) {
    m_slots = map_array<TermSlot>(kTermHashFile, file(kTermHashFile).size() / sizeof(TermSlot));
  }
  m_terms = reinterpret_cast<const char*>(file(kTermsFile).data());
  m_docids = file(kDocidsFile).data();
  m_freqs = file(kFreqsFile).data();
  m_doc_ids = reinterpret_cast<const char*>(file(kDocIdsFile).data());
  if (positions_file) m_positions = file(kPositionsFile).data();
  if (layout.vectors) {
    doc_vectors_end = map_array<uint64_t>(kDocVectorsEndFile, nd);
    m_vectors = file(kDocVectorsFile).data();
  }
  validate();
}

// A term's thresholds prune queries: a value above the true score would drop documents that
// belong in the top k, so they are checked as far as the index allows (ranks the term has too
// few documents for hold 0, the others are finite, non-increasing and at most its max score).
void IndexReader::check_thresholds(uint64_t t) const {
  const float* v = term_thresholds.data + t * kNumThresholdRanks;
  float above = term_max_score[t];
  for (size_t i = 0; i < kNumThresholdRanks; ++i) {
    const bool held = df[t] >= kThresholdRanks[i];
    // Non-short-circuit: one branch per rank in the common, valid case (NaN fails every test).
    const bool valid = (v[i] >= 0.0f) & (v[i] <= above) &
                       (v[i] < std::numeric_limits<float>::infinity()) & (held | (v[i] == 0.0f));
    if (!valid) {
      corrupt(kThresholdFile, ": term ", t, " (df ", df[t], ") has ", v[i], " for rank ",
              kThresholdRanks[i]);
    }
    above = v[i];
  }
}

void IndexReader::validate() const {
  auto check_offsets = [](const Array<uint64_t>& a, uint64_t limit, const char* name,
                          bool exact_end) {
    uint64_t prev = 0;
    for (size_t i = 0; i < a.size; ++i) {
      if (a[i] < prev || a[i] > limit) corrupt(name, ": offset [", i, "]=", a[i], " out of order or past ", limit);
      prev = a[i];
    }
    if (exact_end && a.size && a[a.size - 1] != limit) corrupt(name, ": last offset ", a[a.size - 1], " != ", limit);
  };
  check_offsets(term_offsets, file(kTermsFile).size(), kTermOffsetsFile, true);
  if (term_offsets.size && term_offsets[0] != 0) corrupt(kTermOffsetsFile, ": first offset is not 0");
  check_offsets(doc_id_offsets, file(kDocIdsFile).size(), kDocIdOffsetsFile, true);
  if (doc_id_offsets[0] != 0) corrupt(kDocIdOffsetsFile, ": first offset is not 0");
  check_offsets(block_docs_end, file(kDocidsFile).size(), kBlockDocsEndFile, true);
  check_offsets(block_freqs_end, file(kFreqsFile).size(), kBlockFreqsEndFile, true);
  if (m_layout.positions && !m_layout.positions_inline) {
    check_offsets(block_positions_end, file(kPositionsFile).size(), kBlockPositionsEndFile, true);
  }
  if (m_layout.vectors) {
    const uint64_t size = file(kDocVectorsFile).size();
    check_offsets(doc_vectors_end, size, kDocVectorsEndFile, true);
    if (doc_vectors_end.size == 0 && size != 0) corrupt(kDocVectorsFile, ": ", size, " bytes for no documents");
  }
  check_offsets(term_blocks, m_layout.n_blocks, kTermBlocksFile, true);
  if (term_blocks[0] != 0) corrupt(kTermBlocksFile, ": first entry is not 0");
  if (m_layout.n_terms >= kEmptySlot) corrupt("n_terms=", m_layout.n_terms, " is too large");
  // One pass over the terms, on raw pointers (the offsets are checked above): this loop is most
  // of the cost of opening an index.
  const uint64_t* offsets = term_offsets.data;
  const uint64_t* first_block = term_blocks.data;
  const uint32_t* last_docid = block_last_docid.data;
  const uint64_t n_docs = m_layout.n_docs;
  std::string_view previous;
  for (uint64_t t = 0; t < m_layout.n_terms; ++t) {
    const std::string_view current(m_terms + offsets[t], offsets[t + 1] - offsets[t]);
    if (t > 0 && !(previous < current)) corrupt(kTermsFile, ": terms not strictly sorted at term ", t);
    previous = current;
    const uint64_t d = df[t], blocks = first_block[t + 1] - first_block[t];
    if (d == 0 || d > n_docs || blocks != (d + kBlockSize - 1) / kBlockSize) {
      corrupt(kTermDfFile, " / ", kTermBlocksFile, ": term ", t, " has df ", d, " and ", blocks, " blocks");
    }
    if (m_layout.thresholds) check_thresholds(t);
    int64_t prev = -1;
    for (uint64_t b = first_block[t]; b < first_block[t + 1]; ++b) {
      if (static_cast<int64_t>(last_docid[b]) <= prev || last_docid[b] >= n_docs) {
        corrupt(kBlockLastDocidFile, ": block ", b, " of term ", t, " is out of order or range");
      }
      prev = last_docid[b];
    }
  }
}

std::string_view IndexReader::term(uint32_t t) const {
  if (t >= m_layout.n_terms) core::fail_index("term id ", t, " out of range [0, ", m_layout.n_terms, ")");
  return {m_terms + term_offsets[t], term_offsets[t + 1] - term_offsets[t]};
}

void IndexReader::check_term_hash() const {
  // The table must be what building it from terms.bin gives, up to the order of collisions: a
  // power of two of at most 2/3 full slots (so probing ends), each term once, with its hash's
  // tag, and reachable from its home slot without crossing an empty slot. One pass over the
  // slots, one over the terms in order: cheaper than building the table again.
  const uint64_t size = m_slots.size, n = m_layout.n_terms;
  if (size * sizeof(TermSlot) != file(kTermHashFile).size() || size < 1024 ||
      (size & (size - 1)) || size < n + n / 2) {
    corrupt(kTermHashFile, ": ", file(kTermHashFile).size(), " bytes for ", n, " terms");
  }
  const uint64_t mask = size - 1;
  uint64_t empty = 0;
  while (empty < size && m_slots[empty].term != kEmptySlot) ++empty;
  if (empty == size) corrupt(kTermHashFile, ": no empty slot");
  std::vector<uint32_t> at(n, kEmptySlot), reach(n);  // each term's slot; its distance from the
                                                       // first slot of its run of full slots
  uint64_t run_start = empty + 1, held = 0;
  for (uint64_t k = 1; k <= size; ++k) {
    const uint64_t i = (empty + k) & mask;
    const uint32_t t = m_slots[i].term;
    if (t == kEmptySlot) {
      run_start = i + 1;
      continue;
    }
    if (t >= n || at[t] != kEmptySlot) {
      corrupt(kTermHashFile, ": slot ", i, " holds term ", t, " again or out of range");
    }
    at[t] = static_cast<uint32_t>(i);
    reach[t] = static_cast<uint32_t>((i - run_start) & mask);
    ++held;
  }
  if (held != n) corrupt(kTermHashFile, ": ", held, " of ", n, " terms");
  for (uint32_t t = 0; t < n; ++t) {
    const uint64_t h = term_hash(term(t));
    if (m_slots[at[t]].tag != static_cast<uint32_t>(h >> 32) || ((at[t] - h) & mask) > reach[t]) {
      corrupt(kTermHashFile, ": term ", t, " is not where its hash leads");
    }
  }
}

void IndexReader::ensure_lexicon() const {
  std::call_once(m_lexicon_built, [this] {
    if (m_layout.term_hash) {
      check_term_hash();
    } else {
      build_lexicon();
    }
  });
}

void IndexReader::build_lexicon() const {
  m_built_slots = build_term_table(m_layout.n_terms, [this](uint32_t t) { return term_hash(term(t)); });
  m_slots = {m_built_slots.data(), m_built_slots.size()};
}

int64_t IndexReader::find_term(std::string_view s) const {
  ensure_lexicon();
  return probe(s, term_hash(s));
}

int64_t IndexReader::probe(std::string_view s, uint64_t h) const {
  // The table has empty slots and valid ids (built here, or checked on open): probing ends.
  return probe_term_table(m_slots.data, m_slots.size, s, h,
                          [this](uint32_t t) { return term(t); });
}

void IndexReader::find_terms(const std::vector<std::string>& terms, int64_t* out) const {
  const size_t n = terms.size();
  ensure_lexicon();
  const size_t mask = m_slots.size - 1;
  std::vector<uint64_t> hashes(n);
  for (size_t i = 0; i < n; ++i) {
    hashes[i] = term_hash(terms[i]);
    __builtin_prefetch(m_slots.data + (hashes[i] & mask));
  }
  for (size_t i = 0; i < n; ++i) {
    const TermSlot slot = m_slots[hashes[i] & mask];
    if (slot.term != kEmptySlot) __builtin_prefetch(term_offsets.data + slot.term);
  }
  for (size_t i = 0; i < n; ++i) {
    const TermSlot slot = m_slots[hashes[i] & mask];
    if (slot.term != kEmptySlot) __builtin_prefetch(m_terms + term_offsets[slot.term]);
  }
  for (size_t i = 0; i < n; ++i) out[i] = probe(terms[i], hashes[i]);
}

std::pair<uint32_t, uint32_t> IndexReader::prefix_range(std::string_view prefix) const {
  auto lower = [&](auto&& before) {
    uint64_t lo = 0, hi = m_layout.n_terms;
    while (lo < hi) {
      uint64_t mid = (lo + hi) / 2;
      if (before(term(static_cast<uint32_t>(mid)))) lo = mid + 1; else hi = mid;
    }
    return static_cast<uint32_t>(lo);
  };
  uint32_t first = lower([&](std::string_view t) { return t < prefix; });
  uint32_t last = lower([&](std::string_view t) { return t.substr(0, prefix.size()) <= prefix; });
  return {first, std::max(first, last)};
}

std::string_view IndexReader::doc_id(uint32_t d) const {
  if (d >= m_layout.n_docs) core::fail_index("docid ", d, " out of range [0, ", m_layout.n_docs, ")");
  return {m_doc_ids + doc_id_offsets[d], doc_id_offsets[d + 1] - doc_id_offsets[d]};
}

void IndexReader::find_doc_ids(const std::vector<std::string>& ids, int64_t* out) const {
  std::unordered_map<std::string_view, size_t> wanted;  // id -> its first position in ids
  wanted.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    out[i] = -1;
    wanted.emplace(ids[i], i);
  }
  if (wanted.empty()) return;
  for (uint32_t d = 0; d < m_layout.n_docs; ++d) {
    const auto it = wanted.find(doc_id(d));
    if (it != wanted.end()) out[it->second] = d;  // ids are unique within an index
  }
  for (size_t i = 0; i < ids.size(); ++i) out[i] = out[wanted.find(ids[i])->second];
}

uint32_t IndexReader::decode_docids(uint32_t t, uint64_t b, uint32_t* out) const {
  const uint64_t first = term_blocks[t];
  const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(kBlockSize, df[t] - (b - first) * kBlockSize));
  const uint64_t start = block_start(block_docs_end, b);
  const uint64_t len = block_docs_end[b] - start;
  const uint32_t base = b == first ? 0 : block_last_docid[b - 1] + 1;
  size_t used;
  try {
    used = m_docid_codec->requires_sorted
               ? m_docid_codec->decode(m_docids + start, len, out, n)
               : m_docid_codec->decode_sorted(m_docids + start, len, out, n);
  } catch (const std::invalid_argument& e) {
    corrupt(kDocidsFile, ": block ", b, " of term '", term(t), "': ", e.what());
  }
  // Rebase and check that the docids increase strictly (a wrap past 2^32 shows as a decrease),
  // in two loops the compiler vectorizes: every cursor runs this on each block it enters.
  for (uint32_t i = 0; i < n; ++i) out[i] += base;
  uint32_t bad = (used != len) | (out[0] < base);
  for (uint32_t i = 1; i < n; ++i) bad |= out[i] <= out[i - 1];
  if (bad || out[n - 1] != block_last_docid[b]) {
    corrupt(kDocidsFile, ": block ", b, " of term '", term(t), "' does not match the skip list");
  }
  return n;
}

size_t IndexReader::decode_freqs(uint64_t b, uint32_t n, uint32_t* out) const {
  const uint64_t start = block_start(block_freqs_end, b);
  const uint64_t len = block_freqs_end[b] - start;
  size_t used;
  try {
    used = m_freq_codec->decode(m_freqs + start, len, out, n);
  } catch (const std::invalid_argument& e) {
    corrupt(kFreqsFile, ": block ", b, ": ", e.what());
  }
  bool bad = m_layout.positions && m_layout.positions_inline ? used > len : used != len;
  switch (m_freq_coding) {
    case FreqCoding::kMinusOne:
      for (uint32_t i = 0; i < n; ++i) out[i] += 1;
      break;
    case FreqCoding::kPlain:
      break;
    case FreqCoding::kPrefixSum: {
      uint32_t prev = 0;
      for (uint32_t i = 0; i < n; ++i) {
        uint32_t s = out[i];
        bad |= s <= prev;
        out[i] = s - prev;
        prev = s;
      }
      break;
    }
  }
  if (bad) corrupt(kFreqsFile, ": block ", b, " is inconsistent");
  return used;
}

void IndexReader::postings(uint32_t t, std::vector<uint32_t>& docids,
                           std::vector<uint32_t>& freqs) const {
  if (t >= m_layout.n_terms) core::fail_index("term id ", t, " out of range [0, ", m_layout.n_terms, ")");
  docids.resize(df[t]);
  freqs.resize(df[t]);
  size_t at = 0;
  uint32_t buf[kBlockSize];
  for (uint64_t b = term_blocks[t]; b < term_blocks[t + 1]; ++b) {
    uint32_t n = decode_docids(t, b, buf);
    std::copy(buf, buf + n, docids.data() + at);
    decode_freqs(b, n, freqs.data() + at);
    at += n;
  }
}

size_t IndexReader::doc_vector(uint32_t d, std::vector<uint32_t>& terms,
                               std::vector<uint32_t>& tfs) const {
  if (!m_layout.vectors) {
    core::fail_value("the index has no document vectors; it must be rebuilt with vectors=True");
  }
  if (d >= m_layout.n_docs) core::fail_index("docid ", d, " out of range [0, ", m_layout.n_docs, ")");
  const uint8_t* p = m_vectors + (d == 0 ? 0 : doc_vectors_end[d - 1]);
  const uint8_t* end = m_vectors + doc_vectors_end[d];
  const codecs::Codec& ids_codec = codecs::elias_fano::kCodec;
  const codecs::Codec& tfs_codec = codecs::elias::kGammaCodec;
  uint32_t n = 0;
  p = core::get_varint(p, end, n);
  // A hostile count is refused before anything grows.
  if (!p || n > m_layout.n_terms || n > tfs_codec.max_decoded_count(end - p)) {
    corrupt(kDocVectorsFile, ": document ", d, " has a bad term count");
  }
  const size_t at = terms.size();
  terms.resize(at + n);
  tfs.resize(at + n);
  size_t used;
  try {
    used = ids_codec.decode(p, end - p, terms.data() + at, n);
    used += tfs_codec.decode(p + used, end - p - used, tfs.data() + at, n);
  } catch (const std::invalid_argument& e) {
    corrupt(kDocVectorsFile, ": document ", d, ": ", e.what());
  }
  bool bad = used != static_cast<size_t>(end - p) || (n && terms[at + n - 1] >= m_layout.n_terms);
  uint64_t length = 0;
  for (size_t i = at; i < at + n; ++i) {
    bad |= i > at && terms[i] <= terms[i - 1];
    length += tfs[i];
  }
  if (bad || length != doc_lengths[d]) {
    corrupt(kDocVectorsFile, ": document ", d, " is inconsistent (term order, range or length)");
  }
  return n;
}

void IndexReader::prefetch_term(uint32_t t) const {
  if (t >= m_layout.n_terms) return;
  __builtin_prefetch(df.data + t);
  __builtin_prefetch(cf.data + t);
  __builtin_prefetch(term_blocks.data + t);
  __builtin_prefetch(term_max_score.data + t);
  if (m_layout.thresholds) __builtin_prefetch(term_thresholds.data + t * kNumThresholdRanks);
}

void IndexReader::prefetch_postings(uint32_t t) const {
  if (t >= m_layout.n_terms) return;
  const uint64_t b = term_blocks[t];
  if (b >= m_layout.n_blocks) return;
  const uint8_t* docs = m_docids + block_start(block_docs_end, b);
  __builtin_prefetch(docs);  // prefetches never fault, even past the end of the mapping
  __builtin_prefetch(docs + 64);
  __builtin_prefetch(m_freqs + block_start(block_freqs_end, b));
}

void IndexReader::prefetch_skips(uint32_t t) const {
  if (t >= m_layout.n_terms) return;
  const uint64_t b = term_blocks[t];
  if (b >= m_layout.n_blocks) return;
  __builtin_prefetch(block_last_docid.data + b);
  __builtin_prefetch(block_max_score.data + b);
  __builtin_prefetch(block_docs_end.data + b);
  __builtin_prefetch(block_freqs_end.data + b);
  if (b > 0) {
    __builtin_prefetch(block_last_docid.data + b - 1);
    __builtin_prefetch(block_docs_end.data + b - 1);
    __builtin_prefetch(block_freqs_end.data + b - 1);
  }
}

PostingCursor::PostingCursor(const IndexReader& index, uint32_t term)
    : m_index(&index), m_lasts(index.block_last_docid.data), m_term(term) {
  if (term >= index.n_terms()) core::fail_index("term id ", term, " out of range [0, ", index.n_terms(), ")");
  m_df = index.df[term];
  m_first_block = index.term_blocks[term];
  m_end_block = index.term_blocks[term + 1];
  set_shallow(m_first_block);
  load_block(m_first_block);
}

PostingCursor::PostingCursor(const MemoryPostings& list)
    : m_index(nullptr), m_list(&list), m_lasts(list.block_last.data()), m_term(UINT32_MAX) {
  m_df = static_cast<uint32_t>(list.docids.size());
  m_first_block = 0;
  m_end_block = list.block_last.size();
  set_shallow(m_first_block);
  load_block(m_first_block);
}

void PostingCursor::set_shallow(uint64_t block) {
  m_shallow = block;
  m_shallow_last = block < m_end_block ? m_lasts[block] : kEndDocid;
}

void PostingCursor::load_block(uint64_t block) {
  m_block = block;
  if (block > m_shallow) set_shallow(block);
  m_pos = 0;
  m_freqs_ready = false;
  if (block >= m_end_block) {
    m_n = 0;
    m_docid = m_block_last = kEndDocid;
    m_block = m_end_block;
    set_shallow(m_end_block);
    return;
  }
  if (m_list) {
    const size_t first = block * kBlockSize;
    m_n = static_cast<uint32_t>(std::min<size_t>(kBlockSize, m_list->docids.size() - first));
    std::copy_n(m_list->docids.data() + first, m_n, m_docs);
  } else {
    m_n = m_index->decode_docids(m_term, block, m_docs);
  }
  m_decoded += m_n;
  m_docid = m_docs[0];
  m_block_last = m_docs[m_n - 1];
}

void PostingCursor::load_block_geq(uint32_t target) {
  shallow_next_geq(target);
  load_block(m_shallow);
}

void PostingCursor::shallow_advance(uint32_t target) {
  const uint32_t* last = m_lasts;
  // Gallop then binary search over the block skip list.
  uint64_t lo = m_shallow, step = 1;
  while (lo < m_end_block && last[lo] < target) {
    uint64_t probe = lo + step;
    if (probe >= m_end_block || last[probe] >= target) {
      uint64_t hi = std::min(probe, m_end_block);
      ++lo;
      while (lo < hi) {
        uint64_t mid = (lo + hi) / 2;
        if (last[mid] < target) lo = mid + 1; else hi = mid;
      }
      break;
    }
    lo = probe;
    step *= 2;
  }
  set_shallow(lo);
}

float PostingCursor::block_max_score() const {
  return m_index && m_shallow < m_end_block ? m_index->block_max_score[m_shallow] : 0.0f;
}

float PostingCursor::max_score() const { return m_index ? m_index->term_max_score[m_term] : 0.0f; }

void PostingCursor::decode_freqs() {
  if (m_list) {
    std::copy_n(m_list->freqs.data() + m_block * kBlockSize, m_n, m_freqs);
  } else {
    m_freq_bytes = m_index->decode_freqs(m_block, m_n, m_freqs);
  }
  m_freqs_ready = true;
}

void PostingCursor::decode_positions() {
  if (!m_freqs_ready) decode_freqs();
  m_positions_start.resize(m_n + 1);
  uint64_t total = 0;
  for (uint32_t i = 0; i < m_n; ++i) {
    m_positions_start[i] = static_cast<uint32_t>(total);
    total += m_freqs[i];
  }
  m_positions_start[m_n] = static_cast<uint32_t>(total);
  // The block's positions: after its frequencies in freqs.bin, or in positions.bin.
  const bool inline_ = m_index->m_layout.positions_inline;
  const auto& ends = inline_ ? m_index->block_freqs_end : m_index->block_positions_end;
  const uint64_t start = IndexReader::block_start(ends, m_block) + (inline_ ? m_freq_bytes : 0);
  const uint8_t* p = (inline_ ? m_index->m_freqs : m_index->m_positions) + start;
  const size_t bytes = ends[m_block] - start;
  const char* file = inline_ ? kFreqsFile : kPositionsFile;
  if (total > codecs::vbyte::kCodec.max_decoded_count(bytes)) {  // before allocating
    corrupt(file, ": block ", m_block, " positions are truncated");
  }
  m_block_positions.resize(total);
  size_t used = 0;
  try {
    used = codecs::vbyte::kCodec.decode(p, bytes, m_block_positions.data(), total);
  } catch (const std::invalid_argument&) {
    used = bytes + 1;
  }
  if (used != bytes) corrupt(file, ": block ", m_block, " positions are truncated or corrupt");
  std::fill_n(m_positions_summed, m_n, false);
  m_positions_block = m_block;
}

uint32_t PostingCursor::positions_view(const uint32_t*& data) {
  data = nullptr;
  if (!m_index || !m_index->m_layout.positions || m_docid == kEndDocid) return 0;
  if (m_positions_block != m_block) decode_positions();
  uint32_t* first = m_block_positions.data() + m_positions_start[m_pos];
  const uint32_t n = m_positions_start[m_pos + 1] - m_positions_start[m_pos];
  if (!m_positions_summed[m_pos]) {  // gaps to positions, on the first view of the posting
    uint32_t at = 0;
    for (uint32_t k = 0; k < n; ++k) first[k] = at += first[k];
    m_positions_summed[m_pos] = true;
  }
  data = first;
  return n;
}

void PostingCursor::positions(std::vector<uint32_t>& out) {
  const uint32_t* data;
  const uint32_t n = positions_view(data);
  out.assign(data, data + n);
}

}  // namespace mirkit::index
