// The on-disk layout of a mirkit index (format version 1). An index is a directory:
//
//   manifest.json            written last (by mirkit/index.py): format version, analyzer, codecs,
//                            BM25 parameters, statistics, and the size + CRC-32C of every file
//   terms.bin                index terms, UTF-8, sorted bytewise and concatenated
//   term_offsets.u64         n_terms + 1 offsets into terms.bin
//   term_df.u32              document frequency per term
//   term_cf.u64              collection frequency (total occurrences) per term
//   term_blocks.u64          n_terms + 1: term t owns blocks [term_blocks[t], term_blocks[t+1])
//   term_max_score.f32       max BM25 score of the term over its postings (default parameters)
//   term_thresholds.f32      per term, for each r of kThresholdRanks (1, 10, 100, 1000), a lower
//                            bound of the r-th largest BM25 score among its postings (default
//                            parameters; 0 if df < r): at least r documents score that much,
//                            so the top-r threshold of any query holding the term is at least
//                            that (every BM25 term score is >= 0). Absent in indexes written
//                            before it existed (queries then start with no threshold).
//   term_hash.u64            the terms' hash table (term_hash.hpp: slots of (hash tag, term id),
//                            StringMap::hash, linear probing); absent in older indexes (a
//                            reader then builds it in memory on the first lookup)
//   block_last_docid.u32     last docid of each block (the skip list)
//   block_docs_end.u64       end offset of each block in docids.bin (start = previous end)
//   block_freqs_end.u64      end offset of each block in freqs.bin
//   block_max_score.f32      max BM25 score inside each block (default parameters)
//   docids.bin, freqs.bin    the compressed blocks, docids and frequencies in separate streams
//   doc_lengths.u32          indexed tokens per document
//   doc_ids.bin              external document ids, UTF-8, concatenated in internal docid order
//   doc_id_offsets.u64       n_docs + 1 offsets into doc_ids.bin
//   positions.bin            optional: per block, for each posting, its tf positions as varint
//   block_positions_end.u64  optional: end offset of each block in positions.bin
//   doc_vectors.bin          optional (a "direct index", as Terrier calls it): per document, in
//                            docid order, its distinct terms: varint n, then the n term ids
//                            (ascending) with the elias_fano codec, then the n term
//                            frequencies with elias_gamma
//   doc_vectors_end.u64      optional: end offset of each document's record in doc_vectors.bin
//
// Document vectors are short (GCIDE: 19 distinct terms a document) sets over a large universe
// (all term ids), read one document at a time. Elias-Fano stores such a set in about
// 2 + log2(n_terms / n) bits a term with no block padding; frequencies are mostly 1, one bit in
// gamma. On GCIDE that is 2.1 bytes a (term, tf) pair against 3.0 with vbyte (d-gaps of
// 10^3-10^4 take two bytes), 3.4 with stream-vbyte and 2.95 with bp128 (whose blocks are mostly
// padding); decoding speed matters little, as feedback reads ten documents a query.
// The record is checked as it is decoded: term ids strictly increasing and below n_terms, every
// byte used, and the frequencies summing to the document's length in doc_lengths.u32.
//
// Integers are little-endian. Each block holds kBlockSize postings (the last block of a term
// fewer). Block docids are stored relative to base = previous block's last docid + 1 (0 for a
// term's first block): with the codec's sorted variant (d-gaps, prefix sum fused into decoding)
// or, for codecs whose plain form needs sorted input (Elias-Fano), as the values themselves.
// Frequencies are stored as tf - 1 when the codec can store 0, as tf when it cannot (Elias
// gamma/delta), and as running sums of tf when it needs sorted input. Scores are float32 rounded
// up, so they are upper bounds of the double-precision score.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>

#include "codecs/codec.hpp"

namespace mirkit::index {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kBlockSize = 128;
inline constexpr uint32_t kEndDocid = UINT32_MAX;  // a cursor past its last posting
inline constexpr uint32_t kMaxDocs = UINT32_MAX - 1;

// A damaged or inconsistent index file; the message names the file. Maps to
// mirkit.index.IndexCorruptError (a ValueError).
class CorruptIndexError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The files of the postings, lexicon and block index (written by BlockWriter in this order);
// the last two exist only in indexes with positions.
inline constexpr const char* kPostingFiles[] = {
    "terms.bin",           "term_offsets.u64",    "term_df.u32",          "term_cf.u64",
    "term_blocks.u64",     "term_max_score.f32",  "block_last_docid.u32", "block_docs_end.u64",
    "block_freqs_end.u64", "block_max_score.f32", "docids.bin",           "freqs.bin",
    "positions.bin",       "block_positions_end.u64"};
inline constexpr size_t kPositionFiles = 2;
// Threshold priming: the ranks whose scores term_thresholds.f32 holds, per term in this order.
inline constexpr uint32_t kThresholdRanks[] = {1, 10, 100, 1000};
inline constexpr size_t kNumThresholdRanks = std::size(kThresholdRanks);
inline constexpr const char* kThresholdFile = "term_thresholds.f32";
inline constexpr const char* kTermHashFile = "term_hash.u64";
// Per-document files (written by IndexBuilder::finish).
inline constexpr const char* kDocumentFiles[] = {"doc_lengths.u32", "doc_ids.bin",
                                                  "doc_id_offsets.u64"};
// Optional document vectors (written by IndexBuilder::finish after the postings).
inline constexpr const char* kVectorFiles[] = {"doc_vectors.bin", "doc_vectors_end.u64"};

enum class FreqCoding { kMinusOne, kPlain, kPrefixSum };

inline FreqCoding freq_coding(const codecs::Codec& codec) {
  if (codec.requires_sorted) return FreqCoding::kPrefixSum;
  return codec.accepts_zero ? FreqCoding::kMinusOne : FreqCoding::kPlain;
}

}  // namespace mirkit::index
