// HardwareSpec: what the models know about a GPU. Every number carries its provenance; the
// catalogue loader (catalogue.hpp) rejects a file whose number lacks one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parity::hw {

enum class ProvenanceKind : std::uint8_t {
  kVendorSpec,          // datasheet / vendor documentation
  kMeasuredThirdParty,  // an independent published measurement
  kMeasuredHere,        // measured by `parity hw probe` / bench on our machines
  kDerived,             // computed from other values (the source says how)
};

struct Provenance {
  ProvenanceKind kind = ProvenanceKind::kVendorSpec;
  std::string source;  // URL, document or derivation
  std::string date;    // when the figure was published or measured (YYYY-MM or YYYY-MM-DD)
  std::string note;    // optional caveat, e.g. "unverified: not in the datasheet"; empty if none
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

// A number with its unit (encoded in the field name) and where it came from.
struct Quantity {
  double value = 0.0;
  Provenance provenance;
  friend bool operator==(const Quantity&, const Quantity&) = default;
};

enum class Vendor : std::uint8_t { kNvidia, kAmd };
enum class ScaleUpTopology : std::uint8_t { kSwitched, kFullMesh };

// One matrix-instruction shape (e.g. Hopper wgmma m64nNk16, CDNA3 MFMA 16x16x16 / 32x32x8).
// For instructions with a variable N (wgmma, tcgen05) `n` is the largest legal N.
struct MatrixInstructionShape {
  int m = 0;
  int n = 0;
  int k = 0;
  std::string dtype;        // input type: "bf16", "fp16", "fp8"
  std::string instruction;  // "wgmma.mma_async", "tcgen05.mma", "v_mfma_f32_32x32x16_bf16"
  Provenance provenance;
  friend bool operator==(const MatrixInstructionShape&, const MatrixInstructionShape&) = default;
};

struct HardwareSpec {
  std::string name;                  // catalogue key, lower case: "h200", "mi350x"
  std::vector<std::string> aliases;  // other accepted names, lower case: "h100_sxm"
  std::string display_name;          // "NVIDIA H200 SXM"
  Vendor vendor = Vendor::kNvidia;
  std::string architecture;  // "hopper", "blackwell", "cdna3", "cdna4"

  // Dense (no sparsity) peak rates.
  Quantity dense_bf16_tflops;
  Quantity dense_fp16_tflops;
  Quantity dense_fp8_tflops;
  Quantity dense_fp32_tflops;  // plain (vector) fp32

  Quantity hbm_capacity_gb;
  Quantity hbm_bandwidth_tbps;
  Quantity l2_cache_mib;  // per-die L2 summed over the device (NVIDIA: the L2; AMD: all XCDs' L2)
  Quantity last_level_cache_mib;  // AMD Infinity Cache (MALL); equals l2 on NVIDIA

  Quantity sm_count;       // SMs (NVIDIA) or CUs (AMD), enabled ones
  Quantity chiplet_count;  // XCDs on AMD, dies on NVIDIA (1 for H100/H200, 2 for B200)
  Quantity boost_clock_mhz;
  // The clock the vendor's dense peak rates assume: rate = sm_count x FLOP/clk/SM x this clock.
  // NVIDIA quotes Hopper tensor peaks at 1830 MHz, below the 1980 MHz maximum boost.
  Quantity peak_rate_clock_mhz;
  Quantity warp_size;                 // 32 NVIDIA, 64 AMD CDNA
  Quantity shared_memory_per_sm_kib;  // shared memory / LDS per SM or CU

  std::vector<MatrixInstructionShape> matrix_instructions;

  ScaleUpTopology scale_up_topology = ScaleUpTopology::kSwitched;
  Quantity scale_up_link_gbps;     // one link, one direction, GB/s
  Quantity scale_up_per_gpu_gbps;  // aggregate per GPU, one direction, GB/s
  Quantity scale_up_link_count;    // links per GPU (NVLink links / xGMI links)
  Quantity scale_up_domain_gpus;   // GPUs in one scale-up domain (8 per HGX/MI3xx node, 72 NVL72)
  Quantity scale_out_nic_gbps;     // per-GPU NIC, GB/s
  Quantity tdp_watts;
  friend bool operator==(const HardwareSpec&, const HardwareSpec&) = default;
};

std::string_view provenance_kind_name(ProvenanceKind kind);         // "vendor_spec", ...
std::string_view vendor_name(Vendor vendor);                        // "nvidia", "amd"
std::string_view scale_up_topology_name(ScaleUpTopology topology);  // "switched", "full_mesh"

// What a quantity may hold: counts are whole numbers; everything in the catalogue is > 0.
enum class QuantityDomain : std::uint8_t { kPositiveReal, kPositiveInteger };

// One numeric field of HardwareSpec, for code that walks all of them (parser, CLI, calibration).
struct QuantityField {
  std::string_view key;    // JSON key, identical to the member name
  std::string_view label;  // human label: "HBM bandwidth"
  std::string_view unit;   // "TB/s"
  QuantityDomain domain;
  Quantity HardwareSpec::*member;
};

// Every Quantity member of HardwareSpec, in declaration order.
std::span<const QuantityField> hardware_quantity_fields();

// Dense BF16 FLOP per clock per SM/CU implied by the peak rate (4096 on Hopper, 8192 on
// Blackwell, 2048 on CDNA3, 4096 on CDNA4): the per-unit throughput an analytical model scales.
double dense_bf16_flops_per_clock_per_sm(const HardwareSpec& spec);

}  // namespace parity::hw
