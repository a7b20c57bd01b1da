// Read side of the index: every file memory-mapped, the structure validated once on open (sizes,
// offsets, order), block contents validated as they are decoded, and the term hash table
// validated on the first term lookup (opening a segment to merge or append reads terms in
// order and never looks one up: the table's check was half of an open), so a corrupt or
// hostile index raises std::invalid_argument and never reads out of bounds. Readers are immutable after
// construction and safe to share between threads; cursors are per thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codecs/codec.hpp"
#include "core/files.hpp"
#include "index/format.hpp"
#include "index/term_hash.hpp"

namespace mirkit::index {

// What the manifest says; the reader checks the files against it.
struct IndexLayout {
  uint64_t n_docs = 0;
  uint64_t n_terms = 0;
  uint64_t n_blocks = 0;
  std::string docid_codec;
  std::string freq_codec;
  bool positions = false;
  bool vectors = false;
  bool thresholds = false;  // term_thresholds.f32 (indexes written before it have none)
  bool term_hash = false;   // term_hash.u64 (the same)
  // With positions: inline in freqs.bin after each block's frequencies (manifest codecs.positions
  // "varint-inline"), or in positions.bin with block_positions_end.u64 ("varint", older indexes).
  bool positions_inline = true;
};

// Whether an index of this layout has file f.
inline bool has_file(const IndexLayout& layout, const IndexFile& f) {
  switch (f.presence) {
    case FilePresence::kAlways: return true;
    case FilePresence::kPositions: return layout.positions && !layout.positions_inline;
    case FilePresence::kVectors: return layout.vectors;
    case FilePresence::kThresholds: return layout.thresholds;
    case FilePresence::kTermHash: return layout.term_hash;
  }
  return false;
}

template <class T>
struct Array {
  const T* data = nullptr;
  size_t size = 0;
  const T& operator[](size_t i) const { return data[i]; }
};

class IndexReader;

// A posting list held in memory, blocked as the index's are (kBlockSize postings a block):
// what a phrase's matches become (query/phrase.hpp), so that the query algorithms run over it
// with the cursor they run over a term. block_last[b] is the last docid of block b.
struct MemoryPostings {
  std::vector<uint32_t> docids, freqs, block_last;
  // block_last from docids (call after filling docids and freqs).
  void finish_blocks() {
    block_last.clear();
    for (size_t i = kBlockSize - 1; i < docids.size(); i += kBlockSize) block_last.push_back(docids[i]);
    if (docids.size() % kBlockSize) block_last.push_back(docids.back());
  }
};

// A forward cursor over one term's postings (the interface of the query algorithms: docid(),
// next(), next_geq(), freq(), block and term maximum scores). Blocks are decoded lazily, the
// frequencies of a block only when freq() is asked.
class PostingCursor {
 public:
  PostingCursor(const IndexReader& index, uint32_t term);
  // A cursor over a list in memory (which outlives it); it has no positions, and its block
  // and list maxima are 0 (the query engine keeps its own bounds).
  explicit PostingCursor(const MemoryPostings& list);

