// The union of several indexes' lexicons with their summed statistics: the global lexicon of a
// document-partitioned collection (mirkit.distributed), whose shards are separate indexes.
#pragma once

#include <cstdint>
#include <vector>

#include "index/reader.hpp"

namespace mirkit::index {

struct MergedLexicon {
  std::vector<uint8_t> terms;          // the distinct terms, sorted bytewise, concatenated
  std::vector<uint64_t> term_offsets;  // n_terms + 1 offsets into terms
  std::vector<uint32_t> df;            // summed over the shards (each document is in one)
  std::vector<uint64_t> cf;
  std::vector<std::vector<uint32_t>> local_to_global;  // per shard: its term ids -> global ids
};

// k-way merge of the shards' sorted lexicons, O(total terms * log shards) comparisons.
// std::invalid_argument if the summed document frequencies overflow 32 bits.
MergedLexicon merge_lexicons(const std::vector<const IndexReader*>& shards);

}  // namespace mirkit::index
