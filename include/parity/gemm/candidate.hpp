// Candidate: one GEMM kernel configuration, described by the features the cost models read.
// A provider fills the features it knows (the cuBLASLt provider maps each real algo to them; the
// modelled spaces generate them) and may attach an opaque payload it needs to run the config
// (e.g. a serialized cublasLtMatmulAlgo_t). The models never look at the payload.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "parity/core/status.hpp"

namespace parity::gemm {

// How partial sums over a split K dimension are combined.
enum class ReductionScheme : std::uint8_t {
  kNone,         // no split (split_k == 1, or stream-K fix-up in place)
  kInPlace,      // partials accumulated into D by the kernel itself (atomics / ordered)
  kComputeType,  // fp32 partials in a workspace, reduced by a second kernel (cuBLASLt Hopper)
  kOutputType,   // partials in the output type, reduced by a second kernel
};
// How output tiles are spread over the processors.
enum class Decomposition : std::uint8_t {
  kDataParallel,  // one CTA/workgroup per output tile (and per K split)
  kStreamK,       // MAC iterations spread evenly over a persistent grid, with a fix-up
};
// The order tiles are launched in (how consecutive CTAs walk the output).
enum class RasterOrder : std::uint8_t { kAlongM, kAlongN, kUnknown };
// AMD: how workgroup ids are dealt to XCDs. The hardware deals them round-robin; a remap gives each
// XCD a contiguous block of logical tiles (origami.md §2.8).
enum class XcdMapping : std::uint8_t { kRoundRobin, kContiguous };

std::string_view reduction_name(ReductionScheme scheme);  // "none", "inplace", "compute", "output"
std::string_view decomposition_name(Decomposition decomposition);  // "dp", "streamk"
std::string_view raster_name(RasterOrder order);                   // "m", "n", "auto"
std::string_view xcd_mapping_name(XcdMapping mapping);             // "rr", "contig"

struct Candidate {
  // Output tile per CTA/workgroup and the K-extent of one main-loop iteration.
  int tile_m = 128;
  int tile_n = 128;
  int tile_k = 64;
  // NVIDIA thread-block cluster (TMA multicast shares A along n, B along m); 1x1 elsewhere.
  int cluster_m = 1;
  int cluster_n = 1;
  // Matrix instruction (Hopper wgmma m64nNk16; CDNA MFMA 16x16x16, 32x32x8, ...).
  int mi_m = 64;
  int mi_n = 128;
  int mi_k = 16;
  int split_k = 1;
  ReductionScheme reduction = ReductionScheme::kNone;
  Decomposition decomposition = Decomposition::kDataParallel;
  int stream_k_grid = 0;  // stream-K persistent grid size; 0 = one per processor
  int stages = 0;         // software pipeline depth; 0 = chosen by the kernel (cuBLASLt "AUTO")
  int kernel_family = 0;  // cuBLASLt algo id, or an AMD kernel family id
  int variant = 0;        // cuBLASLt custom option, or a family sub-variant
  int occupancy = 1;      // CTAs/workgroups resident per SM/CU
  // Workgroup grouping (AMD WGM / NVIDIA raster swizzle width): tiles walked in groups this wide.
  int group_size = 1;
  RasterOrder raster = RasterOrder::kUnknown;
  XcdMapping xcd_mapping = XcdMapping::kRoundRobin;
  std::uint64_t workspace_bytes = 0;
  // Rank in the vendor heuristic's own list (0 = its top-1); -1 when not one of its picks.
  int heuristic_rank = -1;
  // Provider payload, opaque to the models (cuBLASLt: the 64-byte algo struct).
  bool has_payload = false;
  std::array<std::uint64_t, 8> payload{};

  // "tile=128x256x64 cluster=2x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0
  //  family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1 [payload=hex,...x8]"
  std::string describe() const;
  // Short form for tables: "128x256x64 c2x1 sk1 v7".
  std::string short_name() const;
  friend bool operator==(const Candidate&, const Candidate&) = default;
};

// Inverse of describe(). Keys may appear in any order; a missing key keeps its default. Unknown
// keys, malformed values and out-of-range sizes are kInvalidArgument naming the key.
Result<Candidate> parse_candidate(std::string_view text);

// Feature sanity: positive tile/MI/cluster sizes, split_k >= 1 with a reduction when > 1, ...
Status validate_candidate(const Candidate& candidate);

}  // namespace parity::gemm
