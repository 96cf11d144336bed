// Modelled candidate spaces: the configurations a vendor library offers, generated from rules so
// selection works on a machine without a GPU. They mirror the real spaces' features (tiles,
// clusters / XCD mapping, split-K, stream-K, ...) but carry no payload and cannot run.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "parity/gemm/candidate.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/problem.hpp"
#include "parity/gemm/provider.hpp"

namespace parity::gemm {

// Hopper cuBLASLt-like: tiles m,n in {64,128,192,256}, tile_k = 128 bytes of the input type
// (64 for bf16/fp16, 32 for tf32), clusters 1x1/2x1/1x2/2x2, split-K 1/2/4/8 with fp32 partials
// reduced by a second kernel, stages chosen by the kernel. 256 candidates.
std::vector<Candidate> hopper_modelled_space(const ProblemClass& key);

// AMD hipBLASLt/Triton-like for gfx942 / gfx950 (`mi_k_16`, `mi_k_32` from DeviceParams): macro
// tiles from Origami's tile list, MFMA 16x16 and 32x32 shapes, occupancy 1/2, WGM 1/4/8 with the
// contiguous per-XCD mapping, round-robin dispatch (WGM 1), and stream-K; LDS-infeasible tiles
// are left out.
std::vector<Candidate> amd_modelled_space(const ProblemClass& key, const DeviceParams& device);

// The space for a device: Hopper-like for NVIDIA devices, AMD-like for AMD ones.
std::vector<Candidate> modelled_space(const ProblemClass& key, const DeviceParams& device);

// A Provider over a modelled space: enumerates (cached per problem class), checks feature
// feasibility and workspace, and cannot run (kUnsupported).
class ModelledProvider final : public Provider {
 public:
  explicit ModelledProvider(DeviceParams device) : device_(std::move(device)) {}
  std::string_view name() const override { return "modelled"; }
  Result<std::vector<Candidate>> enumerate(const GemmProblem& problem) override;
  Status check(const GemmProblem& problem, const Candidate& candidate) override;
  Status run(const GemmProblem& problem, const Candidate& candidate,
             const GemmOperands& operands) override;

 private:
  DeviceParams device_;
  std::unordered_map<std::uint64_t, std::vector<Candidate>> cache_;
};

}  // namespace parity::gemm
