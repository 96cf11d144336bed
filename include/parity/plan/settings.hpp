// What `parity plan` and `parity plan compare` are given, as the text their flags take, and the
// steps between those settings and the printed or written results: the search options, a
// planner context for one catalogue GPU, the search report and the files it writes. A binding
// gets the same parsing and the same files as the CLI.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "parity/core/status.hpp"
#include "parity/plan/search.hpp"

namespace parity::plan {

struct PlanSettings {
  std::string model = "dlrm-v2";  // preset or spec JSON
  int gpus = 0;
  int nodes = 0;            // 0: the fewest scale-up domains that hold the GPUs
  std::string batch;        // one global batch, or empty
  std::string batch_range;  // "A:B" global batches, or empty (default 512..16384 per rank)
  std::string checkpointing = "none,full";
  std::string precisions = "tf32,bf16";
  std::string sharding = "table_wise,row_wise,column_wise,data_parallel";
  std::optional<std::filesystem::path>
      data_dir;  // hardware/ and calibration/ (default: the data dir)
};

/// The search options; errors name the flag and value ("--gpus: 0 must be >= 1",
/// "--batch-range: '8' is not A:B ...", an unknown precision in the list).
Result<PlanOptions> plan_options_from_settings(const PlanSettings& settings);

/// A planner context for one catalogue GPU; `pricer` is the one `context.pricer` points to.
struct LoadedPlannerContext {
  std::unique_ptr<GemmPricer> pricer;
  PlannerContext context;
};
/// The model spec, the GPU, its machine of settings.gpus x settings.nodes, the planner
/// calibration and the GEMM pricer. An empty `hw_name` is an error naming --hw.
Result<LoadedPlannerContext> load_planner_context(const PlanSettings& settings,
                                                  const std::string& hw_name);

/// The best plan's report, how many configurations were searched and fit, and the Pareto front
/// (peak memory GB -> M samples/s), one line a point.
std::string search_report_text(const SearchResult& result, const PlannerModel& model);

/// Writes `dir`/plan.json and `dir`/pareto.svg; returns the line saying so.
Result<std::string> write_search_files(const std::filesystem::path& dir, const SearchResult& result,
                                       const PlannerContext& context);

/// Writes `dir`/plan_<from>.json, plan_direct_port_<to>.json (when the port fits) and
/// plan_codesigned_<to>.json; returns the line saying so.
Result<std::string> write_comparison_files(const std::filesystem::path& dir,
                                           const Comparison& comparison, const std::string& from_hw,
                                           const std::string& to_hw);

/// Where a planner run's text goes: the report, then the line saying which files were written.
using PrintText = std::function<void(const std::string&)>;

/// `parity plan`: the search on catalogue GPU `hw`, its report printed, then with `out_dir` the
/// search files written.
Status run_plan_search(const PlanSettings& settings, const std::string& hw, const std::string& out_dir,
                       const PrintText& print);

/// `parity plan compare`: the port of from_hw's best plan to to_hw against to_hw's own best
/// (compare_port_and_codesign), its report printed, then with `out_dir` the comparison files.
Status run_plan_compare(const PlanSettings& settings, const std::string& from_hw, const std::string& to_hw,
                        double max_headroom_scale, const std::string& out_dir, const PrintText& print);

}  // namespace parity::plan
