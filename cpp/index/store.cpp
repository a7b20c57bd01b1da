// The document store (store.hpp). zstd and zlib are system libraries found by CMake
// (MIRKIT_ZSTD, MIRKIT_ZLIB): a build without one still opens stores of the others.
#include "index/store.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "core/crc32c.hpp"
#include "core/errors.hpp"
#include "index/format.hpp"

#if defined(MIRKIT_HAVE_ZSTD)
#include <zdict.h>
#include <zstd.h>
#endif
#if defined(MIRKIT_HAVE_ZLIB)
#include <zlib.h>
#endif

namespace mirkit::index {

namespace {

constexpr char kMagic[8] = {'M', 'K', 'S', 'T', 'O', 'R', 'E', '1'};
constexpr size_t kHeaderBytes = 16;
constexpr size_t kBlockHeaderBytes = 16;
constexpr size_t kIndexEntryBytes = 12;
constexpr size_t kFooterBytes = 40;

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void append(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

[[noreturn]] void missing_codec(const std::string& path, StoreCodec codec) {
  std::string have;
  for (StoreCodec c : store_codecs()) have += std::string(have.empty() ? "" : ", ") + store_codec_name(c);
  throw CorruptIndexError(core::message(
      path, ": the document store is compressed with ", store_codec_name(codec),
      ", which this build of mirkit lacks (it has ", have, "); rebuild mirkit with the ",
      store_codec_name(codec), " library (CMake option MIRKIT_", codec == StoreCodec::kZstd ? "ZSTD" : "ZLIB",
      "=ON) or rewrite the index with this build"));
}

void compress(StoreCodec codec, int level, const void* cdict, const std::string& in,
              std::string& out) {
  switch (codec) {
    case StoreCodec::kNone:
      out = in;
      return;
#if defined(MIRKIT_HAVE_ZSTD)
    case StoreCodec::kZstd: {
      thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(),
                                                                         ZSTD_freeCCtx);
      out.resize(ZSTD_compressBound(in.size()));
      const size_t n =
          cdict != nullptr
              ? ZSTD_compress_usingCDict(ctx.get(), out.data(), out.size(), in.data(), in.size(),
                                         static_cast<const ZSTD_CDict*>(cdict))
              : ZSTD_compressCCtx(ctx.get(), out.data(), out.size(), in.data(), in.size(), level);
      if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
      out.resize(n);
      return;
    }
#endif
#if defined(MIRKIT_HAVE_ZLIB)
    case StoreCodec::kZlib: {
      uLongf n = compressBound(static_cast<uLong>(in.size()));
      out.resize(n);
      const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &n,
                               reinterpret_cast<const Bytef*>(in.data()),
                               static_cast<uLong>(in.size()), level);
      if (rc != Z_OK) throw std::runtime_error("zlib: compress2 failed");
      out.resize(n);
      return;
    }
#endif
    default:
      core::fail_value("store codec ", store_codec_name(codec), " is not in this build");
  }
}

// Decompresses exactly raw_bytes; false when the payload does not (a damaged block whose
// checksum happened to match, or a codec bug): the caller reports it.
bool decompress(StoreCodec codec, const void* ddict, const uint8_t* in, size_t n, char* out,
                size_t raw_bytes) {
  switch (codec) {
    case StoreCodec::kNone:
      if (n != raw_bytes) return false;
      std::memcpy(out, in, n);
      return true;
#if defined(MIRKIT_HAVE_ZSTD)
    case StoreCodec::kZstd: {
      thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> ctx(ZSTD_createDCtx(),
                                                                         ZSTD_freeDCtx);
      const size_t got =
          ddict != nullptr
              ? ZSTD_decompress_usingDDict(ctx.get(), out, raw_bytes, in, n,
                                           static_cast<const ZSTD_DDict*>(ddict))
              : ZSTD_decompressDCtx(ctx.get(), out, raw_bytes, in, n);
      return !ZSTD_isError(got) && got == raw_bytes;
    }
#endif
#if defined(MIRKIT_HAVE_ZLIB)
    case StoreCodec::kZlib: {
      uLongf got = static_cast<uLongf>(raw_bytes);
      const int rc = uncompress(reinterpret_cast<Bytef*>(out), &got, in, static_cast<uLong>(n));
      return rc == Z_OK && got == raw_bytes;
    }
#endif
    default:
      return false;
  }
}

int default_level(StoreCodec codec) {
  return codec == StoreCodec::kZstd ? 3 : codec == StoreCodec::kZlib ? 6 : 0;
}

}  // namespace

