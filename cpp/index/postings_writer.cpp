#include "index/postings_writer.hpp"

#include <string_view>

#include "codecs/codec.hpp"
#include "core/errors.hpp"
#include "index/block_writer.hpp"

namespace mirkit::index {

MergeStats write_postings_lists(const std::string& directory, const PostingsLists& lists,
                                const std::string& docid_codec, const std::string& freq_codec,
                                const Bm25Params& bm25, const uint32_t* doc_lengths,
                                size_t n_docs, uint64_t total_tokens) {
  const codecs::Codec* docs_codec = codecs::find_codec(docid_codec);
  const codecs::Codec* freqs_codec = codecs::find_codec(freq_codec);
  if (!docs_codec) core::fail_value("unknown docid codec '", docid_codec, "'");
  if (!freqs_codec) core::fail_value("unknown freq codec '", freq_codec, "'");
  // Every offset is checked before the first byte is written, so that a bad list never leaves
  // half a term in the files.
  if (lists.term_offsets[0] != 0 || lists.list_offsets[0] != 0 ||
      lists.term_offsets[lists.n_lists] != lists.n_terms_bytes ||
      lists.list_offsets[lists.n_lists] != lists.n_postings) {
    core::fail_value("postings lists: offsets do not start at 0 and end at the arrays' sizes");
  }
  std::vector<uint8_t> seen(lists.n_lists, 0);
  for (size_t i = 0; i < lists.n_lists; ++i) {
    if (lists.term_offsets[i + 1] < lists.term_offsets[i] ||
        lists.list_offsets[i + 1] < lists.list_offsets[i]) {
      core::fail_value("postings list ", i, ": offsets decrease");
    }
    const uint32_t o = lists.order[i];
    if (o >= lists.n_lists || seen[o]) core::fail_value("order is not a permutation (order[", i,
                                                        "]=", o, ")");
    seen[o] = 1;
  }
  const auto term = [&](uint32_t i) {
    return std::string_view(reinterpret_cast<const char*>(lists.terms) + lists.term_offsets[i],
                            lists.term_offsets[i + 1] - lists.term_offsets[i]);
  };
  BlockWriter out(directory, *docs_codec, *freqs_codec, false, bm25, doc_lengths, n_docs,
                  total_tokens);
  for (size_t r = 0; r < lists.n_lists; ++r) {
    const uint32_t i = lists.order[r];
    if (r > 0 && !(term(lists.order[r - 1]) < term(i))) {
      core::fail_value("postings list ", i, ": term '", term(i), "' does not follow '",
                       term(lists.order[r - 1]), "' (duplicate or order out of sort)");
    }
    const uint64_t first = lists.list_offsets[i], last = lists.list_offsets[i + 1];
    if (first == last) continue;
    for (uint64_t p = first; p < last; ++p) {
      if (lists.docids[p] >= n_docs || (p > first && lists.docids[p] <= lists.docids[p - 1])) {
        core::fail_value("postings list ", i, " ('", term(i), "'): posting ", p - first,
                         " has docid ", lists.docids[p],
                         p > first ? " not above the previous one or" : "", " out of [0, ",
                         n_docs, ")");
      }
      if (lists.tfs[p] == 0) core::fail_value("postings list ", i, " ('", term(i),
                                              "'): posting ", p - first, " has tf 0");
    }
    out.begin_term(term(i), last - first);
    for (uint64_t p = first; p < last; ++p) out.add(lists.docids[p], lists.tfs[p], nullptr);
    out.end_term();
  }
  return close_writer(out);
}

}  // namespace mirkit::index
