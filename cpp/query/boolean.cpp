// Boolean retrieval as a tree of lazy docid iterators, all with the cursor interface
// (docid(), next(), next_geq()). Evaluation is document-at-a-time, so nothing but the result is
// materialized:
//  - AND leapfrogs: the operand with the fewest estimated documents proposes a candidate, the
//    others jump to it with next_geq (galloping over the skip list for terms), and any operand
//    that overshoots proposes the next candidate.
//  - A NOT operand of an AND is a filter, never a complement: a candidate is dropped when the
//    negated operand, moved with next_geq, lands on it (A AND NOT B is a difference).
//  - AND whose operands are all negated is rewritten NOT (a OR b ...) (De Morgan).
//  - OR merges: its docid is the smallest of its operands'.
//  - NOT elsewhere (at the top, or inside OR, where the result is mostly the collection anyway)
//    walks [0, n_docs) lazily, skipping the operand's documents.
#include "query/boolean.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "core/errors.hpp"

namespace mirkit::query {

namespace {

using index::kEndDocid;

struct Node {
  BoolOp op;
  uint32_t arg;                    // term id of kTerm
  std::vector<uint32_t> children;  // indices into the node array
  size_t depth;
};

const char* op_name(BoolOp op) {
  switch (op) {
    case BoolOp::kTerm: return "term";
    case BoolOp::kEmpty: return "empty";
    case BoolOp::kAnd: return "and";
    case BoolOp::kOr: return "or";
    case BoolOp::kNot: return "not";
    case BoolOp::kPhrase: return "phrase";
  }
  return "?";
}

// Postfix program -> expression tree, validated. Nested AND in AND and OR in OR are flattened
// (the larger child's operand list is reused, so long chains stay n log n) and NOT NOT cancels.
std::vector<Node> build_tree(const index::IndexReader& index, const BoolInstr* program, size_t n,
                             size_t n_phrases, uint32_t& root) {
  std::vector<Node> nodes;
  std::vector<uint32_t> stack;
  for (size_t i = 0; i < n; ++i) {
    const BoolInstr& in = program[i];
    switch (in.op) {
      case BoolOp::kTerm:
        if (in.arg >= index.n_terms()) {
          core::fail_index("boolean program[", i, "]: term id ", in.arg, " out of range [0, ",
                           index.n_terms(), ")");
        }
        stack.push_back(static_cast<uint32_t>(nodes.size()));
        nodes.push_back(Node{in.op, in.arg, {}, 1});
        break;
      case BoolOp::kPhrase:
        if (in.arg >= n_phrases) {
          core::fail_index("boolean program[", i, "]: phrase ", in.arg, " out of range [0, ",
                           n_phrases, ")");
        }
        stack.push_back(static_cast<uint32_t>(nodes.size()));
        nodes.push_back(Node{in.op, in.arg, {}, 1});
        break;
      case BoolOp::kEmpty:
        if (in.arg != 0) core::fail_value("boolean program[", i, "]: 'empty' takes argument 0, got ", in.arg);
        stack.push_back(static_cast<uint32_t>(nodes.size()));
        nodes.push_back(Node{in.op, 0, {}, 1});
        break;
      case BoolOp::kNot: {
        if (in.arg != 0) core::fail_value("boolean program[", i, "]: 'not' takes argument 0, got ", in.arg);
        if (stack.empty()) core::fail_value("boolean program[", i, "]: 'not' needs an operand, the stack is empty");
        uint32_t child = stack.back();
        if (nodes[child].op == BoolOp::kNot) {
          stack.back() = nodes[child].children[0];
        } else {
          stack.back() = static_cast<uint32_t>(nodes.size());
          nodes.push_back(Node{BoolOp::kNot, 0, {child}, nodes[child].depth + 1});
        }
        break;
      }
      case BoolOp::kAnd:
      case BoolOp::kOr: {
        if (in.arg < 2) {
          core::fail_value("boolean program[", i, "]: '", op_name(in.op),
                           "' needs an operand count >= 2, got ", in.arg);
        }
        if (stack.size() < in.arg) {
          core::fail_value("boolean program[", i, "]: '", op_name(in.op), "' needs ", in.arg,
                           " operands, the stack holds ", stack.size());
        }
        const auto first = stack.end() - in.arg;
        // Reuse the longest operand list among children of the same kind.
        auto host = stack.end();
        for (auto it = first; it != stack.end(); ++it) {
          if (nodes[*it].op == in.op &&
              (host == stack.end() || nodes[*it].children.size() > nodes[*host].children.size())) {
            host = it;
          }
        }
        Node node{in.op, 0, {}, 1};
        if (host != stack.end()) node.children = std::move(nodes[*host].children);
        for (auto it = first; it != stack.end(); ++it) {
          if (it == host) continue;
          const Node& c = nodes[*it];
          if (c.op == in.op) {
            node.children.insert(node.children.end(), c.children.begin(), c.children.end());
          } else {
            node.children.push_back(*it);
          }
        }
        for (auto it = first; it != stack.end(); ++it) {
          node.depth = std::max(node.depth, nodes[*it].depth + (nodes[*it].op == in.op ? 0 : 1));
        }
        stack.erase(first, stack.end());
        stack.push_back(static_cast<uint32_t>(nodes.size()));
        nodes.push_back(std::move(node));
        break;
      }
      default:
        core::fail_value("boolean program[", i, "]: unknown operation ", static_cast<int>(in.op));
    }
    if (nodes[stack.back()].depth > kMaxBooleanDepth) {
      core::fail_value("boolean expression nested deeper than ", kMaxBooleanDepth, " levels");
    }
  }
  if (stack.size() != 1) {
    core::fail_value("boolean program must leave exactly one operand, it leaves ", stack.size());
  }
  root = stack[0];
  return nodes;
}

class DocIterator {
 public:
  virtual ~DocIterator() = default;
  uint32_t docid() const { return m_docid; }
  virtual void next() = 0;
  virtual void next_geq(uint32_t target) = 0;  // never moves backwards
  uint64_t estimate() const { return m_estimate; }  // upper bound of the documents it yields

