// The dispatch rule: which SIMD path each kernel family takes on which CPU, when the widest one
// it supports is not the fastest. Every rule states the measurement behind it; a family with no
// rule takes the widest path it has, up to the active level (cpu_features.hpp).
//
// Rules (x86 CPUID display family/model; levels as in SimdLevel):
//
// - Stream VByte decode, AMD family 0x19 (Zen 3/Zen 4; only Zen 4 has AVX-512): skip the
//   avx512 and avx512vbmi decoders, so the AVX2 one runs. Zen 4 executes vpcompressb/vpexpandb
//   with a memory operand and some byte permutes as microcode; measured 1 thread on a Zen 4
//   (issue 30): the VBMI decoder took 2.15x pyfastpfor's streamvbyte time, mirkit's SSE4 path
//   1.16x, its AVX2 path 1.07x. Intel CPUs (Ice Lake, Sapphire Rapids) run the VBMI decoder at
//   0.99-1.10x pyfastpfor's time and keep it. Zen 5 (family 0x1a) has not been measured, so it
//   keeps the widest path.
// - VByte decode, AMD before family 0x19 (Zen 1/Zen 2, family 0x17, and the BMI2 Bulldozer
//   cores, 0x15): skip the avx2 and avx512 decoders, so the SSE4 one runs. Their windowed step
//   (vbyte_masked.inl) finds integer ends with pdep, which these cores run in microcode (Agner
//   Fog's tables: 18-250+ cycles, growing with the mask's set bits, on Zen 2, against 3 on
//   Intel since Haswell and on Zen 3); the SSE4 decoder has no pdep. Not measured on those
//   CPUs here (none at hand): the rule follows the published latencies.
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/cpu_features.hpp"

#if defined(MIRKIT_X86_SIMD)
#include <cpuid.h>
#endif

namespace mirkit::core {

namespace {

constexpr unsigned bit(SimdLevel level) { return 1u << static_cast<int>(level); }

CpuDescription detect_description() {
  CpuDescription cpu;
  cpu.level = detected_level();
#if defined(MIRKIT_X86_SIMD)
  unsigned a, b, c, d;
  if (__get_cpuid(0, &a, &b, &c, &d)) {
    char vendor[13];
    for (int i = 0; i < 4; ++i) {
      vendor[i] = static_cast<char>(b >> (8 * i));
      vendor[4 + i] = static_cast<char>(d >> (8 * i));
      vendor[8 + i] = static_cast<char>(c >> (8 * i));
    }
    vendor[12] = '\0';
    cpu.vendor = vendor;
  }
  if (__get_cpuid(1, &a, &b, &c, &d)) {
    // Display family and model (Intel SDM vol. 2A, CPUID leaf 1; AMD uses the same rule).
    const unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
    cpu.family = base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family;
    cpu.model = (base_family == 0x6 || base_family == 0xf) ? (((a >> 16) & 0xf) << 4) | base_model
                                                           : base_model;
  }
#endif
  // Test hook: "<vendor> <family> <model>" replaces what the rule sees (not the features).
  // A malformed value is ignored (the Python layer warns about it).
  if (const char* env = std::getenv("MIRKIT_DISPATCH_CPU")) {
    std::istringstream in(env);
    std::string vendor, family, model, rest;
    if (in >> vendor >> family >> model && !(in >> rest)) {
      char *end_f = nullptr, *end_m = nullptr;
      const unsigned long f = std::strtoul(family.c_str(), &end_f, 0);
      const unsigned long m = std::strtoul(model.c_str(), &end_m, 0);
      if (*end_f == '\0' && *end_m == '\0') {
        cpu.vendor = vendor;
        cpu.family = static_cast<unsigned>(f);
        cpu.model = static_cast<unsigned>(m);
      }
    }
  }
  return cpu;
}

}  // namespace

const CpuDescription& cpu_description() {
  static const CpuDescription cpu = detect_description();
  return cpu;
}

const char* family_name(KernelFamily family) {
  switch (family) {
    case KernelFamily::kOther: return "other";
    case KernelFamily::kStreamVbyteDecode: return "codecs.stream_vbyte.decode";
    case KernelFamily::kVbyteDecode: return "codecs.vbyte.decode";
  }
  return "unknown";
}

std::optional<KernelFamily> parse_family(std::string_view name) {
  for (int i = 0; i < kNumKernelFamilies; ++i) {
    const auto family = static_cast<KernelFamily>(i);
    if (name == family_name(family)) return family;
  }
  return std::nullopt;
}

DispatchRule dispatch_rule(KernelFamily family, const CpuDescription& cpu) {
  const bool amd = cpu.vendor == "AuthenticAMD";
  if (family == KernelFamily::kStreamVbyteDecode && amd && cpu.family == 0x19) {
    return {bit(SimdLevel::kAvx512) | bit(SimdLevel::kAvx512Vbmi),
            "rule: AMD family 0x19 (Zen 4) runs vpcompressb/vpexpandb to memory and some byte "
            "permutes in microcode; its VBMI decoder measured 2.15x pyfastpfor's time, AVX2 1.07x"};
  }
  if (family == KernelFamily::kVbyteDecode && amd && cpu.family < 0x19) {
    return {bit(SimdLevel::kAvx2) | bit(SimdLevel::kAvx512) | bit(SimdLevel::kAvx512Vbmi),
            "rule: AMD before family 0x19 (Zen 1/2, Bulldozer) runs pdep in microcode (18-250+ "
            "cycles), which the AVX2 VByte decoder's windowed step uses; the SSE4 one does not"};
  }
  return {};
}

int pick_level(unsigned available, int cap, unsigned avoid) {
  int level = cap;
  while (level > 0 && (!((available >> level) & 1u) || ((avoid >> level) & 1u))) --level;
  return level;
}

std::string dispatch_reason(KernelFamily family, const CpuDescription& cpu, SimdLevel cap,
                            bool forced, SimdLevel chosen) {
  const std::string at = level_name(chosen);
  if (forced) {
    const std::string why =
        std::string("held to ") + level_name(cap) + " by MIRKIT_SIMD or set_simd_level";
    return chosen == cap ? why : why + "; " + at + " is the widest path this kernel has below it";
  }
  const int c = static_cast<int>(chosen), top = static_cast<int>(cap);
  const DispatchRule rule = dispatch_rule(family, cpu);
  const unsigned above = top > c ? ((1u << (top + 1)) - 1) & ~((1u << (c + 1)) - 1) : 0u;
  if (rule.avoid & above) return rule.reason;
  if (chosen == cap) return "the widest path; the CPU's best level";
  return "the widest path this kernel has (the CPU has " + std::string(level_name(cap)) + ")";
}

std::string dispatch_reason(KernelFamily family, SimdLevel chosen) {
  return dispatch_reason(family, cpu_description(), active_level(), level_forced(), chosen);
}

}  // namespace mirkit::core
