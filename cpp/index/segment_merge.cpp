#include "index/segment_merge.hpp"

#include <algorithm>
#include <string_view>

#include "codecs/codec.hpp"
#include "core/errors.hpp"
#include "index/builder.hpp"

namespace mirkit::index {

namespace {

// A term's postings gathered under a map that reorders documents (a docid reordering), sorted
// by their new docids, with their tfs and positions.
void sort_postings(std::vector<uint32_t>& docids, std::vector<uint32_t>& tfs, bool positions,
                   std::vector<uint32_t>& all_positions, std::vector<size_t>& pos_end) {
  std::vector<uint32_t> perm(docids.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<uint32_t>(i);
  std::sort(perm.begin(), perm.end(),
            [&](uint32_t a, uint32_t b) { return docids[a] < docids[b]; });
  std::vector<uint32_t> d(perm.size()), f(perm.size()), p;
  std::vector<size_t> e;
  for (size_t i = 0; i < perm.size(); ++i) {
    d[i] = docids[perm[i]];
    f[i] = tfs[perm[i]];
    if (i > 0 && d[i] == d[i - 1]) {
      core::fail_value("merge_segments: two documents mapped to docid ", d[i]);
    }
    if (positions) {
      const size_t begin = perm[i] ? pos_end[perm[i] - 1] : 0;
      p.insert(p.end(), all_positions.begin() + begin, all_positions.begin() + pos_end[perm[i]]);
      e.push_back(p.size());
    }
  }
  docids.swap(d);
  tfs.swap(f);
  all_positions.swap(p);
  pos_end.swap(e);
}

}  // namespace

MergeStats merge_segments(const std::string& directory, const std::vector<MergeInput>& inputs,
                          const std::string& docid_codec, const std::string& freq_codec,
                          bool positions, const Bm25Params& bm25, const uint32_t* doc_lengths,
                          size_t n_docs, uint64_t total_tokens, bool vectors,
                          size_t memory_budget) {
  const codecs::Codec* docs_codec = codecs::find_codec(docid_codec);
  const codecs::Codec* freqs_codec = codecs::find_codec(freq_codec);
  if (!docs_codec) core::fail_value("unknown docid codec '", docid_codec, "'");
  if (!freqs_codec) core::fail_value("unknown freq codec '", freq_codec, "'");
  for (const MergeInput& in : inputs) {
    if (positions && !in.reader->layout().positions) {
      core::fail_value("merge_segments: positions asked of a segment without them");
    }
  }
  BlockWriter out(directory, *docs_codec, *freqs_codec, positions, bm25, doc_lengths, n_docs,
                  total_tokens);
  std::vector<uint32_t> next(inputs.size(), 0);  // each segment's next term id
  std::vector<uint32_t> docids, tfs, pos, all_positions;
  std::vector<size_t> pos_end;
  while (true) {
    // The smallest next term of all segments.
    bool any = false;
    std::string_view term;
    for (size_t s = 0; s < inputs.size(); ++s) {
      if (next[s] >= inputs[s].reader->n_terms()) continue;
      const std::string_view t = inputs[s].reader->term(next[s]);
      if (!any || t < term) term = t;
      any = true;
    }
    if (!any) break;
    const std::string current(term);  // the views change as segments advance
    docids.clear();
    tfs.clear();
    all_positions.clear();
    pos_end.clear();
    bool in_order = true;
    for (size_t s = 0; s < inputs.size(); ++s) {
      const IndexReader& r = *inputs[s].reader;
      if (next[s] >= r.n_terms() || r.term(next[s]) != current) continue;
      PostingCursor c = r.cursor(next[s]);
      for (; c.docid() != kEndDocid; c.next()) {
        const uint32_t d = c.docid();
        if (d >= r.n_docs()) core::fail_value("merge_segments: docid ", d, " out of range");
        const uint32_t mapped = inputs[s].new_docid[d];
        if (mapped == kEndDocid) continue;
        if (mapped >= n_docs) core::fail_value("merge_segments: merged docid ", mapped,
                                               " out of range [0, ", n_docs, ")");
        in_order = in_order && (docids.empty() || mapped > docids.back());
        docids.push_back(mapped);
        tfs.push_back(c.freq());
        if (positions) {
          c.positions(pos);
          all_positions.insert(all_positions.end(), pos.begin(), pos.end());
          pos_end.push_back(all_positions.size());
        }
      }
      ++next[s];
    }
    if (docids.empty()) continue;  // only deleted documents held it
    if (!in_order) sort_postings(docids, tfs, positions, all_positions, pos_end);
    out.begin_term(current, docids.size());
    for (size_t i = 0; i < docids.size(); ++i) {
      const uint32_t* p = positions ? all_positions.data() + (i ? pos_end[i - 1] : 0) : nullptr;
      out.add(docids[i], tfs[i], p);
    }
    out.end_term();
  }
  MergeStats stats = close_writer(out);
  if (vectors) {
    const IndexLayout layout{n_docs, stats.n_terms, stats.n_blocks, docid_codec, freq_codec,
                             positions, false};
    for (FileInfo& f : write_doc_vectors(directory, layout, nullptr, memory_budget, nullptr)) {
      stats.files.push_back(std::move(f));
    }
  }
  return stats;
}

MergeStats close_writer(BlockWriter& out) {
  MergeStats stats;
  stats.n_terms = out.n_terms();
  stats.n_postings = out.n_postings();
  stats.position_bytes = out.position_bytes();
  stats.n_blocks = out.n_blocks();
  stats.files = out.close();
  return stats;
}

void live_term_stats(const IndexReader& reader, const uint8_t* deleted, uint32_t* df,
                     uint64_t* cf) {
  std::vector<uint32_t> docids, freqs;
  for (uint32_t t = 0; t < reader.n_terms(); ++t) {
    reader.postings(t, docids, freqs);
    uint32_t n = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < docids.size(); ++i) {
      if (docids[i] >= reader.n_docs()) core::fail_value("live_term_stats: docid out of range");
      if (!deleted[docids[i]]) {
        ++n;
        sum += freqs[i];
      }
    }
    df[t] = n;
    cf[t] = sum;
  }
}

}  // namespace mirkit::index
