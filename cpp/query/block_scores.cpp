#include "query/block_scores.hpp"

#include "query/cursor.hpp"

namespace mirkit::query {

namespace scalar {
void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out) {
  const Bm25Scorer scorer{norms};
  const TermParams params{};
  for (uint32_t i = 0; i < n; ++i) out[i] = to_fixed(weight * scorer.f(params, docs[i], freqs[i]));
}
}  // namespace scalar

namespace {
#if defined(__x86_64__) || defined(_M_X64)
const core::Dispatch<Bm25BlockKernel> kBm25Block{
    {scalar::bm25_block, sse4::bm25_block, avx2::bm25_block, avx512::bm25_block}};
#else
const core::Dispatch<Bm25BlockKernel> kBm25Block{{scalar::bm25_block}};
#endif
}  // namespace

void bm25_block_scores(const uint32_t* docs, const uint32_t* freqs, uint32_t n,
                       const float* norms, double weight, Score* out) {
  kBm25Block.get()(docs, freqs, n, norms, weight, out);
}

core::SimdLevel bm25_block_level() { return kBm25Block.chosen(); }

}  // namespace mirkit::query
