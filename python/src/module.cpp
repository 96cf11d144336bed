// parity._core: the nanobind module over the C++ library. It stays thin: each function converts
// Python values, calls one library function and converts the Status into an exception
// (convert.hpp). The Python package (python/parity) adds dataclasses, defaults and docstrings.
#include <nanobind/stl/string.h>

#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "parity/build_info.hpp"
#if defined(PARITY_HAS_CUDA)
#include "parity/core/gpu.hpp"
#endif

NB_MODULE(_core, module) {
  namespace nb = nanobind;
  module.doc() = "Parity's C++ library (catalogue, GEMM selector, TBE); use the `parity` package instead.";
  nb::exception<parity::python::UnsupportedError>(module, "UnsupportedError", PyExc_NotImplementedError);
  module.def(
      "build_info",
      [] {
        nb::dict info;
        info["version"] = std::string(parity::build::kVersion);
        info["git_sha"] = std::string(parity::build::kGitSha);
        info["build_type"] = std::string(parity::build::kBuildType);
        info["cuda_archs"] = std::string(parity::build::kCudaArchs);
        info["has_cuda"] = parity::build::kHasCuda;
#if defined(PARITY_HAS_CUDA)
        info["gpu_device_count"] = parity::gpu::device_count();
#else
        info["gpu_device_count"] = 0;
#endif
        return info;
      },
      "Version, commit, build type, compiled CUDA architectures, and the GPUs this build can see.");
  parity::python::bind_hw(module);
  parity::python::bind_gemm(module);
  parity::python::bind_tbe(module);
}