const char* store_codec_name(StoreCodec codec) {
  switch (codec) {
    case StoreCodec::kNone: return "none";
    case StoreCodec::kZlib: return "zlib";
    case StoreCodec::kZstd: return "zstd";
  }
  return "unknown";
}

StoreCodec store_codec_from_name(std::string_view name) {
  if (name == "none") return StoreCodec::kNone;
  if (name == "zlib") return StoreCodec::kZlib;
  if (name == "zstd") return StoreCodec::kZstd;
  core::fail_value("unknown store codec '", name, "'; expected zstd, zlib or none");
}

namespace {
std::atomic<uint32_t> g_disabled_codecs{0};  // bit per codec: see disable_store_codec
}  // namespace

void disable_store_codec(StoreCodec codec, bool disabled) {
  const uint32_t bit = 1u << static_cast<uint32_t>(codec);
  if (disabled) g_disabled_codecs |= bit;
  else g_disabled_codecs &= ~bit;
}

bool store_codec_available(StoreCodec codec) {
  if (codec != StoreCodec::kNone &&
      (g_disabled_codecs.load() >> static_cast<uint32_t>(codec) & 1u) != 0) {
    return false;
  }
  switch (codec) {
    case StoreCodec::kNone: return true;
#if defined(MIRKIT_HAVE_ZLIB)
    case StoreCodec::kZlib: return true;
#endif
#if defined(MIRKIT_HAVE_ZSTD)
    case StoreCodec::kZstd: return true;
#endif
    default: return false;
  }
}

std::vector<StoreCodec> store_codecs() {
  std::vector<StoreCodec> out;
  for (StoreCodec c : {StoreCodec::kZstd, StoreCodec::kZlib, StoreCodec::kNone}) {
    if (store_codec_available(c)) out.push_back(c);
  }
  return out;
}

StoreWriter::StoreWriter(const std::string& path, StoreCodec codec, int level,
                         uint32_t block_bytes)
    : m_file(path), m_codec(codec), m_level(level == 0 ? default_level(codec) : level),
      m_block_bytes(block_bytes) {
  if (!store_codec_available(codec)) {
    core::fail_value("store codec ", store_codec_name(codec), " is not in this build");
  }
  if (block_bytes < 1024 || block_bytes > (1u << 26)) {
    core::fail_value("block_bytes must be in [1024, 2^26], got ", block_bytes);
  }
  if (m_level < 0 || m_level > 22) core::fail_value("level must be in [0, 22], got ", level);
  std::string header(kMagic, sizeof(kMagic));
  append<uint8_t>(header, static_cast<uint8_t>(codec));
  append<uint8_t>(header, static_cast<uint8_t>(m_level));
  append<uint16_t>(header, 0);
  append<uint32_t>(header, block_bytes);
  m_file.write(header.data(), header.size());
}

void StoreWriter::add(std::string_view document) {
  if (m_finished) throw std::logic_error("StoreWriter::add after finish");
  if (m_n_docs == kMaxDocs) core::fail_value("a store holds at most ", kMaxDocs, " documents");
  // A block's sizes are u32: a document of 4 GiB or more cannot be stored.
  if (document.size() > UINT32_MAX - 64 - m_data.size() - 4 * (m_lengths.size() + 1)) {
    if (!m_lengths.empty()) flush_block();
    if (document.size() > UINT32_MAX - 64) {
      core::fail_value("document ", m_n_docs, " has ", document.size(),
                       " bytes; the store takes documents under 4 GiB");
    }
  }
  m_lengths.push_back(static_cast<uint32_t>(document.size()));
  m_data.append(document);
  ++m_n_docs;
  if (m_data.size() + 4 * m_lengths.size() >= m_block_bytes) flush_block();
}

