// Model-to-model agreement with AMD's Origami: its published top-10 rankings (data/reference/
// origami/) against our Origami-class model's ranking of the AMD modelled space. This measures
// how alike two models are, not how fast any kernel runs: no AMD figure here is a measurement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"
#include "parity/gemm/selector.hpp"

namespace parity::gemm {

struct OrigamiRanking {
  std::string problem_text;  // "MxNxKxBatch"
  GemmProblem problem;
  std::vector<Candidate> top;        // rank order (rank 0 first)
  std::vector<double> latency;       // Origami's predicted latency, its own units
};

// Parses a rankings CSV: the header problem,rank,latency,mt_m,mt_n,mt_k,mi_m,mi_n,mi_k,occ,wgm,
// then rows grouped by problem ("MxNxK[xB]") with ranks 0, 1, 2, ... (CRLF and blank lines ok).
// Every field is strict (parity/core/parse.hpp); errors name `origin`, the line and the field.
// An empty or header-only file is an error. Never throws. Every problem gets `layout` (the file
// has no layout column: Origami names the transposes in the file name, see below).
Result<std::vector<OrigamiRanking>> parse_origami_rankings(std::string_view text,
                                                           std::string_view origin,
                                                           GemmLayout layout = GemmLayout::kTN);
// The operand layout of a rankings file from its name: Origami's baselines are named
// <arch>_<dtype>_<AB>.csv with AB in TN, TT, NN, NT (A's then B's transpose, the letters of
// GemmLayout); a name without that suffix (the older <arch>_<dtype>.csv) is the harness default TN.
GemmLayout origami_file_layout(const std::filesystem::path& csv_path);
// Reads the file and parses it as above, with the path as origin and its name's layout.
Result<std::vector<OrigamiRanking>> read_origami_rankings(const std::filesystem::path& csv_path);

// Origami's 200 ranked problems are split once, by a fixed seed: the port half (the floor(n/2)
// problems of smallest ranking_split_key, ties by text) is the one the AMD model may be developed
// against; the held-out half is only reported. kAll scores every problem. The split is listed in
// data/reference/origami/split.csv (a test checks the two agree).
inline constexpr std::uint64_t kOrigamiSplitSeed = 20261201;
std::uint64_t ranking_split_key(std::string_view problem_text);
enum class RankingHalf : std::uint8_t { kAll, kPort, kHeldOut };
std::string_view ranking_half_name(RankingHalf half);  // "all", "port", "held-out"
Result<RankingHalf> parse_ranking_half(std::string_view text);
std::vector<OrigamiRanking> select_half(const std::vector<OrigamiRanking>& rankings, RankingHalf half);

struct AgreementReport {
  int problems = 0;
  RankingHalf half = RankingHalf::kAll;
  double top1_exact = 0.0;           // same tile, MI, occupancy and WGM
  double top1_macro_tile = 0.0;      // same macro tile (MT_M, MT_N, MT_K)
  // Overlap and Spearman figures compare their top-10 with our 10 best configurations (the full
  // ranking's head); the top-5 figure reads the selector's top-k list (SelectorOptions::top_k_list:
  // one configuration per macro tile by default).
  double top10_overlap_exact = 0.0;  // mean |ours ∩ theirs| / |theirs| on full configs
  double top10_overlap_macro_tile = 0.0;  // same on distinct macro tiles
  double spearman_shared = 0.0;      // mean Spearman rho on configs in both top-10s (>= 3 shared)
  int spearman_shared_problems = 0;
  double spearman_their_top10 = 0.0; // mean rho between their rank and our latency for their 10
  double rank_of_their_top1 = 0.0;   // mean rank (0-based) our model gives Origami's top-1
  double their_top1_in_our_top5 = 0.0;             // their top-1 config in our top-5 list
  double their_top1_tile_in_our_top5_tiles = 0.0;  // its macro tile among our 5 best macro tiles
  double selection_p50_us = 0.0;     // steady-state selection (median of repeats) per problem
  double selection_p99_us = 0.0;
};

// The hardware Origami's ranking baselines were generated on (its Python test harness,
// shared/origami/python/tests/helpers.py: gfx942 with 228 CUs at 1.7 GHz and a 24 MiB L2, gfx950
// with 304 CUs at 2.1 GHz and a 32 MiB L2, 64 KiB LDS, 8 XCDs) with the MFMA latency table
// (bf16 16x16 = 16 cycles, 32x32 = 32, issued on 4 units): the catalogue entry with those fields
// replaced. kInvalidArgument for an arch without a baseline.
Result<DeviceParams> origami_reference_device(const DeviceParams& catalogue_device);
// The config list of that harness: macro tiles {16..512}^2 from its size list, depth-unroll
// {16, 32, 64, 128, 512, 1024}, the arch's bf16 MFMA shapes, occupancy {1, 2}, WGM {1, 4, 8},
// Origami's default k-split-aware stream-K grid with the contiguous XCD mapping (Origami predicts
// the WGM itself).
std::vector<Candidate> origami_reference_space(const DeviceParams& reference_device);

// Ranks the Origami-comparable part of `space` (contiguous XCD mapping, A+B tile <= 64 KiB) with
// `selector` for each problem and compares with Origami's top-10.
// Origami's reference lists never exceed 64 KiB of A+B tile per stage on either arch (checked over
// both CSVs), so the comparable space is capped there too; gfx950 kernels may use up to 160 KiB.
inline constexpr double kOrigamiTileFootprintBytes = 65536.0;
AgreementReport compare_with_origami(Selector& selector, const std::vector<OrigamiRanking>& rankings,
                                     const std::vector<Candidate>& space,
                                     RankingHalf half = RankingHalf::kAll);

}  // namespace parity::gemm
