#include "parity/hw/hardware_spec.hpp"

#include <array>

namespace parity::hw {

std::string_view provenance_kind_name(ProvenanceKind kind) {
  switch (kind) {
    case ProvenanceKind::kVendorSpec:
      return "vendor_spec";
    case ProvenanceKind::kMeasuredThirdParty:
      return "measured_third_party";
    case ProvenanceKind::kMeasuredHere:
      return "measured_here";
    case ProvenanceKind::kDerived:
      return "derived";
  }
  return "unknown";
}

std::string_view vendor_name(Vendor vendor) {
  switch (vendor) {
    case Vendor::kNvidia:
      return "nvidia";
    case Vendor::kAmd:
      return "amd";
  }
  return "unknown";
}

std::string_view scale_up_topology_name(ScaleUpTopology topology) {
  switch (topology) {
    case ScaleUpTopology::kSwitched:
      return "switched";
    case ScaleUpTopology::kFullMesh:
      return "full_mesh";
  }
  return "unknown";
}

namespace {

using D = QuantityDomain;
using S = HardwareSpec;

constexpr std::array kQuantityFields{
    QuantityField{"dense_bf16_tflops", "Dense BF16", "TFLOP/s", D::kPositiveReal,
                  &S::dense_bf16_tflops},
    QuantityField{"dense_fp16_tflops", "Dense FP16", "TFLOP/s", D::kPositiveReal,
                  &S::dense_fp16_tflops},
    QuantityField{"dense_fp8_tflops", "Dense FP8", "TFLOP/s", D::kPositiveReal,
                  &S::dense_fp8_tflops},
    QuantityField{"dense_fp32_tflops", "Dense FP32 (vector)", "TFLOP/s", D::kPositiveReal,
                  &S::dense_fp32_tflops},
    QuantityField{"hbm_capacity_gb", "HBM capacity", "GB", D::kPositiveReal, &S::hbm_capacity_gb},
    QuantityField{"hbm_bandwidth_tbps", "HBM bandwidth", "TB/s", D::kPositiveReal,
                  &S::hbm_bandwidth_tbps},
    QuantityField{"l2_cache_mib", "L2 cache", "MiB", D::kPositiveReal, &S::l2_cache_mib},
    QuantityField{"last_level_cache_mib", "Last-level cache", "MiB", D::kPositiveReal,
                  &S::last_level_cache_mib},
    QuantityField{"sm_count", "SMs / CUs", "", D::kPositiveInteger, &S::sm_count},
    QuantityField{"chiplet_count", "Dies / XCDs", "", D::kPositiveInteger, &S::chiplet_count},
    QuantityField{"boost_clock_mhz", "Boost clock", "MHz", D::kPositiveReal, &S::boost_clock_mhz},
    QuantityField{"peak_rate_clock_mhz", "Peak-rate clock", "MHz", D::kPositiveReal,
                  &S::peak_rate_clock_mhz},
    QuantityField{"warp_size", "Warp / wavefront", "lanes", D::kPositiveInteger, &S::warp_size},
    QuantityField{"shared_memory_per_sm_kib", "Shared memory / LDS per SM", "KiB", D::kPositiveReal,
                  &S::shared_memory_per_sm_kib},
    QuantityField{"scale_up_link_gbps", "Scale-up per link", "GB/s", D::kPositiveReal,
                  &S::scale_up_link_gbps},
    QuantityField{"scale_up_per_gpu_gbps", "Scale-up per GPU", "GB/s", D::kPositiveReal,
                  &S::scale_up_per_gpu_gbps},
    QuantityField{"scale_up_link_count", "Scale-up links", "", D::kPositiveInteger,
                  &S::scale_up_link_count},
    QuantityField{"scale_up_domain_gpus", "Scale-up domain", "GPUs", D::kPositiveInteger,
                  &S::scale_up_domain_gpus},
    QuantityField{"scale_out_nic_gbps", "Scale-out NIC", "GB/s", D::kPositiveReal,
                  &S::scale_out_nic_gbps},
    QuantityField{"tdp_watts", "TDP", "W", D::kPositiveReal, &S::tdp_watts},
};

}  // namespace

std::span<const QuantityField> hardware_quantity_fields() { return kQuantityFields; }

double dense_bf16_flops_per_clock_per_sm(const HardwareSpec& spec) {
  const double units_times_hz = spec.sm_count.value * spec.peak_rate_clock_mhz.value * 1e6;
  if (units_times_hz <= 0.0) return 0.0;
  return spec.dense_bf16_tflops.value * 1e12 / units_times_hz;
}

}  // namespace parity::hw
