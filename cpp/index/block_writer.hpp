// The block writer: postings in, the posting files of an index out (format.hpp: the lexicon, the
// term statistics, the skip list with its BM25 block maxima, the docid, frequency and position
// streams, the thresholds and the term hash table). It takes postings, not text: IndexBuilder
// feeds it the merged runs, and any other source of postings (CIFF import, impact indexes, a
// segment merge) can feed it the same way and get the same files.
//
// Terms come in strictly increasing bytewise order, each with its document frequency, then its
// postings in strictly increasing docid order. The BM25 bounds are computed from the document
// lengths the caller passes (the documents' files are the caller's to write).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codecs/codec.hpp"
#include "core/files.hpp"
#include "index/bm25.hpp"
#include "index/format.hpp"

namespace mirkit::index {

// A file as written: its name in the index directory, size and CRC-32C (for the manifest).
struct FileInfo {
  std::string name;
  uint64_t bytes;
  uint32_t crc32c;
};

class BlockWriter {
 public:
  // Creates the files in `directory`. doc_lengths[0..n_docs) (indexed tokens per document) must
  // outlive the writer; total_tokens is their sum. Positions are written when `positions`.
  BlockWriter(const std::string& directory, const codecs::Codec& docid_codec,
              const codecs::Codec& freq_codec, bool positions, const Bm25Params& bm25,
              const uint32_t* doc_lengths, size_t n_docs, uint64_t total_tokens);
  BlockWriter(const BlockWriter&) = delete;
  BlockWriter& operator=(const BlockWriter&) = delete;

  // Starts a term that has df postings (1 <= df <= n_docs). Throws std::invalid_argument when
  // the term does not follow the previous one or df is out of range.
  void begin_term(std::string_view term, uint64_t df);
  // One posting of the current term: tf >= 1 and, with positions, its tf ascending positions.
  // Throws std::invalid_argument when docid is out of range or not above the previous one.
  void add(uint32_t docid, uint32_t tf, const uint32_t* positions);
  // Ends the term; throws std::invalid_argument unless it got the df postings it announced.
  void end_term();
  // Writes the term hash table, closes every file and returns them in a fixed order.
  std::vector<FileInfo> close();

  uint64_t n_terms() const { return m_n_terms; }
  uint64_t n_postings() const { return m_n_postings; }
  uint64_t n_blocks() const { return m_n_blocks; }

 private:
  void keep_top(double score);
  void flush_block();

  const bool m_with_positions;
  const Bm25Params m_bm25;
  const codecs::Codec& m_docs_codec;
  const codecs::Codec& m_freqs_codec;
  const FreqCoding m_freq_coding;
  const uint32_t* m_doc_lengths;
  const size_t m_n_docs;
  const double m_avg_length;

  // The files, one member each, named after format.hpp's constants.
  core::FileWriter m_terms, m_term_offsets, m_term_df, m_term_cf, m_term_blocks;
  core::FileWriter m_term_max_score, m_block_last_docid, m_block_docs_end, m_block_freqs_end;
  core::FileWriter m_block_max_score, m_docids, m_freqs, m_thresholds, m_term_hash;
  std::unique_ptr<core::FileWriter> m_positions, m_block_positions_end;  // with positions only

  std::vector<uint64_t> m_term_hashes;  // of every term so far, for term_hash.u64
  std::vector<double> m_top;            // keep_top's heap
  std::vector<uint8_t> m_scratch, m_position_bytes;
  std::string m_last_term;
  uint32_t m_block_docids[kBlockSize], m_block_tfs[kBlockSize];
  uint32_t m_n = 0;  // postings in the current block
  int64_t m_prev_last = -1;  // the term's last docid before the current block (-1: none)
  double m_idf = 0, m_term_max = 0;
  uint64_t m_df = 0, m_term_postings = 0, m_cf = 0;
  uint64_t m_n_blocks = 0, m_n_terms = 0, m_n_postings = 0;
};

}  // namespace mirkit::index