  uint32_t docid() const { return m_docid; }  // kEndDocid when exhausted
  void next() {
    if (++m_pos < m_n) {
      m_docid = m_docs[m_pos];
    } else {
      load_block(m_block + 1);
    }
  }
  // Moves to the first posting with docid >= target (never backwards). Inline while the target
  // is in the decoded block, which is most calls of the pruning algorithms.
  void next_geq(uint32_t target) {
    if (target <= m_docid) return;  // also covers an exhausted cursor (kEndDocid)
    if (target > m_block_last) {
      load_block_geq(target);
      if (m_docid == kEndDocid) return;
    }
    while (m_docs[m_pos] < target) ++m_pos;  // stops: the block's last docid is >= target
    m_docid = m_docs[m_pos];
  }
  // The docid `ahead` postings further on within the decoded block (the block's last if fewer
  // are left); only on a posting (docid() != kEndDocid).
  uint32_t docid_ahead(uint32_t ahead) const { return m_docs[std::min(m_pos + ahead, m_n - 1)]; }
  uint32_t freq() {
    if (!m_freqs_ready) decode_freqs();
    return m_freqs[m_pos];
  }
  // The decoded block as a whole (bulk scoring): its postings are block_docids()[0..block_length())
  // with frequencies block_freqs(), the current one at position(); decoded_block() identifies
  // the block within the index. run_length(stop) counts the postings from the current one on
  // before docid `stop`; skip(count) moves past count of them (count <= run_length), possibly
  // onto the next block. Only on a posting (docid() != kEndDocid).
  uint64_t decoded_block() const { return m_block; }
  uint32_t position() const { return m_pos; }
  uint32_t block_length() const { return m_n; }
  const uint32_t* block_docids() const { return m_docs; }
  const uint32_t* block_freqs() {
    if (!m_freqs_ready) decode_freqs();
    return m_freqs;
  }
  uint32_t run_length(uint32_t stop) const {
    // Galloping, then binary search: runs are often a few postings, but can span the block.
    if (m_pos >= m_n || m_docs[m_pos] >= stop) return 0;
    uint32_t lo = m_pos, hi = m_pos + 1, step = 1;  // m_docs[lo] < stop
    while (hi < m_n && m_docs[hi] < stop) {
      lo = hi;
      step *= 2;
      hi = std::min(m_n, lo + step);
    }
    while (hi - lo > 1) {  // m_docs[lo] < stop, and hi == m_n or m_docs[hi] >= stop
      const uint32_t mid = lo + (hi - lo) / 2;
      (m_docs[mid] < stop ? lo : hi) = mid;
    }
    return hi - m_pos;
  }
  void skip(uint32_t count) {
    m_pos += count;
    if (m_pos < m_n) {
      m_docid = m_docs[m_pos];
    } else {
      load_block(m_block + 1);
    }
  }
  // Skip list without decoding (block-max WAND's shallow move): the block that may hold target.
  void shallow_next_geq(uint32_t target) {
    if (target > m_shallow_last) shallow_advance(target);
  }
  float block_max_score() const;  // of the shallow block (the current block after next_geq)
  // Last docid of the shallow block; kEndDocid past the end of the list.
  uint32_t block_last_docid() const { return m_shallow_last; }
  float max_score() const;
  uint32_t size() const { return m_df; }
  uint32_t term() const { return m_term; }
  // Index of the shallow block within the term's blocks (for per-block bounds kept elsewhere).
  uint64_t block_index() const { return m_shallow - m_first_block; }
  // Postings decoded so far (docid blocks, whole blocks counted), for the query counters.
  uint64_t postings_decoded() const { return m_decoded; }
  // Positions of the current posting (empty if the index has none). A block stores the
  // positions of its postings one after the other, as varint gaps (the first of a posting from
  // 0): the first call on a block decodes all of them at once with the vbyte codec (SIMD) and
  // sums each posting's gaps, so the positions of any posting of the block are then a view,
  // and reading a phrase's candidates never walks a block's bytes twice.
  void positions(std::vector<uint32_t>& out);
  // The same as a view, valid until the cursor leaves its block: *data, returns the count.
  uint32_t positions_view(const uint32_t*& data);

 private:
  void load_block(uint64_t block);
  void load_block_geq(uint32_t target);  // loads the first block whose last docid >= target
  void shallow_advance(uint32_t target);
  void set_shallow(uint64_t block);
  void decode_freqs();

  void decode_positions();  // the decoded block's positions, into m_block_positions

  const IndexReader* m_index;    // null for a MemoryPostings cursor
  const MemoryPostings* m_list = nullptr;
  const uint32_t* m_lasts;       // last docid of each block (index.block_last_docid or list's)
  // Positions of block m_positions_block: posting i's are m_block_positions[m_positions_start[i],
  // m_positions_start[i + 1]).
  // (as gaps until m_positions_summed[i]).
  uint64_t m_positions_block = UINT64_MAX;
  std::vector<uint32_t> m_block_positions;
  std::vector<uint32_t> m_positions_start;
  bool m_positions_summed[kBlockSize];
  uint32_t m_term;
  uint32_t m_df;
  uint64_t m_first_block, m_end_block;
  uint64_t m_block;          // decoded block
  uint64_t m_shallow;        // block of the skip-list position
  uint32_t m_pos = 0, m_n = 0;
  uint32_t m_docid = kEndDocid;
  uint32_t m_block_last = kEndDocid;    // last docid of the decoded block
  uint32_t m_shallow_last = kEndDocid;  // last docid of the shallow block (kEndDocid: past the end)
  bool m_freqs_ready = false;
  size_t m_freq_bytes = 0;  // of the decoded block's record in freqs.bin
  uint64_t m_decoded = 0;
  alignas(64) uint32_t m_docs[kBlockSize];
  alignas(64) uint32_t m_freqs[kBlockSize];
};

class IndexReader {
 public:
  IndexReader(const std::string& directory, const IndexLayout& layout);

  const IndexLayout& layout() const { return m_layout; }
  uint64_t n_docs() const { return m_layout.n_docs; }
  uint64_t n_terms() const { return m_layout.n_terms; }

