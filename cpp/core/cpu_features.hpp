// Run-time instruction-set detection and the dispatch rule shared by every kernel family.
//
// The build compiles each SIMD path in its own file with its own flags (see CMakeLists.txt);
// a Dispatch table holds one function pointer per level and, at each call, returns the best one
// not above the active level. The active level is the detected one, lowered by the environment
// variable MIRKIT_SIMD (read once) or by set_level_limit(), so the scalar fallback can be forced
// and tested on any machine.
//
// Widest is not always fastest: a kernel family may name itself (Dispatch::family), and unless a
// level is forced, the dispatch rule (dispatch_rule(), cpp/core/dispatch_rules.cpp) may steer it
// away from some levels on some CPUs (by vendor, family and model). Forcing a level (MIRKIT_SIMD,
// set_level_limit()) turns the rules off, so every path stays reachable and testable anywhere.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
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
// This forces the level: the per-CPU dispatch rules are off until unset_level_limit() goes back
// to the default ("auto": the detected level, rules on).
void set_level_limit(SimdLevel limit);
void unset_level_limit();
// True when MIRKIT_SIMD or set_level_limit() holds the level (the rules are off).
bool level_forced();

// The BF16 dot-product kernels (vdpbf16ps) run when the CPU has them and the active level is
// AVX-512 or above, so MIRKIT_SIMD / set_simd_level can still force the float32 paths.
bool bf16_dot_active();

const char* level_name(SimdLevel level);
std::optional<SimdLevel> parse_level(std::string_view name);

// Kernel families that the dispatch rule knows by name; every other family is kOther (always
// the widest path it has, up to the active level).
enum class KernelFamily : int {
  kOther = 0,
  kStreamVbyteDecode = 1,
  kVbyteDecode = 2,
};
inline constexpr int kNumKernelFamilies = 3;
const char* family_name(KernelFamily family);
std::optional<KernelFamily> parse_family(std::string_view name);

// What the rule looks at: CPUID's vendor string, display family and model, and the level.
struct CpuDescription {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...; empty off x86
  unsigned family = 0, model = 0;
  SimdLevel level = SimdLevel::kScalar;
};
// This machine (computed once). MIRKIT_DISPATCH_CPU="<vendor> <family> <model>" (numbers in
// decimal or 0x hex) replaces the vendor, family and model the rule sees, not the features: a
// test hook that runs the Zen 4 rule on an Intel CPU, for instance.
const CpuDescription& cpu_description();

// The rule: levels (bit i = SimdLevel i) that `family` should not use on `cpu` by default, and
// the measured reason. avoid == 0 (and reason nullptr) where the widest path is the fastest.
struct DispatchRule {
  unsigned avoid = 0;
  const char* reason = nullptr;
};
DispatchRule dispatch_rule(KernelFamily family, const CpuDescription& cpu);

// Level a table with paths at `available` (bit i = a path at level i; bit 0 always set) runs at
// under the cap `cap`, skipping the levels in `avoid`: what Dispatch::chosen() computes.
int pick_level(unsigned available, int cap, unsigned avoid);

// Why a family runs at `chosen` (a forced level, a rule, or the widest path): for mirkit info.
// The first form describes any CPU (for tests), the second this process now.
std::string dispatch_reason(KernelFamily family, const CpuDescription& cpu, SimdLevel cap,
                            bool forced, SimdLevel chosen);
std::string dispatch_reason(KernelFamily family, SimdLevel chosen);

namespace detail {
extern std::atomic<int> g_active_level;
// Per family: the rule's avoid mask for this CPU, or 0 while a level is forced.
extern std::atomic<unsigned> g_avoid[kNumKernelFamilies];
}

// One function pointer per level; nullptr where a family has no path at that level.
// The scalar entry must always be set: it is the reference and the fallback.
template <class Fn>
struct Dispatch {
  std::array<Fn, kNumLevels> impl{};
  KernelFamily family = KernelFamily::kOther;

  int chosen_index() const {
    int level = detail::g_active_level.load(std::memory_order_relaxed);
    const unsigned avoid =
        detail::g_avoid[static_cast<int>(family)].load(std::memory_order_relaxed);
    while (level > 0 && (impl[level] == nullptr || ((avoid >> level) & 1u))) --level;
    return level;
  }
  unsigned available() const {
    unsigned mask = 0;
    for (int i = 0; i < kNumLevels; ++i) mask |= (impl[i] != nullptr ? 1u : 0u) << i;
    return mask | 1u;
  }
  Fn get() const { return impl[chosen_index()]; }
  SimdLevel chosen() const { return static_cast<SimdLevel>(chosen_index()); }
};

}  // namespace mirkit::core
