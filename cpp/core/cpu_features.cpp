#include "core/cpu_features.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#if defined(MIRKIT_X86_SIMD)
#include <cpuid.h>
#endif

namespace mirkit::core {

namespace {

#if defined(MIRKIT_X86_SIMD)
uint64_t read_xcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if defined(MIRKIT_X86_SIMD)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.ssse3 = c & bit_SSSE3;
  f.sse41 = c & bit_SSE4_1;
  f.sse42 = c & bit_SSE4_2;
  f.popcnt = c & bit_POPCNT;
  f.fma = c & bit_FMA;
  const bool osxsave = c & bit_OSXSAVE;
  const bool avx = c & bit_AVX;
  if (osxsave && avx) {
    const uint64_t xcr0 = read_xcr0();
    f.os_avx = (xcr0 & 0x6) == 0x6;        // XMM and YMM state
    f.os_avx512 = (xcr0 & 0xe6) == 0xe6;   // + opmask, ZMM_Hi256, Hi16_ZMM
  }
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.bmi1 = b & bit_BMI;
    f.bmi2 = b & bit_BMI2;
    f.avx2 = (b & bit_AVX2) && f.os_avx;
    f.avx512f = (b & bit_AVX512F) && f.os_avx512;
    f.avx512dq = (b & bit_AVX512DQ) && f.os_avx512;
    f.avx512bw = (b & bit_AVX512BW) && f.os_avx512;
    f.avx512vl = (b & bit_AVX512VL) && f.os_avx512;
    f.avx512vbmi = (c & bit_AVX512VBMI) && f.os_avx512;
    f.avx512vbmi2 = (c & bit_AVX512VBMI2) && f.os_avx512;
    f.avx512vpopcntdq = (c & (1u << 14)) && f.os_avx512;  // CPUID.7.0:ECX[14]
    // Leaf 7 subleaf 1 exists when subleaf 0 reports a maximum subleaf >= 1 (in EAX).
    unsigned a1, b1, c1, d1;
    if (a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) {
      f.avx512bf16 = (a1 & (1u << 5)) && f.os_avx512;
    }
  }
  if (__get_cpuid(0x80000001, &a, &b, &c, &d)) f.lzcnt = c & bit_LZCNT;
  f.fma = f.fma && f.os_avx;
#endif
  return f;
}

SimdLevel level_of(const CpuFeatures& f) {
  if (!(f.ssse3 && f.sse41 && f.sse42 && f.popcnt)) return SimdLevel::kScalar;
  if (!(f.avx2 && f.fma && f.bmi1 && f.bmi2 && f.lzcnt)) return SimdLevel::kSse4;
  if (!(f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq)) return SimdLevel::kAvx2;
  if (!(f.avx512vbmi && f.avx512vbmi2)) return SimdLevel::kAvx512;
  return SimdLevel::kAvx512Vbmi;
}

std::atomic<bool> g_forced{false};

// Turns the rules on (avoid masks of this CPU) or off (all zero, while a level is forced).
void set_rules(bool on) {
  for (int i = 0; i < kNumKernelFamilies; ++i) {
    const unsigned avoid =
        on ? dispatch_rule(static_cast<KernelFamily>(i), cpu_description()).avoid : 0u;
    detail::g_avoid[i].store(avoid, std::memory_order_relaxed);
  }
  g_forced.store(!on, std::memory_order_relaxed);
}

int initial_level() {
  int level = static_cast<int>(detected_level());
  bool forced = false;
  if (const char* env = std::getenv("MIRKIT_SIMD")) {
    // An unknown name keeps the detected level; the Python layer reports it as a warning.
    if (auto limit = parse_level(env)) {
      level = std::min(level, static_cast<int>(*limit));
      forced = true;
    }
  }
  set_rules(!forced);
  return level;
}

}  // namespace

namespace detail {
// g_avoid is constant-initialised (zero) before initial_level() fills it in.
std::atomic<unsigned> g_avoid[kNumKernelFamilies] = {};
std::atomic<int> g_active_level{initial_level()};
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

SimdLevel detected_level() { return level_of(cpu_features()); }

SimdLevel active_level() {
  return static_cast<SimdLevel>(detail::g_active_level.load(std::memory_order_relaxed));
}

bool bf16_dot_active() {
  return cpu_features().avx512bf16 && active_level() >= SimdLevel::kAvx512;
}

void set_level_limit(SimdLevel limit) {
  const int level = std::min(static_cast<int>(limit), static_cast<int>(detected_level()));
  set_rules(false);
  detail::g_active_level.store(level, std::memory_order_relaxed);
}

void unset_level_limit() {
  set_rules(true);
  detail::g_active_level.store(static_cast<int>(detected_level()), std::memory_order_relaxed);
}

bool level_forced() { return g_forced.load(std::memory_order_relaxed); }

const char* level_name(SimdLevel level) {
  switch (level) {
    case SimdLevel::kScalar: return "scalar";
    case SimdLevel::kSse4: return "sse4";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kAvx512: return "avx512";
    case SimdLevel::kAvx512Vbmi: return "avx512vbmi";
  }
  return "unknown";
}

std::optional<SimdLevel> parse_level(std::string_view name) {
  for (int i = 0; i < kNumLevels; ++i) {
    const auto level = static_cast<SimdLevel>(i);
    if (name == level_name(level)) return level;
  }
  return std::nullopt;
}

}  // namespace mirkit::core
