// The block writer: postings in, the posting files of an index out (format.hpp: the lexicon, the
// term statistics, the skip list with its BM25 block maxima, the docid, frequency and position
// streams, the thresholds and the term hash table). It takes postings, not text: IndexBuilder
// feeds it the merged runs, and any other source of postings (CIFF import, impact indexes, a
// segment merge) can feed it the same way and get the same files.
//
// Terms come in strictly increasing bytewise order, each with its document frequency, then its
// postings in strictly increasing docid order. The BM25 bounds are computed from the document
// lengths the caller passes (the documents' files are the caller's to write).
//
// A commit on several threads cuts the term space into ranges: each range is encoded by its own
// BlockWriter into memory (the constructor without a directory), with offsets counted from the
// range's start, and the ranges are then appended, in term order, to the writer of the files
// (append), which shifts those offsets. Blocks never span terms, so the files are byte-identical
// to those of one writer fed every term.
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

// One output of a BlockWriter: a file, or memory (a term range's writer).
class OutStream {
 public:
  OutStream() = default;  // memory
  void open(const std::string& path) { m_file = std::make_unique<core::FileWriter>(path); }
  void write(const void* data, size_t n) {
    if (m_file) {
      m_file->write(data, n);
    } else {
      const uint8_t* p = static_cast<const uint8_t*>(data);
      m_memory.insert(m_memory.end(), p, p + n);
    }
  }
  template <class T>
  void put(const T& value) {
    write(&value, sizeof(T));
  }
  uint64_t bytes() const { return m_file ? m_file->bytes() : m_memory.size(); }
  core::FileWriter* file() const { return m_file.get(); }
  const std::vector<uint8_t>& memory() const { return m_memory; }
  void release() { std::vector<uint8_t>().swap(m_memory); }

 private:
  std::unique_ptr<core::FileWriter> m_file;
  std::vector<uint8_t> m_memory;
};

class BlockWriter {
 public:
  // Creates the files in `directory`. doc_lengths[0..n_docs) (indexed tokens per document) must
  // outlive the writer; total_tokens is their sum. Positions are written when `positions`.
  BlockWriter(const std::string& directory, const codecs::Codec& docid_codec,
              const codecs::Codec& freq_codec, bool positions, const Bm25Params& bm25,
              const uint32_t* doc_lengths, size_t n_docs, uint64_t total_tokens);
  // A writer of one term range into memory, for append() (same parameters, no files).
  BlockWriter(const codecs::Codec& docid_codec, const codecs::Codec& freq_codec, bool positions,
              const Bm25Params& bm25, const uint32_t* doc_lengths, size_t n_docs,
              uint64_t total_tokens);
  // A memory writer with this writer's parameters.
  std::unique_ptr<BlockWriter> range_writer() const {
    return std::make_unique<BlockWriter>(m_docs_codec, m_freqs_codec, m_with_positions, m_bm25,
                                         m_doc_lengths, m_n_docs, m_total_tokens);
  }
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
  // Appends the terms of `range`, a memory writer of the same parameters whose terms all follow
  // this writer's, as if they had been written here; range's memory is given back. Throws
  // std::invalid_argument when range's first term does not follow this writer's last, and
  // std::logic_error when range is not a memory writer or has an unfinished term.
  void append(BlockWriter& range);
  // Writes the term hash table, closes (fsyncs) every file, `threads` at a time, and returns
  // them in a fixed order (a file writer only).
  std::vector<FileInfo> close(unsigned threads = 1);

  // Bytes held in memory by the streams and term hashes (a memory writer's whole output).
  size_t memory() const;
  uint64_t n_terms() const { return m_n_terms; }
  uint64_t n_postings() const { return m_n_postings; }
  // Bytes of positions written, inline in freqs.bin (format.hpp).
  uint64_t position_bytes() const { return m_position_bytes_total; }
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
  const uint64_t m_total_tokens;
  const double m_avg_length;

  // The files, one member each, named after format.hpp's constants. A memory writer leaves out
  // the leading 0 of term_offsets and term_blocks, so that each of their values is an end.
  bool m_in_memory;
  OutStream m_terms, m_term_offsets, m_term_df, m_term_cf, m_term_blocks;
  OutStream m_term_max_score, m_block_last_docid, m_block_docs_end, m_block_freqs_end;
  OutStream m_block_max_score, m_docids, m_freqs, m_thresholds, m_term_hash;

  std::vector<uint64_t> m_term_hashes;  // of every term so far, for term_hash.u64
  std::vector<double> m_top;            // keep_top's heap
  std::vector<uint8_t> m_scratch, m_position_bytes;
  std::string m_first_term, m_last_term;
  bool m_in_term = false;
  uint32_t m_block_docids[kBlockSize], m_block_tfs[kBlockSize];
  uint32_t m_n = 0;  // postings in the current block
  int64_t m_prev_last = -1;  // the term's last docid before the current block (-1: none)
  double m_idf = 0, m_term_max = 0;
  uint64_t m_df = 0, m_term_postings = 0, m_cf = 0;
  uint64_t m_n_blocks = 0, m_n_terms = 0, m_n_postings = 0, m_position_bytes_total = 0;
};

}  // namespace mirkit::index
