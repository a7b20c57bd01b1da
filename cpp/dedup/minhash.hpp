// Near-duplicate detection: MinHash signatures with LSH banding (Broder 1997; Indyk & Motwani
// 1998) and SimHash (Charikar 2002), over word or character shingles.
//
// Tokens: maximal runs of word bytes, where a word byte is an ASCII letter or digit (letters
// lowercased) or any byte >= 0x80 (so UTF-8 sequences stay inside words); every other byte
// separates. Character shingles are taken from the normalized text: the tokens joined by one
// space, cut into windows of `ngram` code points. Word shingles are windows of `ngram` tokens.
// A text with at least one token but fewer than `ngram` units is one shingle, the whole of it.
//
// Hashes (the pure-Python reference in tests/reference/dedup_reference.py computes the same):
//   fmix64          MurmurHash3's 64-bit finalizer;
//   bytes_hash(b)   h = seed ^ (len * kGolden); per 8-byte little-endian chunk w (the last one
//                   zero-padded): h = fmix64(h ^ w); an empty string hashes to fmix64(h);
//   token t         bytes_hash(lowercased token bytes);
//   word shingle    s = t_0, then s = fmix64(s * kGolden + t_j) for the next tokens (mod 2^64);
//   char shingle    bytes_hash(UTF-8 bytes of the window).
// MinHash permutations (Kirsch & Mitzenmacher's double hashing, applied to MinHash): with
// h1 = s mod 2^32 and h2 = s >> 32, slot i of the signature is min over shingles of
// (h1 + i * h2) mod 2^32. Each slot is then a fully random hash of the shingle (h1 is uniform
// whatever i * h2 is), so every slot estimates the Jaccard similarity J without bias; slots i, j
// with odd i - j see independent hash pairs (the map (h1, h2) -> (h_i, h_j) is invertible), so
// the mean of k slots has the binomial error sqrt(J (1 - J) / k) of k independent
// permutations (tests/test_dedup.py checks it on real text). Per shingle a SIMD lane costs one
// add and one min, where the a * x + b mod p family costs a 64-bit multiply and a reduction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/cpu_features.hpp"

namespace mirkit::dedup {

inline constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

inline uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

uint64_t bytes_hash(const uint8_t* p, size_t n, uint64_t seed);

enum class Shingle { kWord, kChar };

struct ShingleOptions {
  Shingle shingle = Shingle::kWord;
  size_t ngram = 1;
  uint64_t seed = 0;
};

// The shingle hashes of one text, in order, with repeats (empty: the text has no token).
// `buffer` is scratch space reused between calls.
void shingle_hashes(std::string_view text, const ShingleOptions& opt, std::vector<uint64_t>& out,
                    std::vector<uint8_t>& buffer);

// sig[i] = min(sig[i], (h1 + i * h2) mod 2^32) over the n shingle hashes, i < num_perm.
using MinhashKernel = void (*)(const uint64_t* shingles, size_t n, size_t num_perm,
                               uint32_t* sig);
namespace detail {
// Slots first .. last - 1 only (the SIMD kernels' tail; compiled for the baseline ISA).
void minhash_slots(const uint64_t* shingles, size_t n, size_t first, size_t last, uint32_t* sig);
void minhash_scalar(const uint64_t* shingles, size_t n, size_t num_perm, uint32_t* sig);
void minhash_avx2(const uint64_t* shingles, size_t n, size_t num_perm, uint32_t* sig);
void minhash_avx512(const uint64_t* shingles, size_t n, size_t num_perm, uint32_t* sig);
}  // namespace detail
core::SimdLevel minhash_level();

// Signatures of n texts: sig is n x num_perm (a text without tokens gets all 0xFFFFFFFF);
// n_shingles[d] = its number of shingles (with repeats). With `sets`, sets[d] is filled with
// the sorted distinct shingle hashes of text d (for exact Jaccard).
void minhash(const std::string_view* texts, size_t n, const ShingleOptions& opt, size_t num_perm,
             unsigned threads, uint32_t* sig, uint64_t* n_shingles,
             std::vector<std::vector<uint64_t>>* sets);

// SimHash codes of n texts: out is n x words 64-bit words (bits = 64 * words). Bit b of word w
// is set when more shingle occurrences have it set than clear in the shingle's word-w hash
// (word 0: the shingle hash s, word w > 0: fmix64(s + w * kGolden)); ties give 0.
void simhash(const std::string_view* texts, size_t n, const ShingleOptions& opt, size_t words,
             unsigned threads, uint64_t* out, uint64_t* n_shingles);

// LSH band keys: keys[d * bands + j] hashes the rows slots j*rows .. j*rows+rows-1 of
// signature d (k = j, then k = fmix64(k * kGolden + v) for each slot value v).
void band_keys(const uint32_t* sig, size_t n, size_t num_perm, size_t bands, size_t rows,
               uint64_t* keys);

// Candidate pairs (a < b, sorted, distinct): documents that share a key in some band.
std::vector<std::pair<uint32_t, uint32_t>> candidate_pairs(const uint64_t* keys, size_t n,
                                                           size_t bands);

// |A & B| / |A | B| of two sorted distinct arrays (0 when both are empty).
double jaccard_sorted(const uint64_t* a, size_t na, const uint64_t* b, size_t nb);

// Fraction of equal slots of two signatures.
double estimated_jaccard(const uint32_t* a, const uint32_t* b, size_t num_perm);

}  // namespace mirkit::dedup

namespace mirkit::dedup {

// Near-duplicate clusters: documents sharing a band key are candidate pairs; a candidate pair
// joins the two documents' clusters (union-find) when its Jaccard similarity is >= threshold,
// exact over the shingle sets when given (document d's sorted distinct hashes are
// set_values[set_offsets[d] .. set_offsets[d + 1])), else estimated from the signatures
// (set_offsets nullptr). Pairs already in one
// cluster are not verified again; exact duplicates (equal signatures and sets) are joined
// before banding, which then sees one of them. labels[d]: the smallest document of d's cluster.
struct ClusterStats {
  uint64_t candidates = 0;  // candidate pairs verified
  uint64_t joined = 0;      // of which had Jaccard >= threshold
};
std::vector<uint32_t> cluster_labels(const uint64_t* keys, size_t n, size_t bands,
                                     const uint32_t* sig, size_t num_perm,
                                     const uint64_t* set_offsets, const uint64_t* set_values,
                                     double threshold, ClusterStats* stats);

}  // namespace mirkit::dedup
