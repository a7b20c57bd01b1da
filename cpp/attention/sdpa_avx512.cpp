// AVX-512 float32 attention: the tiled kernel of sdpa_tiled.inl on 16-lane vectors.
#include <immintrin.h>

#include "attention/sdpa_avx512_traits.hpp"
#include "attention/sdpa_tiled.inl"

namespace mirkit::attention::detail {

void sdpa_avx512(const Problem& p, const Tensors<float>& t) {
  sdpa_f32<Avx512>(p, t, kAvx512BlockK);
}

}  // namespace mirkit::attention::detail
