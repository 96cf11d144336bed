// Planner calibration: the constants the memory and time models need beyond the catalogue
// (kernel efficiencies, collective latencies, link efficiencies, reserves, overlap), each flagged
// measured or modelled with its source. Files: <data dir>/calibration/planner_<vendor>.json (the
// vendor defaults, required) overlaid by planner_<gpu>.json when present (e.g. H200 measurements).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/hw/hardware_spec.hpp"

namespace parity::plan {

inline constexpr const char* kPlannerCalibrationSchema = "parity.plan.calibration/1";

struct CalibratedValue {
  double value = 0.0;
  bool is_measured = false;  // false: modelled (an assumption or a third-party figure)
  std::string source;
};

struct PlannerCalibration {
  std::vector<std::string> files;  // the files read, in overlay order
  // Sustained fraction of the catalogue HBM bandwidth, per TBE byte model pass.
  CalibratedValue tbe_forward_efficiency{0.7, false, "default"};
  CalibratedValue tbe_backward_efficiency{0.7, false, "default"};
  // Costs of the trainer's TBE kernels beyond their bytes: per bag in the forward (the
  // group-per-bag kernel's bag set-up), and per pass the fixed cost of its kernels (the forward's
  // launch; the backward's linearise, radix-sort passes, chunk and combine kernels).
  CalibratedValue tbe_forward_bag_ns{0.0, false, "default"};
  CalibratedValue tbe_forward_fixed_us{5.0, false, "default"};
  CalibratedValue tbe_backward_bag_ns{0.0, false, "default"};
  CalibratedValue tbe_backward_fixed_us{15.0, false, "default"};
  // The dot interaction's kernels: the general one-block-per-sample kernels' sustained fraction of
  // HBM bandwidth on their traffic counted in fp32 elements (they stage every operand as fp32 in
  // shared memory); the fast variants' (Gram tiles, register columns) on their HBM bytes, with
  // fp32 activations and with 16-bit ones (measured apart: the bf16 path runs at half the fp32
  // path's fraction).
  CalibratedValue interaction_efficiency{0.5, false, "default"};
  CalibratedValue interaction_fast_efficiency{0.8, false, "default"};
  CalibratedValue interaction_fast_efficiency_16bit{0.8, false, "default"};
  // A weight-gradient GEMM with the bias-gradient epilogue (cuBLASLt BGRADB): its time beyond the
  // plain GEMM, per sample of the batch (the GEMM's reduction length k) and per layer with a bias.
  // Measured about the same for every layer width at one batch, so it grows with k, not with the
  // gradient's size, and it is no per-launch constant (docs/planner.md, "Linear layers").
  CalibratedValue bias_gradient_ns_per_sample{0.0, false, "default"};
  // The trainer's TF32 GEMMs' time over the GEMM model's TF32 prediction, per operand layout (the
  // model's scalars are calibrated on bf16 GEMMs): TN (forward, both operands K-major), NN (data
  // gradient, A M-major) and NT (weight gradient, both MN-major). Hopper's TF32 tensor-core
  // instructions read K-major operands only, so each MN-major operand costs extra.
  CalibratedValue tf32_tn_gemm_time_factor{1.0, false, "default"};
  CalibratedValue tf32_nn_gemm_time_factor{1.0, false, "default"};
  CalibratedValue tf32_nt_gemm_time_factor{1.0, false, "default"};
  CalibratedValue elementwise_efficiency{0.8, false, "default"};  // fused element-wise kernels
  CalibratedValue kernel_launch_us{5.0, false, "default"};        // per non-GEMM kernel
  // Achievable fraction of the per-link / per-NIC peak for bulk transfers.
  CalibratedValue scale_up_efficiency{0.8, false, "default"};
  CalibratedValue scale_out_efficiency{0.8, false, "default"};
  // alpha terms: fixed cost of a collective, per ring step inside a domain, per network step.
  CalibratedValue collective_base_us{8.0, false, "default"};
  CalibratedValue scale_up_step_us{1.0, false, "default"};
  CalibratedValue scale_out_step_us{5.0, false, "default"};
  // In-switch reduction (NVLS): all-reduce bus bandwidth multiplier; 1 = none (full mesh).
  CalibratedValue in_switch_reduction_speedup{1.0, false, "default"};
  // Memory: fraction of HBM the caching allocator loses to fragmentation; bytes the runtime
  // context and communication library hold; input batches in flight (pipelining).
  CalibratedValue allocator_reserve_fraction{0.05, false, "default"};
  CalibratedValue runtime_reserve_gb{1.0, false, "default"};
  CalibratedValue comm_library_buffer_gb{0.5, false, "default"};
  CalibratedValue input_batches_in_flight{2.0, false, "default"};
  // Overlap the trainer does: fraction of the dense backward that hides the dense all-reduce,
  // of the bottom-MLP forward that hides the pooled-embedding all-to-all, and whether the next
  // batch's input distribution runs under this step's compute (1) or not (0).
  CalibratedValue allreduce_overlap_fraction{0.0, false, "default"};
  CalibratedValue embedding_a2a_overlap_fraction{0.0, false, "default"};
  CalibratedValue input_dist_overlap_fraction{0.0, false, "default"};
  CalibratedValue step_overhead_us{50.0, false, "default"};  // host/framework per step

  // Every value with its JSON key, for the reader, the writer and reports.
  struct Field {
    std::string_view key;
    CalibratedValue PlannerCalibration::*member;
  };
  static std::vector<Field> fields();
};

// Reads the JSON `text` over `base` (only the keys present change). `origin` prefixes messages.
Result<PlannerCalibration> overlay_planner_calibration_text(const PlannerCalibration& base,
                                                            std::string_view text,
                                                            std::string_view origin);
// The calibration as JSON text that overlay_planner_calibration_text reads back.
std::string planner_calibration_to_json_text(const PlannerCalibration& calibration,
                                             std::string_view device);
// planner_<vendor>.json then planner_<gpu name>.json (optional) from <data dir>/calibration.
Result<PlannerCalibration> load_planner_calibration(
    const hw::HardwareSpec& gpu, const std::optional<std::filesystem::path>& data_dir);

}  // namespace parity::plan
