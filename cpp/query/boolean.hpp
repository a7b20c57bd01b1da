// Unranked Boolean retrieval: AND / OR / NOT over the posting lists of an index, for expert users
// who want exactly the documents an expression matches. The query is a postfix program (the
// Python parser compiles expressions into it); the result is the ascending list of matching
// internal docids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/reader.hpp"
#include "query/phrase.hpp"

namespace mirkit::query {

enum class BoolOp : uint8_t {
  kTerm,   // push the documents of term `arg`
  kEmpty,  // push the empty set (a query term the index does not have)
  kAnd,    // pop `arg` >= 2 operands, push their intersection
  kOr,     // pop `arg` >= 2 operands, push their union
  kNot,    // pop one operand, push its complement in [0, n_docs)
  kPhrase,  // push the documents of phrase `arg` (an index into the phrases given)
};

struct BoolInstr {
  BoolOp op;
  uint32_t arg = 0;  // term id (kTerm), operand count (kAnd, kOr), phrase (kPhrase), else 0
};

// Nesting limit of the (flattened) expression tree: evaluation recurses once per level.
inline constexpr size_t kMaxBooleanDepth = 1000;

// Evaluates a postfix program and returns the matching docids in ascending order. Complements
// are never materialized except for a final NOT at the top: A AND NOT B is a difference, and
// OR with negated operands is rewritten by De Morgan. Intersections gallop with next_geq on the
// posting cursors, driven by the shortest operand. Throws std::invalid_argument for a malformed
// program (stack underflow, operands left over, bad arity or argument, nesting deeper than
// kMaxBooleanDepth) and std::out_of_range for a term id outside the index. Thread-safe: the
// reader is only read.
// `phrases` are the phrases kPhrase names (query/phrase.hpp; an index without positions
// raises std::invalid_argument when the program holds one).
std::vector<uint32_t> evaluate_boolean(const index::IndexReader& index, const BoolInstr* program,
                                       size_t n, const std::vector<PhraseSpec>& phrases = {});

}  // namespace mirkit::query
