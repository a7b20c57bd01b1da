// Run-time instruction-set detection and the dispatch rule shared by every kernel family.
//
// The build compiles each SIMD path in its own file with its own flags (see CMakeLists.txt);
// a Dispatch table holds one function pointer per level and, at each call, returns the best one
// not above the active level. The active level is the detected one, lowered by the environment
// variable MIRKIT_SIMD (read once) or by set_level_limit(), so the scalar fallback can be forced
// and tested on any machine.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <optional>
#include <string_view>

namespace mirkit::core {

enum class SimdLevel : int {
  kScalar = 0,
  kSse4 = 1,        // SSSE3 + SSE4.1 + SSE4.2 + POPCNT
  kAvx2 = 2,        // AVX2 + FMA + BMI1/2 + LZCNT
  kAvx512 = 3,      // AVX-512 F/BW/VL/DQ (+ the AVX2 set)
  kAvx512Vbmi = 4,  // + AVX-512 VBMI/VBMI2 (Ice Lake, Zen 4 and later)
};
inline constexpr int kNumLevels = 5;

struct CpuFeatures {
  bool ssse3 = false, sse41 = false, sse42 = false, popcnt = false;
  bool avx2 = false, fma = false, bmi1 = false, bmi2 = false, lzcnt = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512vbmi = false, avx512vbmi2 = false;
  bool avx512bf16 = false;  // an extension, not a level: kernels check it and active_level()
  bool avx512vpopcntdq = false;  // an extension too (Ice Lake, Zen 4): 64-bit lane popcount
  bool os_avx = false, os_avx512 = false;  // XCR0 says the OS saves the wide registers
};

// What this CPU and OS support (computed once).
const CpuFeatures& cpu_features();
// Highest level this CPU supports.
SimdLevel detected_level();
// Level kernels use now: min(detected, limit). The limit starts at MIRKIT_SIMD if set.
SimdLevel active_level();
// Lower (or raise back, up to detected) the level; thread-safe, takes effect on the next call.
void set_level_limit(SimdLevel limit);

const char* level_name(SimdLevel level);
std::optional<SimdLevel> parse_level(std::string_view name);

namespace detail {
extern std::atomic<int> g_active_level;
}

// One function pointer per level; nullptr where a family has no path at that level.
// The scalar entry must always be set: it is the reference and the fallback.
template <class Fn>
struct Dispatch {
  std::array<Fn, kNumLevels> impl{};

  int chosen_index() const {
    int level = detail::g_active_level.load(std::memory_order_relaxed);
    while (level > 0 && impl[level] == nullptr) --level;
    return level;
  }
  Fn get() const { return impl[chosen_index()]; }
  SimdLevel chosen() const { return static_cast<SimdLevel>(chosen_index()); }
};

}  // namespace mirkit::core