 protected:
  uint32_t m_docid = kEndDocid;
  uint64_t m_estimate = 0;
};

using IteratorPtr = std::unique_ptr<DocIterator>;

class EmptyIterator final : public DocIterator {
 public:
  void next() override {}
  void next_geq(uint32_t) override {}
};

// A term's postings (index::PostingCursor) or a phrase's matches (PhraseCursor), built in
// place from the cursor's constructor arguments.
template <class Cursor>
class CursorIterator final : public DocIterator {
 public:
  template <class... Args>
  explicit CursorIterator(const Args&... args) : m_cursor(args...) {
    m_docid = m_cursor.docid();
    m_estimate = m_cursor.size();
  }
  void next() override {
    m_cursor.next();
    m_docid = m_cursor.docid();
  }
  void next_geq(uint32_t target) override {
    m_cursor.next_geq(target);
    m_docid = m_cursor.docid();
  }

 private:
  Cursor m_cursor;
};

class AndIterator final : public DocIterator {
 public:
  AndIterator(std::vector<IteratorPtr> positive, std::vector<IteratorPtr> negative)
      : m_positive(std::move(positive)), m_negative(std::move(negative)) {
    // The rarest operand drives; the others are probed in order of increasing size, so a
    // candidate is rejected as early as possible.
    std::sort(m_positive.begin(), m_positive.end(),
              [](const IteratorPtr& a, const IteratorPtr& b) { return a->estimate() < b->estimate(); });
    m_estimate = m_positive[0]->estimate();
    align();
  }
  void next() override {
    m_positive[0]->next();
    align();
  }
  void next_geq(uint32_t target) override {
    if (target <= m_docid) return;
    m_positive[0]->next_geq(target);
    align();
  }

 private:
  // Moves the driver to the first document that every positive operand holds and no negative
  // one does.
  void align() {
    DocIterator& lead = *m_positive[0];
    uint32_t candidate = lead.docid();
    while (candidate != kEndDocid) {
      bool ok = true;
      for (size_t i = 1; i < m_positive.size(); ++i) {
        m_positive[i]->next_geq(candidate);
        if (m_positive[i]->docid() != candidate) {
          lead.next_geq(m_positive[i]->docid());
          ok = false;
          break;
        }
      }
      if (ok) {
        for (auto& n : m_negative) {
          n->next_geq(candidate);
          if (n->docid() == candidate) {
            lead.next();
            ok = false;
            break;
          }
        }
      }
      if (ok) break;
      candidate = lead.docid();
    }
    m_docid = candidate;
  }