  std::string_view term(uint32_t t) const;
  // Term id by hash lookup, -1 when absent (a binary search over the sorted terms misses the
  // cache at every step on a cold index). The table is the index's term_hash.u64, or for an
  // index without one, built in memory on the first call.
  int64_t find_term(std::string_view term) const;
  // find_term of each term into out[0..terms.size()), their cache misses overlapped: the home slots of all
  // of them are fetched first, then the offsets and bytes of the terms those slots name (a
  // query's lookups on a cold index are otherwise three misses in a row, term after term).
  void find_terms(const std::vector<std::string>& terms, int64_t* out) const;
  // [first, last) term ids starting with prefix.
  std::pair<uint32_t, uint32_t> prefix_range(std::string_view prefix) const;
  std::string_view doc_id(uint32_t docid) const;
  // Internal docid of each external id into out[0..ids.size()), -1 when absent: one pass over
  // the stored ids against a hash set of the asked ones (no table of all ids is built, so
  // asking about a few ids of a large index costs a scan of its id bytes, nothing more).
  void find_doc_ids(const std::vector<std::string>& ids, int64_t* out) const;

  PostingCursor cursor(uint32_t term) const { return PostingCursor(*this, term); }
  // Cache hints for the terms of a query, each step issued for all of its terms before any is
  // opened, so that their misses overlap instead of queueing one after another (on an index
  // that is not in cache they are most of a short query's time): prefetch_term for the
  // per-term arrays, then prefetch_skips for the skip entries of a term's first block, then
  // prefetch_postings for that block's bytes.
  // Out-of-range ids are ignored.
  void prefetch_term(uint32_t term) const;
  void prefetch_skips(uint32_t term) const;
  void prefetch_postings(uint32_t term) const;  // the first block's docids and frequencies
  // All postings of a term, decoded (for inspection and tests).
  void postings(uint32_t term, std::vector<uint32_t>& docids, std::vector<uint32_t>& freqs) const;
  // Appends document d's distinct term ids (ascending) and their frequencies to terms and tfs;
  // returns how many. std::invalid_argument if the index has no vectors, std::out_of_range for
  // a bad docid, CorruptIndexError for a damaged record.
  size_t doc_vector(uint32_t d, std::vector<uint32_t>& terms, std::vector<uint32_t>& tfs) const;

  Array<uint32_t> df, block_last_docid, doc_lengths;
  Array<uint64_t> cf, term_blocks, block_docs_end, block_freqs_end, block_positions_end;
  Array<uint64_t> term_offsets, doc_id_offsets, doc_vectors_end;
  Array<float> term_max_score, block_max_score;
  Array<float> term_thresholds;  // kNumThresholdRanks per term; empty without layout.thresholds

  // Block decoding (validates the block); out must hold kBlockSize values.
  uint32_t decode_docids(uint32_t term, uint64_t block, uint32_t* out) const;
  // Returns the bytes the frequencies take (with inline positions, theirs follow).
  size_t decode_freqs(uint64_t block, uint32_t n, uint32_t* out) const;
  const core::MappedFile& file(const char* name) const;

 private:
  void validate() const;
  int64_t probe(std::string_view term, uint64_t hash) const;  // find_term with term's hash
  // Offset where block b starts in a stream whose block end offsets are `ends`.
  static uint64_t block_start(const Array<uint64_t>& ends, uint64_t b) {
    return b == 0 ? 0 : ends[b - 1];
  }
  void check_thresholds(uint64_t t) const;
  void check_term_hash() const;
  // m_slots ready: mapped and checked (check_term_hash) on the first lookup, or built once for
  // older indexes. A failed check throws again at every later lookup.
  void ensure_lexicon() const;
  void build_lexicon() const;
  template <class T>
  Array<T> map_array(const char* name, uint64_t count);

  std::string m_dir;
  IndexLayout m_layout;
  std::vector<std::pair<std::string, core::MappedFile>> m_files;
  const codecs::Codec* m_docid_codec;
  const codecs::Codec* m_freq_codec;
  FreqCoding m_freq_coding;
  const char* m_terms = nullptr;
  const uint8_t* m_docids = nullptr;
  const uint8_t* m_freqs = nullptr;
  const uint8_t* m_positions = nullptr;
  const uint8_t* m_vectors = nullptr;
  const char* m_doc_ids = nullptr;
  // find_term's table (term_hash.hpp): mapped (checked on first use), or built into
  // m_built_slots on first use.
  mutable std::once_flag m_lexicon_built;
  mutable std::vector<TermSlot> m_built_slots;
  mutable Array<TermSlot> m_slots;

  friend class PostingCursor;
};

}  // namespace mirkit::index
