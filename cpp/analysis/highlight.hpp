// Query-biased snippets: the best fragments of a text for a query, with the words that match a
// query term marked. A word is marked when its analyzed form (the Analyzer's term: lowercased,
// folded, stemmed) is one of the query's terms, or when it is part of an occurrence of one of
// the query's phrases (consecutive terms at the phrase's relative positions); so "layers" is
// marked for the query "layer", and "boundary layer" marks only its occurrences as a phrase.
//
// Fragment choice (as Lucene's unified highlighter ranks passages, without its sentence
// splitting): every marked word anchors a candidate window, the longest run of whole tokens
// starting at it whose text is at most fragment_size code points (extended backwards when the
// text ends first). Candidates rank by the number of distinct query terms they contain, then by
// the number of marked words (their density, as windows have about the same length), then by
// position; the best max_fragments that do not overlap are returned in text order. Each then
// takes the punctuation directly after its last token (the characters up to the first
// whitespace, as Python's str.isspace() has it, or the next token), so a fragment ending a
// sentence keeps its period; this may pass fragment_size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/analyzer.hpp"

namespace mirkit::analysis {

struct HighlightQuery {
  std::vector<std::string> terms;  // analyzed terms, marked wherever they occur
  // Phrases: each a list of (position relative to its first term, analyzed term), as the
  // analyzer gives them for the phrase's text (stopwords leave gaps in the positions).
  std::vector<std::vector<std::pair<uint32_t, std::string>>> phrases;
};

struct Fragment {
  size_t begin = 0, end = 0;                       // byte range of the fragment in the text
  std::vector<std::pair<size_t, size_t>> marks;    // byte ranges of its marked words, in order
};

// The best fragments of text (empty when no word matches). fragment_size >= 1 code points,
// max_fragments >= 1. Throws std::invalid_argument on invalid UTF-8.
std::vector<Fragment> best_fragments(const Analyzer& analyzer, std::string_view text,
                                     const HighlightQuery& query, uint32_t fragment_size,
                                     uint32_t max_fragments);

// The fragment's text with each mark wrapped in pre ... post; with escape_html, the text (not
// pre and post) has & < > " ' escaped as Python's html.escape does.
std::string render_fragment(std::string_view text, const Fragment& fragment,
                            std::string_view pre, std::string_view post, bool escape_html);

}  // namespace mirkit::analysis
