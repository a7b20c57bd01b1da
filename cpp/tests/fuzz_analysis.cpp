// Standalone fuzz driver for the tokenizer and the Porter stemmer, meant to run under
// AddressSanitizer and UndefinedBehaviorSanitizer (cmake -DMIRKIT_SANITIZE=ON
// -DMIRKIT_BUILD_TESTS=ON). Inputs live in exactly-sized heap buffers so that any read past their
// end is reported.
//
//   fuzz_analysis [iterations] [seed]
//
// Inputs: random bytes, valid UTF-8 of code points from every plane, and valid UTF-8 with bytes
// flipped or cut off. Tokenizing may throw std::invalid_argument (invalid UTF-8); anything else
// fails. Every token must satisfy the length limits and must come back as itself when tokenized
// again without lowercasing or folding (so it is valid UTF-8 made of letters, digits and marks).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/analyzer.hpp"

using mirkit::analysis::Analyzer;
using mirkit::analysis::AnalyzerConfig;

namespace {

void append_utf8(std::string& s, uint32_t cp) {
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string random_input(std::mt19937_64& rng) {
  std::string s;
  const size_t n = rng() % 48;
  const int kind = static_cast<int>(rng() % 3);
  if (kind == 0) {
    for (size_t i = 0; i < n; ++i) s += static_cast<char>(rng());
    return s;
  }
  static const uint32_t kRanges[][2] = {{0x20, 0x7F},     {0xC0, 0x250},     {0x300, 0x370},
                                        {0x900, 0x980},   {0xE00, 0xE80},    {0x1E00, 0x1F00},
                                        {0xFB00, 0xFB10}, {0xFF00, 0xFF70},  {0x10000, 0x10FFFF}};
  for (size_t i = 0; i < n; ++i) {
    const auto& r = kRanges[rng() % (sizeof(kRanges) / sizeof(kRanges[0]))];
    uint32_t cp = r[0] + static_cast<uint32_t>(rng() % (r[1] - r[0]));
    if (cp >= 0xD800 && cp < 0xE000) cp = 'x';
    append_utf8(s, cp);
  }
  if (kind == 2 && !s.empty()) {
    const size_t flips = 1 + rng() % 3;
    for (size_t f = 0; f < flips; ++f) s[rng() % s.size()] = static_cast<char>(rng());
    if (rng() % 2) s.resize(rng() % s.size());
  }
  return s;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

int fail(const char* what, const std::string& input) {
  std::printf("FAIL: %s on input of %zu bytes:", what, input.size());
  for (unsigned char c : input) std::printf(" %02X", c);
  std::printf("\n");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 20000;
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1);
  std::vector<Analyzer> analyzers;
  for (int k = 0; k < 8; ++k) {
    AnalyzerConfig c;
    c.lowercase = k & 1;
    c.ascii_fold = k & 2;
    c.stopwords = c.stem = k & 4;
    c.min_length = 1 + k % 3;
    c.max_length = k < 4 ? 3 + k : 64;  // small limits exercise the overlong-token path
    analyzers.emplace_back(c);
  }
  AnalyzerConfig verbatim_config;
  verbatim_config.lowercase = verbatim_config.ascii_fold = false;
  verbatim_config.max_length = 1024;
  const Analyzer verbatim(verbatim_config);
  long rejected = 0;
  for (long it = 0; it < iterations; ++it) {
    const std::string input = random_input(rng);
    std::unique_ptr<char[]> exact(new char[input.size() + (input.empty() ? 1 : 0)]);
    std::copy(input.begin(), input.end(), exact.get());
    const std::string_view view(exact.get(), input.size());
    for (const Analyzer& a : analyzers) {
      try {
        std::vector<std::string> tokens;
        a.tokenize(view, [&](std::string_view t, uint32_t) { tokens.emplace_back(t); });
        for (const std::string& t : tokens) {
          const size_t n = code_points(t);
          if (n < a.config().min_length || n > a.config().max_length) {
            return fail("token outside the length limits", input);
          }
          std::vector<std::string> again;
          verbatim.tokenize(t, [&](std::string_view u, uint32_t) { again.emplace_back(u); });
          if (again.size() != 1 || again[0] != t) return fail("token does not re-tokenize", input);
        }
        a.analyze(view);
      } catch (const std::invalid_argument&) {
        ++rejected;
      }
    }
  }
  std::printf("tokenizer: ok (%ld inputs, %ld rejections)\n", iterations, rejected);

  for (long it = 0; it < iterations; ++it) {
    std::string word(rng() % 24, 'a');
    for (char& c : word) c = "abcdeilmnorstuvwyz"[rng() % 18];
    const std::string stem = mirkit::analysis::porter_stem(word);
    if (stem.size() > word.size() || (stem.empty() && word != "s" && !word.empty())) {
      return fail("stem longer than its word or empty", word);
    }
  }
  std::printf("porter: ok\n");
  return 0;
}