void StoreWriter::flush_block() {
  if (m_lengths.empty()) return;
  m_raw.clear();
  m_raw.append(reinterpret_cast<const char*>(m_lengths.data()), 4 * m_lengths.size());
  m_raw.append(m_data);
  const auto n = static_cast<uint32_t>(m_lengths.size());
  m_lengths.clear();
  m_data.clear();
  if (m_codec == StoreCodec::kZstd && !m_trained) {
    m_held_bytes += m_raw.size();
    m_held.push_back(m_raw);
    m_held_docs.emplace_back(m_n_docs - n, n);
    if (m_held_bytes >= kStoreTrainBytes) train_and_write_held();
    return;
  }
  write_block(m_raw, m_n_docs - n, n);
}

void StoreWriter::train_and_write_held() {
  m_trained = true;
#if defined(MIRKIT_HAVE_ZSTD)
  if (m_held.size() >= kStoreMinTrainBlocks) {
    std::string samples;
    std::vector<size_t> sizes;
    for (const std::string& b : m_held) {
      samples += b;
      sizes.push_back(b.size());
    }
    m_dict.resize(std::min(kStoreDictBytes, m_held_bytes / 8));
    const size_t got = ZDICT_trainFromBuffer(m_dict.data(), m_dict.size(), samples.data(),
                                             sizes.data(), static_cast<unsigned>(sizes.size()));
    if (ZDICT_isError(got)) {
      m_dict.clear();  // too little to learn from: blocks without a dictionary
    } else {
      m_dict.resize(got);
      ZSTD_CDict* cdict = ZSTD_createCDict(m_dict.data(), m_dict.size(), m_level);
      if (cdict == nullptr) throw std::bad_alloc();
      m_cdict = std::shared_ptr<void>(cdict, [](void* p) {
        ZSTD_freeCDict(static_cast<ZSTD_CDict*>(p));
      });
    }
  }
#endif
  for (size_t i = 0; i < m_held.size(); ++i) {
    write_block(m_held[i], m_held_docs[i].first, m_held_docs[i].second);
  }
  m_held.clear();
  m_held.shrink_to_fit();
  m_held_docs.clear();
}

void StoreWriter::write_block(const std::string& raw, uint32_t first, uint32_t n_docs) {
  compress(m_codec, m_level, m_cdict.get(), raw, m_compressed);
  if (m_compressed.size() > UINT32_MAX) core::fail_value("a store block compressed to over 4 GiB");
  std::string header;
  append<uint32_t>(header, n_docs);
  append<uint32_t>(header, static_cast<uint32_t>(raw.size()));
  append<uint32_t>(header, static_cast<uint32_t>(m_compressed.size()));
  uint32_t crc = core::crc32c(reinterpret_cast<const uint8_t*>(header.data()), header.size());
  crc = core::crc32c(reinterpret_cast<const uint8_t*>(m_compressed.data()), m_compressed.size(),
                     crc);
  append<uint32_t>(header, crc);
  m_first_docids.push_back(first);
  m_offsets.push_back(m_file.bytes());
  m_file.write(header.data(), header.size());
  m_file.write(m_compressed.data(), m_compressed.size());
}

