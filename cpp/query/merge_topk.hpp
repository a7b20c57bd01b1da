// Merging the top-k lists of the same queries from disjoint parts of a collection (the runs of
// shards or segments that Dask workers search: mirkit.distributed) into each query's global top k.
//
// Every list is best first: score descending, then docid ascending, the order of one index's
// results (query/topk_queue.hpp). Docids are global, so the parts' documents are distinct, and
// a k-way merge by the same order gives exactly the single index's top k: no score is recomputed
// and no sort runs (each output hit costs one comparison per run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace mirkit::query {

// One part's results of n queries: query i's hits are [offsets[i], offsets[i + 1]).
struct ResultRun {
  const uint64_t* offsets = nullptr;  // n + 1
  const uint32_t* docids = nullptr;
  const double* scores = nullptr;
};

// Whether hit (sa, da) ranks before hit (sb, db).
inline bool ranks_before(double sa, uint32_t da, double sb, uint32_t db) {
  return sa > sb || (sa == sb && da < db);
}

// Throws std::invalid_argument unless run r's hits of every query are in rank order (the merge
// relies on it; a wrong order would silently give a wrong top k).
inline void check_run_order(const ResultRun& run, size_t n, size_t r) {
  for (size_t q = 0; q < n; ++q) {
    for (uint64_t i = run.offsets[q] + 1; i < run.offsets[q + 1]; ++i) {
      if (!ranks_before(run.scores[i - 1], run.docids[i - 1], run.scores[i], run.docids[i])) {
        core::fail_value("run ", r, ", query ", q, ": hits ", i - 1 - run.offsets[q], " and ",
                         i - run.offsets[q], " are not in rank order (score descending, then "
                         "distinct docids ascending)");
      }
    }
  }
}

// The top k of each of n queries over all runs into offsets (n + 1), docids and scores.
inline void merge_topk(const std::vector<ResultRun>& runs, size_t n, uint32_t k,
                       std::vector<uint64_t>& offsets, std::vector<uint32_t>& docids,
                       std::vector<double>& scores) {
  offsets.assign(1, 0);
  offsets.reserve(n + 1);
  std::vector<uint64_t> head(runs.size()), end(runs.size());
  for (size_t q = 0; q < n; ++q) {
    for (size_t r = 0; r < runs.size(); ++r) {
      head[r] = runs[r].offsets[q];
      end[r] = runs[r].offsets[q + 1];
    }
    for (uint32_t taken = 0; taken < k; ++taken) {
      size_t best = runs.size();
      for (size_t r = 0; r < runs.size(); ++r) {
        if (head[r] == end[r]) continue;
        if (best == runs.size() ||
            ranks_before(runs[r].scores[head[r]], runs[r].docids[head[r]],
                         runs[best].scores[head[best]], runs[best].docids[head[best]])) {
          best = r;
        }
      }
      if (best == runs.size()) break;  // every run is exhausted
      docids.push_back(runs[best].docids[head[best]]);
      scores.push_back(runs[best].scores[head[best]]);
      ++head[best];
    }
    offsets.push_back(docids.size());
  }
}

}  // namespace mirkit::query
