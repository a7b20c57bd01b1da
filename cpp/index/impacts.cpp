#include "index/impacts.hpp"

#include <algorithm>
#include <cmath>

#include "codecs/codec.hpp"
#include "core/errors.hpp"

namespace mirkit::index {

LinearQuantizer::LinearQuantizer(double max_weight, unsigned bits) {
  if (bits < kMinImpactBits || bits > kMaxImpactBits) {
    core::fail_value("bits must be in [", kMinImpactBits, ", ", kMaxImpactBits, "], got ", bits);
  }
  if (!(std::isfinite(max_weight) && max_weight > 0)) {
    core::fail_value("max_weight must be finite and > 0, got ", max_weight);
  }
  m_max = max_weight;
  m_range = (uint32_t{1} << bits) - 1;
  m_scale = static_cast<double>(m_range - 1) / max_weight;
}

void quantize(const LinearQuantizer& q, const float* weights, size_t n, uint32_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const float w = weights[i];
    if (!(std::isfinite(w) && w >= 0)) {
      core::fail_value("weights must be finite and >= 0; weights[", i, "]=", w);
    }
    out[i] = q(w);
  }
}

namespace {

struct Codecs {
  const codecs::Codec* docs;
  const codecs::Codec* freqs;
};

Codecs find_codecs(const std::string& docid_codec, const std::string& freq_codec) {
  const codecs::Codec* docs = codecs::find_codec(docid_codec);
  const codecs::Codec* freqs = codecs::find_codec(freq_codec);
  if (!docs) core::fail_value("unknown docid codec '", docid_codec, "'");
  if (!freqs) core::fail_value("unknown freq codec '", freq_codec, "'");
  return {docs, freqs};
}

uint64_t sum(const uint32_t* values, size_t n) {
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += values[i];
  return total;
}

constexpr Bm25Params kImpactParams{kDefaultK1, kDefaultB, true};

}  // namespace

ImpactStats write_impact_postings(const std::string& directory, const std::string& docid_codec,
                                  const std::string& freq_codec, std::string_view terms,
                                  const uint64_t* term_offsets, uint64_t n_terms,
                                  const uint64_t* starts, const uint32_t* docids,
                                  const uint32_t* impacts, const uint32_t* doc_lengths,
                                  size_t n_docs) {
  const Codecs c = find_codecs(docid_codec, freq_codec);
  if (term_offsets[n_terms] != terms.size()) {
    core::fail_value("term_offsets end at ", term_offsets[n_terms], ", not at the ",
                     terms.size(), " bytes of terms");
  }
  BlockWriter out(directory, *c.docs, *c.freqs, false, kImpactParams, doc_lengths, n_docs,
                  sum(doc_lengths, n_docs));
  for (uint64_t t = 0; t < n_terms; ++t) {
    if (term_offsets[t + 1] < term_offsets[t] || starts[t + 1] <= starts[t]) {
      core::fail_value("term ", t, ": its offsets or posting range are out of order or empty");
    }
    out.begin_term(terms.substr(term_offsets[t], term_offsets[t + 1] - term_offsets[t]),
                   starts[t + 1] - starts[t]);
    for (uint64_t i = starts[t]; i < starts[t + 1]; ++i) out.add(docids[i], impacts[i], nullptr);
    out.end_term();
  }
  return close_writer(out);
}

namespace {

// Calls fn(docs, tfs, n) for each block of term t.
template <class Fn>
void for_each_block(const IndexReader& r, uint32_t t, Fn&& fn) {
  uint32_t docs[kBlockSize], tfs[kBlockSize];
  for (uint64_t b = r.term_blocks[t]; b < r.term_blocks[t + 1]; ++b) {
    const uint32_t n = r.decode_docids(t, b, docs);
    r.decode_freqs(b, n, tfs);
    fn(docs, tfs, n);
  }
}

// The reader's own statistics, unless `given`.
Bm25Collection collection_of(const IndexReader& r, const Bm25Collection* given) {
  if (given) return *given;
  const uint64_t total = sum(r.doc_lengths.data, r.doc_lengths.size);
  return {r.n_docs(),
          r.n_docs() == 0 || total == 0 ? 1.0 : static_cast<double>(total) / r.n_docs(),
          r.df.data};
}

}  // namespace

double max_bm25(const IndexReader& r, const Bm25Params& bm25, const Bm25Collection* given) {
  const Bm25Collection c = collection_of(r, given);
  const double avg = c.avg_length;
  double best = 0.0;
  for (uint32_t t = 0; t < r.n_terms(); ++t) {
    const double idf = bm25_idf(c.n_docs, c.df[t]);
    for_each_block(r, t, [&](const uint32_t* docs, const uint32_t* tfs, uint32_t n) {
      for (uint32_t i = 0; i < n; ++i) {
        best = std::max(best, bm25_term(idf, tfs[i], r.doc_lengths[docs[i]], avg, bm25));
      }
    });
  }
  return best;
}

ImpactStats quantize_bm25(const IndexReader& r, const std::string& directory,
                          const std::string& docid_codec, const std::string& freq_codec,
                          const Bm25Params& bm25, const LinearQuantizer& q,
                          const Bm25Collection* given) {
  const Codecs c = find_codecs(docid_codec, freq_codec);
  const Bm25Collection coll = collection_of(r, given);
  const double avg = coll.avg_length;
  BlockWriter out(directory, *c.docs, *c.freqs, false, kImpactParams, r.doc_lengths.data,
                  r.n_docs(), sum(r.doc_lengths.data, r.doc_lengths.size));
  for (uint32_t t = 0; t < r.n_terms(); ++t) {
    const double idf = bm25_idf(coll.n_docs, coll.df[t]);
    out.begin_term(r.term(t), r.df[t]);
    for_each_block(r, t, [&](const uint32_t* docs, const uint32_t* tfs, uint32_t n) {
      for (uint32_t i = 0; i < n; ++i) {
        out.add(docs[i], q(bm25_term(idf, tfs[i], r.doc_lengths[docs[i]], avg, bm25)), nullptr);
      }
    });
    out.end_term();
  }
  return close_writer(out);
}

}  // namespace mirkit::index
