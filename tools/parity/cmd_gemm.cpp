// `parity gemm select | calibrate | eval | agree`: flags -> parity/gemm/workflow.hpp -> printed
// text or JSON. The analytical GEMM selector on any catalogue GPU (CPU only), its calibration from
// measurements, its evaluation against measured oracles and its agreement with AMD Origami's
// published rankings. Bad input is exit code 2 naming the parameter.
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity::cli {
namespace {

namespace gemm = parity::gemm;

struct GemmOptions {
  std::string data_dir;
  gemm::ModelSource model;
  gemm::SelectSettings select;  // its model from the two above
  bool is_json_output = false;
  std::string mode = "analytical";
  std::string half = "all";
  std::string top_k_list = "tiles";
  std::string origami_csv;
  gemm::CalibrateRequest calibrate;
  gemm::EvalRequest eval;
};

gemm::ModelSource model_source(const GemmOptions& o) { return gemm::with_data_dir(o.model, o.data_dir); }

Status run_select(const GemmOptions& o) {
  gemm::SelectSettings settings = o.select;
  settings.model = model_source(o);
  return print_report(gemm::select_command_report(settings));
}

Status run_calibrate(const GemmOptions& o) {
  gemm::CalibrateRequest request = o.calibrate;
  request.model = model_source(o);
  return print_report(gemm::calibrate_command_report(request, o.mode));
}

Status run_eval(const GemmOptions& o) {
  gemm::EvalRequest request = o.eval;
  request.model = model_source(o);
  return print_report(gemm::eval_command_report(request, o.mode));
}

Status run_agree(const GemmOptions& o) {
  return print_report(
      gemm::agreement_command_report(model_source(o), o.origami_csv, o.half, o.is_json_output, o.top_k_list));
}

void add_problem_options(CLI::App& command, gemm::SelectSettings& o) {
  command.add_option("--m", o.sizes.m, "Rows of C");
  command.add_option("--n", o.sizes.n, "Columns of C");
  command.add_option("--k", o.sizes.k, "Reduction length");
  command.add_option("--batch", o.sizes.batch, "Batch count (default 1)");
  command.add_option("--dtype", o.dtype, "bf16 (default), fp16, fp32-tf32");
  command.add_option("--layout", o.layout, "TN (default), NN, NT, TT (cuBLAS column-major)");
  command.add_option("--epilogue", o.epilogue, "none (default), bias, relu");
  command.add_option("--lda", o.sizes.lda, "Leading dimension of A (0 = packed)");
  command.add_option("--ldb", o.sizes.ldb, "Leading dimension of B (0 = packed)");
  command.add_option("--ldc", o.sizes.ldc, "Leading dimension of C (0 = packed)");
  command.add_option("--align", o.sizes.alignment_bytes, "Alignment in bytes the pointers and rows guarantee (0 = derive)");
}

void add_common_options(CLI::App& command, GemmOptions& o, const char* hw_help) {
  command.add_option("--hw", o.model.hw, hw_help);
  add_data_dir_option(&command, o.data_dir);
  command.add_option("--calibration", o.model.calibration_file,
                     "GEMM calibration file (default: <data>/calibration/<hw>_gemm.json)");
}

// --shapes / --calibration-shapes: the split shared by calibrate and eval.
void add_split_options(CLI::App& command, std::string& shapes, std::vector<std::string>& calibration_shapes) {
  command.add_option("--shapes", shapes, "Shape suite CSV defining the split");
  command.add_option("--calibration-shapes", calibration_shapes,
                     "Extra calibration-only shapes CSV, absent from the suite (repeatable; never evaluation; "
                     "default bench/shapes/gemm_shapes_calibration_extra{,2}.csv)");
}

constexpr const char* kMeasuredHwHelp = "Catalogue GPU (default: the measurements' device)";

void add_calibrate(CLI::App& gemm, GemmOptions& o, Outcome& outcome, const std::shared_ptr<GemmOptions>& keep) {
  auto* cmd = gemm.add_subcommand("calibrate", "Fit the model's scalars to measurements (CPU)");
  add_common_options(*cmd, o, kMeasuredHwHelp);
  auto& r = o.calibrate;
  cmd->add_option("--measurements", r.measurement_files, "Measurements JSON (gemm measure; .json.gz too); repeatable")
      ->take_all();
  add_split_options(*cmd, r.shapes, r.calibration_shapes);
  cmd->add_option("--cv-folds", r.cv_folds, "K-fold cross-validation inside the calibration shapes (report; 0 = off)");
  cmd->add_option("--cv-csv", r.cv_csv, "Write each held-out shape's ratio t_oracle / t_pick to this CSV");
  cmd->add_option("--mode", o.mode, "Selection mode the cross-validation scores: analytical (default) or hybrid");
  cmd->add_option("--vendor-band", r.selector.vendor_band,
                  "Hybrid: confidence rule band the cross-validation's selector uses (default 0.03)");
  cmd->add_option("--out", r.out, "Calibration file to write");
  cmd->add_option("--max-evals", r.fit.max_evaluations, "Model-loss evaluations budget");
  cmd->add_option("--regret-weight", r.fit.regret_weight, "Weight of the soft selection regret in the loss (default 1)");
  cmd->add_option("--fit-only", r.fit_only,
                  "Fit only these scalars (repeatable or comma-separated names as printed); the others stay at --calibration's values")
      ->delimiter(',');
  cmd->callback([keep, &outcome] { outcome.status = run_calibrate(*keep); });
}

void add_eval(CLI::App& gemm, GemmOptions& o, Outcome& outcome, const std::shared_ptr<GemmOptions>& keep) {
  auto* cmd = gemm.add_subcommand("eval", "Selector vs heuristic top-1 vs oracle on measurements");
  add_common_options(*cmd, o, kMeasuredHwHelp);
  auto& r = o.eval;
  cmd->add_option("--measurements", r.measurements, "Measurements JSON (gemm measure; .json.gz too)");
  add_split_options(*cmd, r.shapes, r.calibration_shapes);
  cmd->add_option("--split", r.split, "evaluation (default), calibration or all");
  cmd->add_option("--out-dir", r.out_dir, "Directory for gemm_eval.{json,md,svg} and gemm_eval_candidates.csv");
  cmd->add_option("--mode", o.mode,
                  "Mode of the written per-shape report: analytical (default) or hybrid; both are summarised");
  cmd->add_option("--vendor-band", r.selector.vendor_band,
                  "Hybrid: confidence rule band for TMA kernels (default 0.03; < 0 turns the rule off)");
  cmd->add_option("--vendor-band-legacy", r.selector.vendor_band_legacy,
                  "Confidence rule band without TMA (default: always the vendor's top-1)");
  cmd->callback([keep, &outcome] { outcome.status = run_eval(*keep); });
}

}  // namespace

void add_gemm_commands(CLI::App& app, Outcome& outcome) {
  CLI::App& gemm = *app.add_subcommand("gemm", "Analytical GEMM selection (any catalogue GPU) and runs (NVIDIA)")
                        ->require_subcommand(1);
  auto options = std::make_shared<GemmOptions>();
  auto& o = *options;

  auto* select = gemm.add_subcommand("select", "Pick a GEMM configuration from the model (no GPU)");
  add_common_options(*select, o, "Catalogue GPU (h200, h100_sxm, b200, mi300x, mi350x, ...)");
  add_problem_options(*select, o.select);
  select->add_option("--top", o.select.top, "How many ranked candidates to show (default 5)");
  select->add_option("--top-k-list", o.select.top_k_list,
                     "What the top list holds: tiles (default: the best config of each of the best macro tiles) or configs (the best configs)");
  select->add_flag("--json", o.select.is_json, "Print JSON");
  select->add_flag("--explain", o.select.is_explained,
                   "Split each top candidate's predicted time into compute, memory, L2, launch/wave, reduction");
  select->add_flag("--latency", o.select.is_latency_report, "Report selection latency (p50/p99) over unseen random shapes instead");
  select->add_option("--latency-samples", o.select.latency_samples, "Shapes timed by --latency");
  select->callback([options, &outcome] { outcome.status = run_select(*options); });

  add_calibrate(gemm, o, outcome, options);
  add_eval(gemm, o, outcome, options);

  auto* agree = gemm.add_subcommand("agree", "Top-10 agreement with Origami's rankings (AMD, model only)");
  add_common_options(*agree, o, "mi300x (gfx942) or mi350x (gfx950)");
  agree->add_option("--origami", o.origami_csv, "Rankings CSV (default: <data>/reference/origami/<arch>_bf16.csv)");
  agree->add_option("--half", o.half, "all (default), port, held-out (the seeded split of data/reference/origami/split.csv) or both (text)");
  agree->add_option("--top-k-list", o.top_k_list,
                    "The top-5 list scored: tiles (default: the best config of each of the 5 best macro tiles) or configs (the 5 best configs)");
  agree->add_flag("--json", o.is_json_output, "Print JSON");
  agree->callback([options, &outcome] { outcome.status = run_agree(*options); });
  add_gemm_run_commands(gemm, outcome);
}

}  // namespace parity::cli