uint32_t StoreWriter::finish() {
  if (m_finished) return m_n_docs;
  flush_block();
  if (!m_trained) train_and_write_held();
  m_finished = true;
  const uint64_t dict_offset = m_file.bytes();
  std::string tail = m_dict;
  const uint64_t index_offset = dict_offset + m_dict.size();
  for (size_t b = 0; b < m_first_docids.size(); ++b) {
    append<uint32_t>(tail, m_first_docids[b]);
    append<uint64_t>(tail, m_offsets[b]);
  }
  append<uint32_t>(tail, static_cast<uint32_t>(m_first_docids.size()));
  append<uint32_t>(tail, m_n_docs);
  append<uint64_t>(tail, index_offset);
  append<uint64_t>(tail, dict_offset);
  append<uint32_t>(tail, static_cast<uint32_t>(m_dict.size()));
  append<uint32_t>(tail, core::crc32c(reinterpret_cast<const uint8_t*>(tail.data()), tail.size()));
  tail.append(kMagic, sizeof(kMagic));
  m_file.write(tail.data(), tail.size());
  m_file.close();
  return m_n_docs;
}

StoreReader::StoreReader(const std::string& path, size_t cache_blocks)
    : m_file(path), m_cache_blocks(std::max<size_t>(cache_blocks, 1)) {
  const uint8_t* p = m_file.data();
  const size_t size = m_file.size();
  auto corrupt = [&](const char* why) {
    throw CorruptIndexError(core::message(path, ": ", why, " (the document store is damaged)"));
  };
  if (size < kHeaderBytes + kFooterBytes || std::memcmp(p, kMagic, 8) != 0 ||
      std::memcmp(p + size - 8, kMagic, 8) != 0) {
    corrupt("not a mirkit document store");
  }
  m_codec = static_cast<StoreCodec>(p[8]);
  if (p[8] > static_cast<uint8_t>(StoreCodec::kZstd)) {
    throw CorruptIndexError(core::message(path, ": unknown document store codec id ",
                                          static_cast<int>(p[8])));
  }
  if (!store_codec_available(m_codec)) missing_codec(path, m_codec);
  const uint8_t* footer = p + size - kFooterBytes;
  const uint32_t n_blocks = load<uint32_t>(footer);
  m_n_docs = load<uint32_t>(footer + 4);
  const uint64_t index_offset = load<uint64_t>(footer + 8);
  const uint64_t dict_offset = load<uint64_t>(footer + 16);
  const uint32_t dict_bytes = load<uint32_t>(footer + 24);
  if (index_offset < kHeaderBytes ||
      index_offset + uint64_t{n_blocks} * kIndexEntryBytes + kFooterBytes != size ||
      dict_offset < kHeaderBytes || dict_offset + dict_bytes != index_offset) {
    corrupt("its block index does not fit the file");
  }
  const uint32_t crc = core::crc32c(p + dict_offset, size - dict_offset - 12);
  if (crc != load<uint32_t>(footer + 28)) corrupt("block index checksum mismatch");
  m_dict_bytes = dict_bytes;
  if (dict_bytes != 0) {
#if defined(MIRKIT_HAVE_ZSTD)
    if (m_codec != StoreCodec::kZstd) corrupt("a dictionary for a codec that takes none");
    ZSTD_DDict* ddict = ZSTD_createDDict(p + dict_offset, dict_bytes);
    if (ddict == nullptr) corrupt("its zstd dictionary does not load");
    m_ddict = std::shared_ptr<void>(ddict, [](void* d) {
      ZSTD_freeDDict(static_cast<ZSTD_DDict*>(d));
    });
#else
    corrupt("a dictionary for a codec that takes none");
#endif
  }
  m_first_docids.resize(n_blocks + 1);
  m_offsets.resize(n_blocks + 1);
  for (uint32_t b = 0; b < n_blocks; ++b) {
    m_first_docids[b] = load<uint32_t>(p + index_offset + b * kIndexEntryBytes);
    m_offsets[b] = load<uint64_t>(p + index_offset + b * kIndexEntryBytes + 4);
  }
  m_first_docids[n_blocks] = m_n_docs;
  m_offsets[n_blocks] = dict_offset;
  for (uint32_t b = 0; b < n_blocks; ++b) {
    if (m_first_docids[b] >= m_first_docids[b + 1] ||
        m_offsets[b] + kBlockHeaderBytes > m_offsets[b + 1] || m_offsets[0] != kHeaderBytes ||
        m_first_docids[0] != 0) {
      corrupt("its block index is inconsistent");
    }
  }
  if (n_blocks == 0 && m_n_docs != 0) corrupt("its block index is inconsistent");
}

