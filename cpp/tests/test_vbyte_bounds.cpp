// Guard-page test for the vbyte decoders: input and output end right before an inaccessible
// page, so any read past in + in_len or write past out + n crashes. Every level must also give
// the scalar decoder's result (values and consumed bytes, or the same error message) on valid,
// truncated and mutated buffers. Build with -DMIRKIT_BUILD_TESTS=ON; exits non-zero on failure.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "codecs/vbyte.hpp"
#include "core/cpu_features.hpp"

namespace {

using mirkit::codecs::vbyte::kCodec;
namespace core = mirkit::core;

// `bytes` bytes whose end touches a PROT_NONE page.
struct Guarded {
  uint8_t* base = nullptr;
  size_t total = 0;
  uint8_t* data = nullptr;
  explicit Guarded(size_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t body = (bytes + page - 1) / page * page;
    total = body + page;
    void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base = static_cast<uint8_t*>(p);
    mprotect(base + body, page, PROT_NONE);
    data = base + body - bytes;
  }
  ~Guarded() { munmap(base, total); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
};

std::string run(const std::vector<uint8_t>& bytes, size_t n, bool sorted) {
  Guarded in(bytes.size()), out(n * sizeof(uint32_t));
  if (!bytes.empty()) std::memcpy(in.data, bytes.data(), bytes.size());
  auto* values = reinterpret_cast<uint32_t*>(out.data);
  try {
    const size_t used = sorted ? kCodec.decode_sorted(in.data, bytes.size(), values, n)
                               : kCodec.decode(in.data, bytes.size(), values, n);
    std::string r = "ok " + std::to_string(used) + ":";
    r.append(reinterpret_cast<const char*>(values), n * sizeof(uint32_t));
    return r;
  } catch (const std::invalid_argument& e) {
    return std::string("error ") + e.what();
  }
}

}  // namespace

int main() {
  std::mt19937_64 rng(20240601);
  const int top = static_cast<int>(core::detected_level());
  int failures = 0, cases = 0, rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = rng() % (trial < 1500 ? 300 : 5000);
    const int kind = static_cast<int>(rng() % 4);
    std::vector<uint32_t> x(n);
    for (auto& v : x) {
      const uint64_t r = rng();
      v = kind == 0 ? 1 : kind == 1 ? static_cast<uint32_t>(r % 300)
                    : kind == 2 ? static_cast<uint32_t>(r) : static_cast<uint32_t>(r >> (32 + r % 32));
    }
    std::vector<uint8_t> bytes(n * 5 + 8);
    bytes.resize(kCodec.encode(x.data(), n, bytes.data()));
    // Mutate a third, truncate a third, leave the rest.
    if (trial % 3 == 1 && !bytes.empty()) {
      for (int k = 0; k < 3; ++k) {
        const size_t at = rng() % bytes.size();
        bytes[at] = static_cast<uint8_t>(rng() % 4 == 0 ? 0x80 : rng());
      }
    } else if (trial % 3 == 2 && !bytes.empty()) {
      bytes.resize(rng() % bytes.size());
    }
    const size_t want = n - (n && rng() % 4 == 0 ? rng() % n : 0);  // sometimes fewer values
    for (bool sorted : {false, true}) {
      core::set_level_limit(core::SimdLevel::kScalar);
      const std::string expected = run(bytes, want, sorted);
      rejected += expected.rfind("error", 0) == 0;
      for (int level = 1; level <= top; ++level) {
        core::set_level_limit(static_cast<core::SimdLevel>(level));
        ++cases;
        if (run(bytes, want, sorted) != expected) {
          ++failures;
          std::printf("mismatch: trial %d level %s sorted %d n %zu bytes %zu\n", trial,
                      core::level_name(static_cast<core::SimdLevel>(level)), sorted, want,
                      bytes.size());
        }
      }
    }
  }
  std::printf("vbyte bounds: %d level comparisons, %d rejected inputs, %d failures\n", cases,
              rejected, failures);
  return failures == 0 ? 0 : 1;
}