  std::vector<IteratorPtr> m_positive;  // not empty
  std::vector<IteratorPtr> m_negative;
};

class OrIterator final : public DocIterator {
 public:
  explicit OrIterator(std::vector<IteratorPtr> children, uint64_t n_docs)
      : m_children(std::move(children)) {
    for (auto& c : m_children) m_estimate += c->estimate();
    m_estimate = std::min(m_estimate, n_docs);
    settle();
  }
  void next() override {
    const uint32_t current = m_docid;
    if (current == kEndDocid) return;
    for (auto& c : m_children) {
      if (c->docid() == current) c->next();
    }
    settle();
  }
  void next_geq(uint32_t target) override {
    if (target <= m_docid) return;
    for (auto& c : m_children) c->next_geq(target);
    settle();
  }

 private:
  // A linear minimum: unions in hand-written expressions have few operands, where this beats a
  // heap.
  void settle() {
    m_docid = kEndDocid;
    for (auto& c : m_children) m_docid = std::min(m_docid, c->docid());
  }

  std::vector<IteratorPtr> m_children;
};

// The documents of [0, n_docs) that the child does not hold, in order.
class NotIterator final : public DocIterator {
 public:
  NotIterator(IteratorPtr child, uint64_t n_docs)
      : m_child(std::move(child)), m_n_docs(n_docs) {
    m_estimate = n_docs;
    seek(0);
  }
  void next() override {
    if (m_docid != kEndDocid) seek(uint64_t{m_docid} + 1);
  }
  void next_geq(uint32_t target) override {
    if (target <= m_docid) return;  // also when exhausted
    seek(target);
  }

 private:
  void seek(uint64_t d) {
    for (; d < m_n_docs; ++d) {
      m_child->next_geq(static_cast<uint32_t>(d));
      if (m_child->docid() != d) break;
    }
    m_docid = d < m_n_docs ? static_cast<uint32_t>(d) : kEndDocid;
  }

  IteratorPtr m_child;
  uint64_t m_n_docs;
};

class IteratorBuilder {
 public:
  IteratorBuilder(const index::IndexReader& index, const std::vector<Node>& nodes,
                  const std::vector<PhraseSpec>& phrases)
      : m_index(index), m_nodes(nodes), m_phrases(phrases) {}

  IteratorPtr build(uint32_t id) const {
    const Node& node = m_nodes[id];
    switch (node.op) {
      case BoolOp::kTerm: return std::make_unique<CursorIterator<index::PostingCursor>>(m_index, node.arg);
      case BoolOp::kEmpty: return std::make_unique<EmptyIterator>();
      case BoolOp::kPhrase: return std::make_unique<CursorIterator<PhraseCursor>>(m_index, m_phrases[node.arg]);
      case BoolOp::kNot: return std::make_unique<NotIterator>(build(node.children[0]), m_index.n_docs());
      case BoolOp::kOr: return std::make_unique<OrIterator>(build_all(node.children), m_index.n_docs());
      case BoolOp::kAnd: break;
    }
    std::vector<uint32_t> positive, negative;
    for (uint32_t c : node.children) {
      if (m_nodes[c].op == BoolOp::kNot) {
        negative.push_back(m_nodes[c].children[0]);
      } else {
        positive.push_back(c);
      }
    }
    if (positive.empty()) {
      auto any = negative.size() == 1 ? build(negative[0])
                                      : std::make_unique<OrIterator>(build_all(negative), m_index.n_docs());
      return std::make_unique<NotIterator>(std::move(any), m_index.n_docs());
    }
    return std::make_unique<AndIterator>(build_all(positive), build_all(negative));
  }

 private:
  std::vector<IteratorPtr> build_all(const std::vector<uint32_t>& ids) const {
    std::vector<IteratorPtr> out;
    out.reserve(ids.size());
    for (uint32_t c : ids) out.push_back(build(c));
    return out;
  }

  const index::IndexReader& m_index;
  const std::vector<Node>& m_nodes;
  const std::vector<PhraseSpec>& m_phrases;
};

}  // namespace

std::vector<uint32_t> evaluate_boolean(const index::IndexReader& index, const BoolInstr* program,
                                       size_t n, const std::vector<PhraseSpec>& phrases) {
  for (const PhraseSpec& p : phrases) check_phrase(p, index.n_terms());
  uint32_t root = 0;
  const std::vector<Node> nodes = build_tree(index, program, n, phrases.size(), root);
  IteratorPtr it = IteratorBuilder(index, nodes, phrases).build(root);
  std::vector<uint32_t> out;
  for (; it->docid() != kEndDocid; it->next()) out.push_back(it->docid());
  return out;
}

}  // namespace mirkit::query
