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
//   positions.bin            only in indexes whose manifest says codecs.positions "varint"
//   block_positions_end.u64  (written before "varint-inline"): per block, each posting's tf
//                            positions as varint gaps, and the end offset of each block there
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
// Positions (manifest codecs.positions "varint-inline"): each block's record in freqs.bin is its
// frequencies, then, for each posting in order, its tf positions as varint gaps (the first from
// 0). The frequency codec's decoder says where its bytes end, and block_freqs_end where the
// positions end, so a block's positions need no offsets of their own: on GCIDE the 8-byte
// block_positions_end.u64 entries were 28% of the positions' size (1.4 of 4.9 MB).
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

// Every file of an index, named once: the writers (BlockWriter, IndexBuilder) and the reader use
// these names, and kIndexFiles lists them all with their part and element type (exported to
// Python as mirkit._core.index.FILES).
inline constexpr const char* kTermsFile = "terms.bin";
inline constexpr const char* kTermOffsetsFile = "term_offsets.u64";
inline constexpr const char* kTermDfFile = "term_df.u32";
inline constexpr const char* kTermCfFile = "term_cf.u64";
inline constexpr const char* kTermBlocksFile = "term_blocks.u64";
inline constexpr const char* kTermMaxScoreFile = "term_max_score.f32";
inline constexpr const char* kThresholdFile = "term_thresholds.f32";
inline constexpr const char* kTermHashFile = "term_hash.u64";
inline constexpr const char* kBlockLastDocidFile = "block_last_docid.u32";
inline constexpr const char* kBlockDocsEndFile = "block_docs_end.u64";
inline constexpr const char* kBlockFreqsEndFile = "block_freqs_end.u64";
inline constexpr const char* kBlockMaxScoreFile = "block_max_score.f32";
inline constexpr const char* kDocidsFile = "docids.bin";
inline constexpr const char* kFreqsFile = "freqs.bin";
inline constexpr const char* kPositionsFile = "positions.bin";
inline constexpr const char* kBlockPositionsEndFile = "block_positions_end.u64";
inline constexpr const char* kDocLengthsFile = "doc_lengths.u32";
inline constexpr const char* kDocIdsFile = "doc_ids.bin";
inline constexpr const char* kDocIdOffsetsFile = "doc_id_offsets.u64";
inline constexpr const char* kDocVectorsFile = "doc_vectors.bin";
inline constexpr const char* kDocVectorsEndFile = "doc_vectors_end.u64";
// Word and bigram counts for spelling correction (ngram_counts.hpp).
inline constexpr const char* kLmWordsFile = "lm_words.bin";
inline constexpr const char* kLmWordOffsetsFile = "lm_word_offsets.u64";
inline constexpr const char* kLmWordCountsFile = "lm_word_counts.u64";
inline constexpr const char* kLmBigramsFile = "lm_bigrams.u32";
inline constexpr const char* kLmBigramCountsFile = "lm_bigram_counts.u32";

// When an index has a file: always, or when its manifest (IndexLayout) says it has positions,
// vectors, thresholds, the term hash table or word counts. Every build writes thresholds and
// the term hash table (indexes written before they existed lack them); word counts only with
// BuildOptions::word_counts.
enum class FilePresence : uint8_t {
  kAlways, kPositions, kVectors, kThresholds, kTermHash, kWordCounts
};

struct IndexFile {
  const char* name;
  const char* part;   // what it holds (the parts of mirkit.index.Index.sizes())
  const char* dtype;  // its elements, as numpy names them ("uint8" for byte streams)
  FilePresence presence;
};

inline constexpr IndexFile kIndexFiles[] = {
    {kTermsFile, "lexicon", "uint8", FilePresence::kAlways},
    {kTermOffsetsFile, "lexicon", "uint64", FilePresence::kAlways},
    {kTermHashFile, "lexicon", "uint64", FilePresence::kTermHash},
    {kTermDfFile, "term stats", "uint32", FilePresence::kAlways},
    {kTermCfFile, "term stats", "uint64", FilePresence::kAlways},
    {kTermBlocksFile, "term stats", "uint64", FilePresence::kAlways},
    {kTermMaxScoreFile, "term stats", "float32", FilePresence::kAlways},
    {kThresholdFile, "term stats", "float32", FilePresence::kThresholds},
    {kBlockLastDocidFile, "skips+scores", "uint32", FilePresence::kAlways},
    {kBlockDocsEndFile, "skips+scores", "uint64", FilePresence::kAlways},
    {kBlockFreqsEndFile, "skips+scores", "uint64", FilePresence::kAlways},
    {kBlockMaxScoreFile, "skips+scores", "float32", FilePresence::kAlways},
    {kDocidsFile, "docids", "uint8", FilePresence::kAlways},
    {kFreqsFile, "freqs", "uint8", FilePresence::kAlways},
    {kPositionsFile, "positions", "uint8", FilePresence::kPositions},
    {kBlockPositionsEndFile, "positions", "uint64", FilePresence::kPositions},
    {kDocLengthsFile, "documents", "uint32", FilePresence::kAlways},
    {kDocIdsFile, "documents", "uint8", FilePresence::kAlways},
    {kDocIdOffsetsFile, "documents", "uint64", FilePresence::kAlways},
    {kDocVectorsFile, "vectors", "uint8", FilePresence::kVectors},
    {kDocVectorsEndFile, "vectors", "uint64", FilePresence::kVectors},
    {kLmWordsFile, "word counts", "uint8", FilePresence::kWordCounts},
    {kLmWordOffsetsFile, "word counts", "uint64", FilePresence::kWordCounts},
    {kLmWordCountsFile, "word counts", "uint64", FilePresence::kWordCounts},
    {kLmBigramsFile, "word counts", "uint32", FilePresence::kWordCounts},
    {kLmBigramCountsFile, "word counts", "uint32", FilePresence::kWordCounts},
};

// Threshold priming: the ranks whose scores term_thresholds.f32 holds, per term in this order.
inline constexpr uint32_t kThresholdRanks[] = {1, 10, 100, 1000};
inline constexpr size_t kNumThresholdRanks = std::size(kThresholdRanks);

enum class FreqCoding { kMinusOne, kPlain, kPrefixSum };

inline FreqCoding freq_coding(const codecs::Codec& codec) {
  if (codec.requires_sorted) return FreqCoding::kPrefixSum;
  return codec.accepts_zero ? FreqCoding::kMinusOne : FreqCoding::kPlain;
}

}  // namespace mirkit::index
