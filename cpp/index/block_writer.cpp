#include "index/block_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "index/term_hash.hpp"

namespace mirkit::index {

namespace fs = std::filesystem;
using core::FileWriter;

namespace {

std::string in_dir(const std::string& dir, const char* name) {
  return (fs::path(dir) / name).string();
}

}  // namespace

BlockWriter::BlockWriter(const std::string& dir, const codecs::Codec& docid_codec,
                         const codecs::Codec& freq_codec, bool positions, const Bm25Params& bm25,
                         const uint32_t* doc_lengths, size_t n_docs, uint64_t total_tokens)
    : BlockWriter(docid_codec, freq_codec, positions, bm25, doc_lengths, n_docs, total_tokens) {
  m_in_memory = false;
  const std::pair<OutStream*, const char*> files[] = {
      {&m_terms, kTermsFile},
      {&m_term_offsets, kTermOffsetsFile},
      {&m_term_df, kTermDfFile},
      {&m_term_cf, kTermCfFile},
      {&m_term_blocks, kTermBlocksFile},
      {&m_term_max_score, kTermMaxScoreFile},
      {&m_block_last_docid, kBlockLastDocidFile},
      {&m_block_docs_end, kBlockDocsEndFile},
      {&m_block_freqs_end, kBlockFreqsEndFile},
      {&m_block_max_score, kBlockMaxScoreFile},
      {&m_docids, kDocidsFile},
      {&m_freqs, kFreqsFile},
      {&m_thresholds, kThresholdFile},
      {&m_term_hash, kTermHashFile}};
  for (const auto& [stream, name] : files) stream->open(in_dir(dir, name));
  m_term_offsets.put<uint64_t>(0);
  m_term_blocks.put<uint64_t>(0);
}

BlockWriter::BlockWriter(const codecs::Codec& docid_codec, const codecs::Codec& freq_codec,
                         bool positions, const Bm25Params& bm25, const uint32_t* doc_lengths,
                         size_t n_docs, uint64_t total_tokens)
    : m_with_positions(positions),
      m_bm25(bm25),
      m_docs_codec(docid_codec),
      m_freqs_codec(freq_codec),
      m_freq_coding(freq_coding(freq_codec)),
      m_doc_lengths(doc_lengths),
      m_n_docs(n_docs),
      m_total_tokens(total_tokens),
      m_avg_length(n_docs == 0 || total_tokens == 0 ? 1.0
                                                    : static_cast<double>(total_tokens) / n_docs),
      m_in_memory(true) {}

void BlockWriter::begin_term(std::string_view term, uint64_t df) {
  if (m_n_terms > 0 && !(m_last_term < term)) {
    core::fail_value("BlockWriter: term '", term, "' does not follow '", m_last_term, "'");
  }
  if (df == 0 || df > m_n_docs) {
    core::fail_value("BlockWriter: term '", term, "' has df ", df, ", expected 1 to ", m_n_docs);
  }
  if (m_n_terms == 0) m_first_term.assign(term);
  m_last_term.assign(term);
  m_in_term = true;
  m_terms.write(term.data(), term.size());
  m_term_offsets.put<uint64_t>(m_terms.bytes());
  m_term_hashes.push_back(term_hash(term));
  m_term_df.put<uint32_t>(static_cast<uint32_t>(df));
  m_idf = bm25_idf(m_n_docs, df);
  m_df = df;
  m_term_postings = 0;
  m_cf = 0;
  m_term_max = 0;
  m_prev_last = -1;
  ++m_n_terms;
}

void BlockWriter::add(uint32_t docid, uint32_t tf, const uint32_t* positions) {
  const int64_t last = m_n ? m_block_docids[m_n - 1] : m_prev_last;
  if (docid >= m_n_docs || static_cast<int64_t>(docid) <= last || tf == 0) {
    core::fail_value("BlockWriter: term '", m_last_term, "' posting (docid ", docid, ", tf ", tf,
                     ") after docid ", last, " in ", m_n_docs, " documents");
  }
  m_block_docids[m_n] = docid;
  m_block_tfs[m_n] = tf;
  if (m_with_positions) {
    uint32_t prev = 0;
    for (uint32_t k = 0; k < tf; ++k) {
      core::append_varint(m_position_bytes, positions[k] - prev);
      prev = positions[k];
    }
  }
  m_cf += tf;
  ++m_term_postings;
  if (++m_n == kBlockSize) flush_block();
}

void BlockWriter::end_term() {
  if (m_term_postings != m_df) {
    core::fail_value("BlockWriter: term '", m_last_term, "' got ", m_term_postings,
                     " postings for df ", m_df);
  }
  if (m_n) flush_block();
  m_term_cf.put<uint64_t>(m_cf);
  m_term_max_score.put<float>(float_upper_bound(m_term_max));
  m_term_blocks.put<uint64_t>(m_n_blocks);
  std::sort_heap(m_top.begin(), m_top.end(), std::greater<double>());  // largest first
  for (uint32_t r : kThresholdRanks) {
    m_thresholds.put<float>(r <= m_top.size() ? float_lower_bound(m_top[r - 1]) : 0.0f);
  }
  m_top.clear();
  m_in_term = false;
}

namespace {

// Appends the uint64 values of `from` to `to`, each plus `shift`.
void append_shifted(OutStream& to, const std::vector<uint8_t>& from, uint64_t shift) {
  uint64_t chunk[512];
  for (size_t at = 0; at < from.size();) {
    const size_t n = std::min(sizeof(chunk), from.size() - at);
    std::memcpy(chunk, from.data() + at, n);
    for (size_t i = 0; i < n / sizeof(uint64_t); ++i) chunk[i] += shift;
    to.write(chunk, n);
    at += n;
  }
}

}  // namespace

size_t BlockWriter::memory() const {
  size_t bytes = m_term_hashes.capacity() * sizeof(uint64_t);
  for (const OutStream* s :
       {&m_terms, &m_term_offsets, &m_term_df, &m_term_cf, &m_term_blocks, &m_term_max_score,
        &m_block_last_docid, &m_block_docs_end, &m_block_freqs_end, &m_block_max_score,
        &m_docids, &m_freqs, &m_thresholds, &m_term_hash}) {
    bytes += s->memory().capacity();
  }
  return bytes;
}

void BlockWriter::append(BlockWriter& r) {
  if (!r.m_in_memory || r.m_in_term) {
    throw std::logic_error("BlockWriter::append: not a finished memory writer");
  }
  if (m_in_term) throw std::logic_error("BlockWriter::append: inside a term");
  if (r.m_n_terms == 0) return;
  if (m_n_terms > 0 && !(m_last_term < r.m_first_term)) {
    core::fail_value("BlockWriter: term '", r.m_first_term, "' does not follow '", m_last_term,
                     "'");
  }
  // Offsets into the byte streams and block numbers count from the range's start.
  append_shifted(m_term_offsets, r.m_term_offsets.memory(), m_terms.bytes());
  append_shifted(m_term_blocks, r.m_term_blocks.memory(), m_n_blocks);
  append_shifted(m_block_docs_end, r.m_block_docs_end.memory(), m_docids.bytes());
  append_shifted(m_block_freqs_end, r.m_block_freqs_end.memory(), m_freqs.bytes());
  for (OutStream* s : {&r.m_term_offsets, &r.m_term_blocks, &r.m_block_docs_end,
                       &r.m_block_freqs_end}) {
    s->release();
  }
  const std::pair<OutStream*, OutStream*> same[] = {
      {&m_terms, &r.m_terms},
      {&m_term_df, &r.m_term_df},
      {&m_term_cf, &r.m_term_cf},
      {&m_term_max_score, &r.m_term_max_score},
      {&m_thresholds, &r.m_thresholds},
      {&m_block_last_docid, &r.m_block_last_docid},
      {&m_block_max_score, &r.m_block_max_score},
      {&m_docids, &r.m_docids},
      {&m_freqs, &r.m_freqs}};
  for (const auto& [to, from] : same) {
    if (!from->memory().empty()) to->write(from->memory().data(), from->memory().size());
    from->release();
  }
  m_term_hashes.insert(m_term_hashes.end(), r.m_term_hashes.begin(), r.m_term_hashes.end());
  std::vector<uint64_t>().swap(r.m_term_hashes);
  m_last_term = r.m_last_term;
  if (m_n_terms == 0) m_first_term = r.m_first_term;
  m_n_terms += r.m_n_terms;
  m_n_blocks += r.m_n_blocks;
  m_n_postings += r.m_n_postings;
  m_position_bytes_total += r.m_position_bytes_total;
}

std::vector<FileInfo> BlockWriter::close(unsigned threads) {
  if (m_in_memory) throw std::logic_error("BlockWriter::close: a memory writer has no files");
  const std::vector<TermSlot> table =
      build_term_table(m_term_hashes.size(), [&](uint32_t t) { return m_term_hashes[t]; });
  m_term_hash.write(table.data(), table.size() * sizeof(TermSlot));
  std::vector<OutStream*> streams = {&m_terms,           &m_term_offsets,   &m_term_df,
                                     &m_term_cf,         &m_term_blocks,    &m_term_max_score,
                                     &m_block_last_docid, &m_block_docs_end, &m_block_freqs_end,
                                     &m_block_max_score, &m_docids,         &m_freqs};
  streams.push_back(&m_thresholds);
  streams.push_back(&m_term_hash);
  core::parallel_for(streams.size(), threads, [&](size_t k) { streams[k]->file()->close(); });
  std::vector<FileInfo> info;
  for (OutStream* s : streams) {
    const FileWriter* f = s->file();
    info.push_back({fs::path(f->path()).filename().string(), f->bytes(), f->crc()});
  }
  return info;
}

// Keeps the term's kMaxRank largest scores in m_top (a min-heap).
void BlockWriter::keep_top(double s) {
  constexpr size_t kMaxRank = kThresholdRanks[kNumThresholdRanks - 1];
  if (m_top.size() < kMaxRank) {
    m_top.push_back(s);
    std::push_heap(m_top.begin(), m_top.end(), std::greater<double>());
  } else if (s > m_top.front()) {
    std::pop_heap(m_top.begin(), m_top.end(), std::greater<double>());
    m_top.back() = s;
    std::push_heap(m_top.begin(), m_top.end(), std::greater<double>());
  }
}

void BlockWriter::flush_block() {
  const uint32_t base = static_cast<uint32_t>(m_prev_last + 1);
  uint32_t values[kBlockSize];
  for (uint32_t i = 0; i < m_n; ++i) values[i] = m_block_docids[i] - base;
  m_scratch.resize(std::max(m_docs_codec.max_encoded_bytes(values, m_n), size_t{16}));
  size_t bytes = m_docs_codec.requires_sorted
                     ? m_docs_codec.encode(values, m_n, m_scratch.data())
                     : m_docs_codec.encode_sorted(values, m_n, m_scratch.data());
  m_docids.write(m_scratch.data(), bytes);
  m_block_docs_end.put<uint64_t>(m_docids.bytes());

  uint32_t sum = 0;
  for (uint32_t i = 0; i < m_n; ++i) {
    switch (m_freq_coding) {
      case FreqCoding::kMinusOne: values[i] = m_block_tfs[i] - 1; break;
      case FreqCoding::kPlain: values[i] = m_block_tfs[i]; break;
      case FreqCoding::kPrefixSum: values[i] = sum += m_block_tfs[i]; break;
    }
  }
  m_scratch.resize(std::max(m_freqs_codec.max_encoded_bytes(values, m_n), size_t{16}));
  bytes = m_freqs_codec.encode(values, m_n, m_scratch.data());
  m_freqs.write(m_scratch.data(), bytes);
  if (m_with_positions) {  // inline, after the block's frequencies (format.hpp)
    m_freqs.write(m_position_bytes.data(), m_position_bytes.size());
    m_position_bytes_total += m_position_bytes.size();
    m_position_bytes.clear();
  }
  m_block_freqs_end.put<uint64_t>(m_freqs.bytes());

  double block_max = 0;
  for (uint32_t i = 0; i < m_n; ++i) {
    double s = m_bm25.impacts ? static_cast<double>(m_block_tfs[i])
                              : bm25_term(m_idf, m_block_tfs[i], m_doc_lengths[m_block_docids[i]],
                                          m_avg_length, m_bm25);
    block_max = std::max(block_max, s);
    keep_top(s);
  }
  m_term_max = std::max(m_term_max, block_max);
  m_block_max_score.put<float>(float_upper_bound(block_max));
  m_block_last_docid.put<uint32_t>(m_block_docids[m_n - 1]);
  m_prev_last = m_block_docids[m_n - 1];
  m_n_postings += m_n;
  m_n = 0;
  ++m_n_blocks;
}

}  // namespace mirkit::index
