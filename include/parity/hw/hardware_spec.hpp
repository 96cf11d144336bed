// HardwareSpec: what the models know about a GPU. Every number carries its provenance; the
// catalogue loader (catalogue.hpp) rejects a file whose number lacks one.
#pragma once

#include <cstdint>
#include <string>
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
};

// A number with its unit (encoded in the field name) and where it came from.
struct Quantity {
  double value = 0.0;
  Provenance provenance;
};

enum class Vendor : std::uint8_t { kNvidia, kAmd };
enum class ScaleUpTopology : std::uint8_t { kSwitched, kFullMesh };

// One matrix-instruction shape (e.g. Hopper wgmma m64nNk16, CDNA3 MFMA 16x16x16 / 32x32x8).
struct MatrixInstructionShape {
  int m = 0;
  int n = 0;
  int k = 0;
  std::string dtype;  // "bf16", "fp8", ...
};

struct HardwareSpec {
  std::string name;          // catalogue key, lower case: "h200", "mi350x"
  std::string display_name;  // "NVIDIA H200 SXM"
  Vendor vendor = Vendor::kNvidia;
  std::string architecture;  // "hopper", "blackwell", "cdna3", "cdna4"

  // Dense (no sparsity) peak rates.
  Quantity dense_bf16_tflops;
  Quantity dense_fp16_tflops;
  Quantity dense_fp8_tflops;
  Quantity dense_fp32_tflops;  // plain (vector) fp32

  Quantity hbm_capacity_gb;
  Quantity hbm_bandwidth_tbps;
  Quantity l2_cache_mib;          // per-die L2 summed over the device (NVIDIA: the L2; AMD: all XCDs' L2)
  Quantity last_level_cache_mib;  // AMD Infinity Cache (MALL); equals l2 on NVIDIA

  Quantity sm_count;       // SMs (NVIDIA) or CUs (AMD), enabled ones
  Quantity chiplet_count;  // XCDs on AMD, dies on NVIDIA (1 for H100/H200, 2 for B200)
  Quantity boost_clock_mhz;
  Quantity warp_size;      // 32 NVIDIA, 64 AMD CDNA
  Quantity shared_memory_per_sm_kib;  // shared memory / LDS per SM or CU

  std::vector<MatrixInstructionShape> matrix_instructions;

  ScaleUpTopology scale_up_topology = ScaleUpTopology::kSwitched;
  Quantity scale_up_link_gbps;     // one link, one direction, GB/s
  Quantity scale_up_per_gpu_gbps;  // aggregate per GPU, one direction, GB/s
  Quantity scale_out_nic_gbps;     // per-GPU NIC, GB/s
  Quantity tdp_watts;
};

}  // namespace parity::hw
