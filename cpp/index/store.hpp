// The document store of a segment: each document's stored text, in order of docid, packed into
// blocks of about kStoreBlockBytes, each compressed on its own and checksummed, as tantivy's doc
// store and Lucene's stored fields do. Fetching a document decompresses one block; a small cache
// of decompressed blocks serves hits that share a block (the top ten of a query often do).
// With zstd, a dictionary trained on the store's first blocks (ZDICT_trainFromBuffer) lets
// small blocks compress nearly as well as large ones without it, so a fetch decompresses 2 KB,
// not 16 (2 KB rather than 4: random fetches a third faster for 4% more bytes on GCIDE).
//
// File store.bin (little-endian):
//   header   "MKSTORE1", u8 codec (StoreCodec), u8 level, u16 0, u32 block_bytes
//   blocks   u32 n_docs, u32 raw_bytes, u32 stored_bytes, u32 crc32c (of the 12 bytes before it
//            and the payload), payload: the compressed block, which decompresses to
//            u32 doc_bytes[n_docs] followed by the documents' bytes
//   dict     the zstd dictionary of every block (dict_bytes, 0 without one)
//   index    per block: u32 first_docid, u64 offset (of its header in the file)
//   footer   u32 n_blocks, u32 n_docs, u64 index_offset, u64 dict_offset, u32 dict_bytes,
//            u32 crc32c (of the dictionary, the index and the footer before it), "MKSTORE1"
// The codec is recorded in the file, so a build opens what another wrote when it has that codec
// and otherwise fails naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/files.hpp"

namespace mirkit::index {

inline constexpr const char* kStoreFile = "store.bin";
inline constexpr uint32_t kStoreBlockBytes = 2 * 1024;
// Raw bytes of the first blocks a zstd dictionary is trained on (the blocks wait for it), its
// size, and the fewest blocks worth one (smaller stores have none).
inline constexpr size_t kStoreTrainBytes = 1 << 20;
inline constexpr size_t kStoreDictBytes = 32 * 1024;
inline constexpr size_t kStoreMinTrainBlocks = 16;

enum class StoreCodec : uint8_t { kNone = 0, kZlib = 1, kZstd = 2 };

// "none", "zlib", "zstd"; throws std::invalid_argument for an unknown name.
const char* store_codec_name(StoreCodec codec);
StoreCodec store_codec_from_name(std::string_view name);
// Whether this build can read and write codec (kNone always; zlib and zstd when CMake found them).
bool store_codec_available(StoreCodec codec);
// The codecs of this build, best first (zstd, zlib, none).
std::vector<StoreCodec> store_codecs();
// Makes this process act as a build without codec (zstd or zlib) until re-enabled: the tests'
// way to check the fallback and the error naming a missing codec without a second build.
void disable_store_codec(StoreCodec codec, bool disabled);

class StoreWriter {
 public:
  // level 0 is the codec's default (zstd 3, zlib 6). Throws std::invalid_argument for a codec
  // this build lacks.
  StoreWriter(const std::string& path, StoreCodec codec, int level = 0,
              uint32_t block_bytes = kStoreBlockBytes);
  void add(std::string_view document);
  // Writes the last block, the index and the footer; fsyncs and closes. Returns the documents.
  uint32_t finish();
  uint64_t bytes() const { return m_file.bytes(); }
  uint32_t crc() const { return m_file.crc(); }
  uint32_t dict_bytes() const { return static_cast<uint32_t>(m_dict.size()); }

 private:
  void flush_block();
  void write_block(const std::string& raw, uint32_t first, uint32_t n_docs);
  void train_and_write_held();

  core::FileWriter m_file;
  StoreCodec m_codec;
  int m_level;
  uint32_t m_block_bytes;
  std::vector<uint32_t> m_lengths;  // of the documents of the open block
  std::string m_data;               // their bytes
  std::string m_raw, m_compressed;  // scratch
  std::vector<uint32_t> m_first_docids;
  std::vector<uint64_t> m_offsets;
  uint32_t m_n_docs = 0;
  bool m_finished = false;
  // Blocks held until the dictionary is trained: raw bytes, first docid, documents.
  std::vector<std::string> m_held;
  std::vector<std::pair<uint32_t, uint32_t>> m_held_docs;
  size_t m_held_bytes = 0;
  bool m_trained = false;
  std::string m_dict;
  std::shared_ptr<void> m_cdict;  // ZSTD_CDict of m_dict
};

class StoreReader {
 public:
  // Maps path and checks its header and footer (CorruptIndexError naming the file); blocks are
  // checked by their CRC-32C when first decompressed. Thread-safe: the block cache is locked.
  explicit StoreReader(const std::string& path, size_t cache_blocks = 64);

  uint32_t n_docs() const { return m_n_docs; }
  uint32_t n_blocks() const { return static_cast<uint32_t>(m_first_docids.size() - 1); }
  StoreCodec codec() const { return m_codec; }
  uint32_t dict_bytes() const { return m_dict_bytes; }
  const std::string& path() const { return m_file.path(); }

  // The document's bytes (std::out_of_range for docid >= n_docs; CorruptIndexError naming the
  // file and the block for a damaged block).
  std::string document(uint32_t docid) const;
  // Decompresses and checks every block (CorruptIndexError for the first damaged one).
  void verify() const;
  void clear_cache() const;

 private:
  using Block = std::shared_ptr<const std::string>;
  Block block(uint32_t b) const;
  Block decode_block(uint32_t b) const;

  core::MappedFile m_file;
  StoreCodec m_codec;
  std::shared_ptr<void> m_ddict;  // ZSTD_DDict of the store's dictionary, if it has one
  uint32_t m_dict_bytes = 0;
  uint32_t m_n_docs = 0;
  std::vector<uint32_t> m_first_docids;  // n_blocks + 1 (the last is n_docs)
  std::vector<uint64_t> m_offsets;       // n_blocks + 1 (the last is the index's offset)
  size_t m_cache_blocks;
  mutable std::mutex m_mutex;
  mutable std::list<uint32_t> m_lru;  // most recent first
  mutable std::unordered_map<uint32_t, std::pair<Block, std::list<uint32_t>::iterator>> m_cache;
};

}  // namespace mirkit::index
