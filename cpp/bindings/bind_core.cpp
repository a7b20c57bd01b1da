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
      "Cap the level kernels use (never above the detected one); returns the level in force.");
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
