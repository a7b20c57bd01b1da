#include "bindings/common.hpp"
#include "core/cpu_features.hpp"

#ifndef MIRKIT_VERSION
#define MIRKIT_VERSION "unknown"
#endif
#ifndef MIRKIT_COMPILER
#define MIRKIT_COMPILER "unknown"
#endif

namespace mirkit::bindings {

void bind_core(py::module_& m) {
  using core::SimdLevel;
  m.attr("__version__") = MIRKIT_VERSION;
  m.attr("compiler") = MIRKIT_COMPILER;
  m.attr("simd_levels") = [] {
    py::list names;
    for (int i = 0; i < core::kNumLevels; ++i) names.append(core::level_name(SimdLevel(i)));
    return names;
  }();

  m.def("detected_simd_level", [] { return core::level_name(core::detected_level()); },
        "Highest instruction-set level this CPU supports.");
  m.def("simd_level", [] { return core::level_name(core::active_level()); },
        "Instruction-set level kernels use now.");
  m.def(
      "set_simd_level",
      [](const std::string& name) {
        auto level = core::parse_level(name);
        if (!level) throw py::value_error("unknown SIMD level '" + name + "'");
        core::set_level_limit(*level);
        return core::level_name(core::active_level());
      },
      py::arg("name"),
      "Force the level kernels use (never above the detected one; the per-CPU dispatch rules "
      "are off while forced); returns the level in force.");
  m.def(
      "unset_simd_level",
      [] {
        core::unset_level_limit();
        return core::level_name(core::active_level());
      },
      "Back to the default: the detected level, with the per-CPU dispatch rules on.");
  m.def("simd_level_forced", &core::level_forced,
        "True while MIRKIT_SIMD or set_simd_level holds the level (the dispatch rules are off).");
  m.def("cpu_description", [] {
    const auto& cpu = core::cpu_description();
    py::dict d;
    d["vendor"] = cpu.vendor;
    d["family"] = cpu.family;
    d["model"] = cpu.model;
    d["level"] = core::level_name(cpu.level);
    return d;
  }, "CPUID vendor, display family and model, and level: what the dispatch rule looks at.");
  m.def(
      "dispatch_reason",
      [](const std::string& family, const std::string& chosen) {
        auto f = core::parse_family(family);
        auto level = core::parse_level(chosen);
        if (!f) throw py::value_error("unknown kernel family '" + family + "'");
        if (!level) throw py::value_error("unknown SIMD level '" + chosen + "'");
        return core::dispatch_reason(*f, *level);
      },
      py::arg("family"), py::arg("chosen"),
      "Why `family` runs at level `chosen` in this process now (for mirkit info).");
  m.def(
      "dispatch_choice",
      [](const std::string& family, const std::string& vendor, unsigned cpu_family,
         unsigned model, const std::string& level, const std::vector<std::string>& paths) {
        // The rule on a described (possibly imagined) CPU, for tests: which of a table's paths
        // it picks at the CPU's level, default dispatch (nothing forced), and why.
        auto f = core::parse_family(family);
        auto cpu_level = core::parse_level(level);
        if (!f) throw py::value_error("unknown kernel family '" + family + "'");
        if (!cpu_level) throw py::value_error("unknown SIMD level '" + level + "'");
        unsigned available = 1;
        for (const auto& p : paths) {
          auto l = core::parse_level(p);
          if (!l) throw py::value_error("paths: unknown SIMD level '" + p + "'");
          available |= 1u << static_cast<int>(*l);
        }
        const core::CpuDescription cpu{vendor, cpu_family, model, *cpu_level};
        const int top = static_cast<int>(*cpu_level);
        const auto chosen = static_cast<SimdLevel>(
            core::pick_level(available, top, core::dispatch_rule(*f, cpu).avoid));
        return py::make_tuple(core::level_name(chosen),
                              core::dispatch_reason(*f, cpu, *cpu_level, false, chosen));
      },
      py::arg("family"), py::arg("vendor"), py::arg("cpu_family"), py::arg("model"),
      py::arg("level"), py::arg("paths"));
  m.def("cpu_features", [] {
    const auto& f = core::cpu_features();
    py::dict d;
    d["ssse3"] = f.ssse3; d["sse4.1"] = f.sse41; d["sse4.2"] = f.sse42; d["popcnt"] = f.popcnt;
    d["avx2"] = f.avx2; d["fma"] = f.fma; d["bmi1"] = f.bmi1; d["bmi2"] = f.bmi2;
    d["lzcnt"] = f.lzcnt; d["avx512f"] = f.avx512f; d["avx512bw"] = f.avx512bw;
    d["avx512vl"] = f.avx512vl; d["avx512dq"] = f.avx512dq; d["avx512vbmi"] = f.avx512vbmi;
    d["avx512vbmi2"] = f.avx512vbmi2;
    d["avx512bf16"] = f.avx512bf16;
    d["avx512vpopcntdq"] = f.avx512vpopcntdq;
    return d;
  });
}

}  // namespace mirkit::bindings
