// The Porter stemmer as published: M. F. Porter, "An algorithm for suffix stripping", Program
// 14(3), 130-137, 1980. Not Porter's later revisions (his C code's BLI -> BLE and LOGI -> LOG
// rules, and its skipping of words of one or two letters), so "is" -> "i" and "as" -> "a".
//
// Notation of the paper: c = consonant, v = vowel (a, e, i, o, u, and y after a consonant); a word
// is [C](VC){m}[V] and m is its measure. In each step the rule with the longest matching suffix is
// chosen; when its condition fails the step leaves the word alone (the paper's feed -> feed).
// Listing each step's rules longest-suffix first makes "first match" the same choice.
//
// Checked against nltk's PorterStemmer(mode=ORIGINAL_ALGORITHM), word for word on the GCIDE and
// WordNet vocabularies (tests/test_analysis.py). That mode follows the paper on every point where
// implementations differ: it stems words of one or two letters, uses ABLI -> ABLE, has no LOGI
// rule, and tries Step 1b's EED before ED/ING; its Step 5b measures the word minus its final L,
// which has the same measure as the whole word. No deviation from the paper was found.
#include <string>
#include <string_view>

#include "analysis/analyzer.hpp"

namespace mirkit::analysis {

namespace {

struct Rule {
  std::string_view suffix;
  std::string_view replacement;
};

constexpr Rule kStep2[] = {
    {"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"},    {"anci", "ance"},
    {"izer", "ize"},    {"abli", "able"},   {"alli", "al"},      {"entli", "ent"},
    {"eli", "e"},       {"ousli", "ous"},   {"ization", "ize"},  {"ation", "ate"},
    {"ator", "ate"},    {"alism", "al"},    {"iveness", "ive"},  {"fulness", "ful"},
    {"ousness", "ous"}, {"aliti", "al"},    {"iviti", "ive"},    {"biliti", "ble"},
};

constexpr Rule kStep3[] = {
    {"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
    {"ical", "ic"},  {"ful", ""},   {"ness", ""},
};

// Step 4 deletes the suffix; "ion" needs (m>1 and (*S or *T)), the others m>1.
constexpr Rule kStep4[] = {
    {"al", ""},  {"ance", ""}, {"ence", ""}, {"er", ""},  {"ic", ""},  {"able", ""}, {"ible", ""},
    {"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""}, {"ion", ""}, {"ou", ""},  {"ism", ""},
    {"ate", ""}, {"iti", ""},  {"ous", ""},  {"ive", ""}, {"ize", ""},
};

// A step's rules grouped by the suffix's last letter, in list order: only the group of the word's
// last letter can match, so each step compares a handful of suffixes instead of all of them.
template <size_t N>
struct RulesByLastLetter {
  static constexpr size_t kMaxGroup = 10;
  const Rule* rules;
  uint8_t count[26] = {};
  uint8_t index[26][kMaxGroup] = {};

  constexpr explicit RulesByLastLetter(const Rule (&list)[N]) : rules(list) {
    for (size_t r = 0; r < N; ++r) {
      const size_t c = static_cast<size_t>(list[r].suffix.back() - 'a');
      index[c][count[c]++] = static_cast<uint8_t>(r);
    }
  }
};

constexpr RulesByLastLetter kStep2Rules(kStep2);
constexpr RulesByLastLetter kStep3Rules(kStep3);
constexpr RulesByLastLetter kStep4Rules(kStep4);

inline bool is_aeiou(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

class Stemmer {
 public:
  explicit Stemmer(std::string& word) : m_w(word) {}

  void run() {
    step1a();
    if (m_w.empty()) return;  // "s" (Step 1a S -> ""); the later steps cannot change ""
    step1b();
    step1c();
    apply(kStep2Rules, 0);
    apply(kStep3Rules, 0);
    apply(kStep4Rules, 1);
    step5();
  }

 private:
  // y is a consonant at the start of the word or after a vowel, and a vowel after a consonant:
  // walk back over a run of y's (iteratively, so "yyyy..." cannot recurse deeply).
  bool is_consonant(size_t i) const {
    bool flip = false;
    while (i > 0 && m_w[i] == 'y') {
      flip = !flip;
      --i;
    }
    return !is_aeiou(m_w[i]) != flip;
  }

  // m of m_w[0, len): the number of vowel -> consonant transitions, one left-to-right pass.
  int measure(size_t len) const {
    int m = 0;
    bool prev_consonant = true;
    for (size_t i = 0; i < len; ++i) {
      const char c = m_w[i];
      const bool consonant = is_aeiou(c) ? false : c == 'y' ? (i == 0 || !prev_consonant) : true;
      if (consonant && !prev_consonant) ++m;
      prev_consonant = consonant;
    }
    return m;
  }

  // *v*: m_w[0, len) contains a vowel.
  bool has_vowel(size_t len) const {
    bool prev_consonant = true;
    for (size_t i = 0; i < len; ++i) {
      const char c = m_w[i];
      const bool consonant = is_aeiou(c) ? false : c == 'y' ? (i == 0 || !prev_consonant) : true;
      if (!consonant) return true;
      prev_consonant = consonant;
    }
    return false;
  }

  // *d: m_w[0, len) ends with a double consonant.
  bool ends_double_consonant(size_t len) const {
    return len >= 2 && m_w[len - 1] == m_w[len - 2] && is_consonant(len - 1);
  }

  // *o: m_w[0, len) ends cvc where the second c is not w, x or y.
  bool ends_cvc(size_t len) const {
    if (len < 3) return false;
    const char last = m_w[len - 1];
    return is_consonant(len - 3) && !is_consonant(len - 2) && is_consonant(len - 1) &&
           last != 'w' && last != 'x' && last != 'y';
  }

  // Compared from the last letter back, inline: most rules fail on the first comparison, and a
  // memcmp call per rule would cost more than the whole comparison.
  bool ends(std::string_view suffix) const {
    if (m_w.size() < suffix.size()) return false;
    const char* w = m_w.data() + m_w.size();
    for (size_t k = suffix.size(); k > 0; --k) {
      if (w[k - 1 - suffix.size()] != suffix[k - 1]) return false;
    }
    return true;
  }

  void replace_tail(size_t stem, std::string_view replacement) {
    m_w.resize(stem);
    m_w.append(replacement);
  }

  // SSES -> SS, IES -> I, SS -> SS, S -> "".
  void step1a() {
    if (ends("sses") || ends("ies")) {
      m_w.resize(m_w.size() - 2);
    } else if (!ends("ss") && ends("s")) {
      m_w.pop_back();
    }
  }

  // (m>0) EED -> EE; (*v*) ED -> ""; (*v*) ING -> "", then AT -> ATE, BL -> BLE, IZ -> IZE,
  // (*d and not (*L or *S or *Z)) -> single letter, (m=1 and *o) -> E.
  void step1b() {
    const size_t n = m_w.size();
    if (ends("eed")) {
      if (measure(n - 3) > 0) m_w.pop_back();
      return;
    }
    size_t stem;
    if (ends("ed") && has_vowel(n - 2)) {
      stem = n - 2;
    } else if (ends("ing") && has_vowel(n - 3)) {
      stem = n - 3;
    } else {
      return;
    }
    m_w.resize(stem);
    if (ends("at") || ends("bl") || ends("iz")) {
      m_w.push_back('e');
    } else if (ends_double_consonant(stem)) {
      const char last = m_w.back();
      if (last != 'l' && last != 's' && last != 'z') m_w.pop_back();
    } else if (measure(stem) == 1 && ends_cvc(stem)) {
      m_w.push_back('e');
    }
  }

  // (*v*) Y -> I.
  void step1c() {
    if (ends("y") && has_vowel(m_w.size() - 1)) m_w.back() = 'i';
  }

  // Steps 2, 3 and 4: (m > min_measure) SUFFIX -> replacement, for the first (longest) suffix
  // that matches; Step 4's ION also needs a stem ending in S or T.
  template <size_t N>
  void apply(const RulesByLastLetter<N>& rules, int min_measure) {
    const size_t c = static_cast<size_t>(m_w.back() - 'a');
    for (size_t g = 0; g < rules.count[c]; ++g) {
      const Rule& r = rules.rules[rules.index[c][g]];
      if (!ends(r.suffix)) continue;
      const size_t stem = m_w.size() - r.suffix.size();
      bool ok = measure(stem) > min_measure;
      if (ok && r.suffix == "ion") ok = m_w[stem - 1] == 's' || m_w[stem - 1] == 't';
      if (ok) replace_tail(stem, r.replacement);
      return;
    }
  }

  // 5a: (m>1) E -> ""; (m=1 and not *o) E -> "". 5b: (m>1 and *d and *L) -> single letter.
  void step5() {
    if (ends("e")) {
      const size_t stem = m_w.size() - 1;
      const int m = measure(stem);
      if (m > 1 || (m == 1 && !ends_cvc(stem))) m_w.pop_back();
    }
    if (ends("ll") && measure(m_w.size() - 1) > 1) m_w.pop_back();
  }

  std::string& m_w;
};

}  // namespace

void porter_stem_inplace(std::string& word) {
  for (char c : word) {
    if (c < 'a' || c > 'z') return;  // only pure a-z words are stemmed
  }
  if (!word.empty()) Stemmer(word).run();
}

std::string porter_stem(std::string_view word) {
  std::string out(word);
  porter_stem_inplace(out);
  return out;
}

}  // namespace mirkit::analysis
