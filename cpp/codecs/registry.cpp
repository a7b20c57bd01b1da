#include "codecs/bp128.hpp"
#include "codecs/codec.hpp"
#include "codecs/elias.hpp"
#include "codecs/elias_fano.hpp"
#include "codecs/stream_vbyte.hpp"
#include "codecs/vbyte.hpp"

namespace mirkit::codecs {

const std::vector<const Codec*>& registry() {
  static const std::vector<const Codec*> codecs{
      &vbyte::kCodec,
      &stream_vbyte::kCodec,
      &bp128::kCodec,
      &elias::kGammaCodec,
      &elias::kDeltaCodec,
      &elias_fano::kCodec,
  };
  return codecs;
}

const Codec* find_codec(std::string_view name) {
  for (const Codec* c : registry()) {
    if (c->name == name) return c;
  }
  return nullptr;
}

}  // namespace mirkit::codecs
