// `parity bench comm`: collectives timed in nccl-tests conventions, and the planner's α–β
// calibration fitted from the results. Formulas (docs/comm.md, "Benchmark"):
//   S (bytes): all_reduce count*elt; all_gather/reduce_scatter/all_to_all per-rank count*elt*n.
//   algbw = S / t;  busbw = algbw * factor, factor = 2(n-1)/n all_reduce, (n-1)/n all_gather,
//   reduce_scatter and all_to_all, 1 broadcast.
//   t = the median over repetitions of the slowest rank's time for that repetition.
//   Fit: t_us = latency_us + beta_us_per_byte * S * factor (least squares of relative residuals
//   over the out-of-place sizes), so 1/beta is the bus bandwidth and alpha = latency_us / steps
//   with steps = 2(n-1) for all_reduce, n-1 otherwise (the ring model of docs/comm.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/bench/stats.hpp"
#include "parity/comm/communicator.hpp"

namespace parity::comm {

enum class BenchPlacement : std::uint8_t { kOutOfPlace, kInPlace };
std::string_view bench_placement_name(BenchPlacement placement);  // "out_of_place", "in_place"

struct CommBenchOptions {
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = std::int64_t{1} << 30;
  double step_factor = 2.0;  // next size = ceil(size * step_factor)
  std::vector<Collective> collectives = {Collective::kAllReduce, Collective::kAllGather,
                                         Collective::kReduceScatter, Collective::kAllToAll};
  std::vector<BenchPlacement> placements = {BenchPlacement::kOutOfPlace, BenchPlacement::kInPlace};
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;  // sum or max (results are checked exactly)
  int warmup = 5;
  int repetitions = 20;
  /// Sizes, factor, collectives (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast),
  /// dtype, op and counts; messages name the flag ("--step-factor: 1 must be > 1").
  Status validate() const;
};

/// "all_reduce,all_to_all" -> collectives; "both" | "out_of_place" | "in_place" -> placements.
Result<std::vector<Collective>> parse_collective_list(std::string_view text);
Result<std::vector<BenchPlacement>> parse_bench_placements(std::string_view text);

/// CommBenchOptions as text (a command line, a config file): sizes such as "1KiB".
struct CommBenchSettings {
  std::string min_bytes = "8";
  std::string max_bytes = "1GiB";
  double step_factor = 2.0;
  std::string collectives = "all_reduce,all_gather,reduce_scatter,all_to_all";
  std::string placement = "both";  // both, out_of_place or in_place
  std::string dtype = "fp32";
  std::string op = "sum";
  int warmup = 5;
  int repetitions = 20;
};
/// Parsed strictly and validated; errors name the flag ("--min-bytes: ...").
Result<CommBenchOptions> comm_bench_options_from_settings(const CommBenchSettings& settings);

/// Sizes min, ceil(min*f), ... up to max (inclusive when hit).
std::vector<std::int64_t> sweep_sizes(std::int64_t min_bytes, std::int64_t max_bytes,
                                      double step_factor);

/// nccl-tests' bus-bandwidth factor for `ranks` ranks.
double bus_bandwidth_factor(Collective collective, int ranks);
/// Communication steps of the ring algorithm (the α multiplier): 2(n-1) all_reduce, n-1 else.
int ring_steps(Collective collective, int ranks);

struct CommBenchRow {
  Collective collective = Collective::kAllReduce;
  BenchPlacement placement = BenchPlacement::kOutOfPlace;
  std::int64_t bytes = 0;   // S (see the header comment)
  std::int64_t count = 0;   // the count argument of the call
  bench::SampleStats time;  // slowest rank per repetition, in ms
  double algbw_gbps = 0.0;  // from the median
  double busbw_gbps = 0.0;
  std::int64_t wrong_elements = 0;  // on this rank, from the check before timing (0 = correct)
};

struct CommBenchReport {
  std::string backend;
  int ranks = 1;
  CommBenchOptions options;
  std::vector<CommBenchRow> rows;
};

/// Runs the sweep on every rank (a collective call: all ranks pass the same options). Each
/// (collective, placement, size) is checked against the serial result, then timed. Sizes whose
/// per-rank count rounds to 0 are skipped. kCommError if any rank saw a wrong element.
Result<CommBenchReport> run_comm_bench(Communicator& comm, const CommBenchOptions& options);

/// The report as a text table (one row per measurement: bytes, count, median/p90 us, algbw,
/// busbw, #wrong) under a header line naming backend, ranks, dtype, op, warm-up and repetitions.
std::string comm_bench_table(const CommBenchReport& report);

/// The results JSON: {"benchmark": "comm", "provenance", "backend", "ranks", "dtype", "op",
/// "warmup", "repetitions", "rows": [...]}.
Status write_comm_bench_json(const CommBenchReport& report, const std::string& path);
Result<CommBenchReport> read_comm_bench_json(const std::string& path);

struct AlphaBetaFit {
  Collective collective = Collective::kAllReduce;
  double latency_us = 0.0;  // intercept: the whole collective's fixed cost
  double alpha_us = 0.0;    // latency_us / steps: the planner's per-step α
  int steps = 0;
  double beta_us_per_byte = 0.0;    // per bus byte (S * factor)
  double bus_bandwidth_gbps = 0.0;  // 1 / beta
  double busbw_factor = 0.0;
  int points = 0;
  std::int64_t min_bytes = 0;
  std::int64_t max_bytes = 0;
  double max_relative_residual = 0.0;
  bool is_latency_clamped = false;  // the free fit's intercept was negative: refitted with 0
};

/// Least squares of relative residuals, (latency + beta*x_i - t_i) / t_i, x_i = S_i * factor.
/// Needs >= 2 distinct sizes and times that grow with size.
Result<AlphaBetaFit> fit_alpha_beta(Collective collective, int ranks,
                                    const std::vector<std::int64_t>& bytes,
                                    const std::vector<double>& median_us);
/// "fit all_reduce: latency 12.3 us (alpha 2.05 us x 6 steps), bus bandwidth 9.87 GB/s, ...".
std::string alpha_beta_summary(const AlphaBetaFit& fit);
/// One fit per collective from the out-of-place rows of a report.
Result<std::vector<AlphaBetaFit>> fit_report(const CommBenchReport& report);

/// data/calibration/comm_<backend>_<host>.json under `data_dir`.
std::string comm_calibration_path(const std::string& data_dir, const std::string& backend,
                                  const std::string& host);
std::string local_host_name();
/// The calibration file (schema in docs/comm.md), with the results' provenance source.
Status write_comm_calibration(const CommBenchReport& report, const std::vector<AlphaBetaFit>& fits,
                              const std::string& host, const std::string& results_path,
                              const std::string& path);
/// Fits every collective of `report` and writes the calibration file to `calibration_path`
/// ("auto" or empty: comm_calibration_path(the data directory, the report's backend, this host));
/// returns one summary line per fit and "wrote PATH". results_path: the provenance source.
Result<std::string> fit_and_write_comm_calibration(const CommBenchReport& report,
                                                   const std::string& calibration_path,
                                                   const std::string& results_path);

}  // namespace parity::comm
