// Helpers shared by the device-measuring subcommands (bench hbm, hw probe, bench gemm): the
// "needs a CUDA device" check that comes after argument validation, and the process's own argv
// for provenance (read back from /proc, since subcommand callbacks do not receive argv).
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "parity/build_info.hpp"
#include "parity/core/status.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#endif

namespace parity::cli {

/// kUnsupported (exit 3) when this build has no CUDA backend or no device is visible.
inline Status require_cuda_device(const std::string& command) {
#ifdef PARITY_HAS_CUDA
  if (gpu::device_count() == 0) return unsupported(command, ": no CUDA device visible (needs an NVIDIA GPU)");
  return Status::ok();
#else
  return unsupported(command, ": built without CUDA; configure with `cmake --preset cuda` on a machine "
                              "with an NVIDIA GPU");
#endif
}

/// The command line as argv strings (empty if /proc is unavailable).
class ProcessArgs {
 public:
  ProcessArgs() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string current;
    for (char c : raw) {
      if (c == '\0') {
        args_.push_back(current);
        current.clear();
      } else {
        current.push_back(c);
      }
    }
    if (!current.empty()) args_.push_back(current);
    for (auto& arg : args_) pointers_.push_back(arg.data());
  }
  int argc() const { return static_cast<int>(pointers_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> pointers_;
};

}  // namespace parity::cli