StoreReader::Block StoreReader::decode_block(uint32_t b) const {
  const uint8_t* h = m_file.data() + m_offsets[b];
  const uint32_t n_docs = load<uint32_t>(h);
  const uint32_t raw_bytes = load<uint32_t>(h + 4);
  const uint32_t stored_bytes = load<uint32_t>(h + 8);
  auto damaged = [&](const char* why) {
    throw CorruptIndexError(core::message(path(), ": block ", b, " of ", n_blocks(),
                                          " (documents ", m_first_docids[b], "..",
                                          m_first_docids[b + 1] - 1, ", byte offset ",
                                          m_offsets[b], "): ", why));
  };
  if (m_offsets[b] + kBlockHeaderBytes + stored_bytes != m_offsets[b + 1]) {
    damaged("its size does not match the block index");
  }
  uint32_t crc = core::crc32c(h, 12);
  crc = core::crc32c(h + kBlockHeaderBytes, stored_bytes, crc);
  if (crc != load<uint32_t>(h + 12)) damaged("checksum mismatch (the block is damaged)");
  if (n_docs != m_first_docids[b + 1] - m_first_docids[b] || raw_bytes < 4ull * n_docs) {
    damaged("its header does not match the block index");
  }
  auto out = std::make_shared<std::string>();
  out->resize(raw_bytes);
  if (!decompress(m_codec, m_ddict.get(), h + kBlockHeaderBytes, stored_bytes, out->data(),
                  raw_bytes)) {
    damaged("it does not decompress");
  }
  uint64_t total = 4ull * n_docs;
  for (uint32_t i = 0; i < n_docs; ++i) total += load<uint32_t>(
      reinterpret_cast<const uint8_t*>(out->data()) + 4 * i);
  if (total != raw_bytes) damaged("its document sizes do not add up");
  return out;
}

StoreReader::Block StoreReader::block(uint32_t b) const {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    auto it = m_cache.find(b);
    if (it != m_cache.end()) {
      m_lru.splice(m_lru.begin(), m_lru, it->second.second);
      return it->second.first;
    }
  }
  Block decoded = decode_block(b);  // outside the lock: readers decode in parallel
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_cache.count(b) == 0) {
    m_lru.push_front(b);
    m_cache.emplace(b, std::make_pair(decoded, m_lru.begin()));
    if (m_cache.size() > m_cache_blocks) {
      m_cache.erase(m_lru.back());
      m_lru.pop_back();
    }
  }
  return decoded;
}

std::string StoreReader::document(uint32_t docid) const {
  if (docid >= m_n_docs) core::fail_index("docid ", docid, " out of range [0, ", m_n_docs, ")");
  const auto it = std::upper_bound(m_first_docids.begin(), m_first_docids.end(), docid);
  const uint32_t b = static_cast<uint32_t>(it - m_first_docids.begin()) - 1;
  const Block data = block(b);
  const auto* lengths = reinterpret_cast<const uint8_t*>(data->data());
  const uint32_t n = m_first_docids[b + 1] - m_first_docids[b];
  const uint32_t i = docid - m_first_docids[b];
  uint64_t start = 4ull * n;
  for (uint32_t k = 0; k < i; ++k) start += load<uint32_t>(lengths + 4 * k);
  return data->substr(start, load<uint32_t>(lengths + 4 * i));
}

void StoreReader::verify() const {
  for (uint32_t b = 0; b < n_blocks(); ++b) decode_block(b);
}

void StoreReader::clear_cache() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_cache.clear();
  m_lru.clear();
}

}  // namespace mirkit::index
