// `parity tbe check`: every TBE path on a small built-in problem (mixed dims 4..2048, weighted
// bags of varying size, empty bags, duplicates) against the fp64 reference: the OpenMP CPU path
// always, the GPU kernels when built with CUDA and a device is visible. Prints the max error of
// each path next to its derived tolerance; exit 1 if any exceeds it. Runs in well under a second.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "parity/core/rng.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/embedding/tbe_cpu.hpp"
#include "parity/embedding/tbe_synthetic.hpp"
#include "reference/tbe.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#endif

namespace parity::cli {
namespace {

using namespace parity::embedding;

struct CheckRow {
  std::string path, op;
  double max_err = 0, tolerance = 0;  // max |got - ref| / per-element tolerance, as a ratio
};

struct CheckProblem {
  TbeProblem problem;
  SyntheticBatch batch;
  ref::TbeRefBatch ref_batch;
  std::vector<std::uint8_t> weights, indices, offsets;
  std::vector<double> weights_ref;
  std::vector<float> grad;
};

Result<CheckProblem> make_check_problem(std::uint64_t seed) {
  PARITY_ASSIGN_OR_RETURN(TbeLayout layout,
                          TbeLayout::create({{1000, 4}, {500, 12}, {300, 60}, {200, 132}, {40, 2048}, {3000, 128}}));
  SyntheticBatchOptions options;
  options.batch_size = 64;
  options.pooling_factor = 8;
  options.vary_bag_sizes = true;
  options.empty_bag_fraction = 0.05;
  options.weighted = true;
  options.seed = seed;
  CheckProblem c{TbeProblem{layout}, make_synthetic_batch(layout, options), {}, {}, {}, {}, {}, {}};
  c.problem.batch_size = options.batch_size;
  c.problem.num_indices = static_cast<std::int64_t>(c.batch.indices.size());
  c.problem.has_per_sample_weights = true;
  c.problem.index_dtype = DType::kI32;
  PARITY_RETURN_IF_ERROR(c.problem.validate());
  c.ref_batch = {c.batch.indices, c.batch.offsets, {}};
  for (float w : c.batch.per_sample_weights) c.ref_batch.per_sample_weights.push_back(w);
  c.weights = make_weights(layout, DType::kF32, seed + 1, &c.weights_ref);
  c.indices = pack_indices(c.batch.indices, DType::kI32);
  c.offsets = pack_indices(c.batch.offsets, DType::kI32);
  Rng rng(seed + 2);
  c.grad.resize(static_cast<std::size_t>(c.problem.output_rows() * c.problem.output_cols()));
  for (auto& g : c.grad) g = static_cast<float>(rng.normal());
  return c;
}

// Forward: tolerance (max_bag + 3) u32 sum|terms| per element (recursive summation bound).
CheckRow compare_forward(const std::string& path, const CheckProblem& c, const std::vector<float>& got) {
  const auto want = ref::tbe_forward(c.problem, c.weights_ref, c.ref_batch);
  std::vector<double> abs_weights(c.weights_ref.size());
  std::transform(c.weights_ref.begin(), c.weights_ref.end(), abs_weights.begin(), [](double v) { return std::abs(v); });
  const auto abs_want = ref::tbe_forward(c.problem, abs_weights, c.ref_batch);  // psw are positive
  std::int64_t max_bag = 0;
  for (std::size_t i = 0; i + 1 < c.batch.offsets.size(); ++i) max_bag = std::max(max_bag, c.batch.offsets[i + 1] - c.batch.offsets[i]);
  CheckRow row{path, "forward sum", 0, 0};
  double worst_ratio = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double err = std::abs(got[i] - want[i]);
    const double tol = static_cast<double>(max_bag + 3) * unit_roundoff(DType::kF32) * abs_want[i] + 1e-30;
    if (err / tol >= worst_ratio) {
      worst_ratio = err / tol;
      row.max_err = err;
      row.tolerance = tol;
    }
  }
  return row;
}

// Row-wise Adagrad step: tolerance from the update size and the state's D-term sum (see tests).
CheckRow compare_update(const std::string& path, const CheckProblem& c, const OptimizerParams& opt,
                        const std::vector<float>& got_weights) {
  ref::TbeRefTrainingState state{c.weights_ref, std::vector<double>(static_cast<std::size_t>(c.problem.layout.total_rows()), 0.0), {}};
  ref::tbe_backward_fused(c.problem, opt, state, c.ref_batch, std::vector<double>(c.grad.begin(), c.grad.end()));
  CheckRow row{path, "backward + rowwise_adagrad", 0, 0};
  double worst_ratio = 0;
  const double u = unit_roundoff(DType::kF32);
  // The fp32 gradient sum of a row of n occurrences errs by <= (n + 2) u G (G: its abs sum); the
  // update multiplies it by at most lr / eps.
  std::vector<double> abs_grad(c.grad.size());
  std::transform(c.grad.begin(), c.grad.end(), abs_grad.begin(), [](float g) { return std::abs(static_cast<double>(g)); });
  double gradient_error = 0;
  for (const auto& [r, sums] : ref::tbe_row_gradients(c.problem, c.ref_batch, abs_grad)) {
    for (double v : sums) gradient_error = std::max(gradient_error, v);
  }
  std::map<std::int64_t, std::int64_t> occurrences;
  for (int f = 0; f < c.problem.layout.num_features(); ++f) {
    const std::int64_t base = c.problem.layout.row_base(c.problem.layout.table_of_feature()[f]);
    for (auto p = c.batch.offsets[f * c.problem.batch_size]; p < c.batch.offsets[(f + 1) * c.problem.batch_size]; ++p) {
      ++occurrences[base + c.batch.indices[p]];
    }
  }
  std::int64_t max_occurrences = 0;
  for (const auto& [r, count] : occurrences) max_occurrences = std::max(max_occurrences, count);
  gradient_error *= static_cast<double>(max_occurrences + 2) * u * opt.learning_rate / opt.eps;
  for (std::size_t i = 0; i < state.weights.size(); ++i) {
    const double err = std::abs(got_weights[i] - state.weights[i]);
    const double step = std::abs(state.weights[i] - c.weights_ref[i]);
    const double tol = gradient_error + 16 * u * std::abs(state.weights[i]) +
                       (c.problem.layout.max_dim() + 64.0) * u * step + 1e-30;
    if (err / tol >= worst_ratio) {
      worst_ratio = err / tol;
      row.max_err = err;
      row.tolerance = tol;
    }
  }
  return row;
}

OptimizerParams check_optimizer() {
  OptimizerParams opt;
  opt.kind = OptimizerKind::kRowwiseAdagrad;
  opt.learning_rate = 0.05f;
  opt.eps = 1e-2f;
  return opt;
}

Status run_cpu(const CheckProblem& c, std::vector<CheckRow>& rows) {
  std::vector<float> out(static_cast<std::size_t>(c.problem.output_rows() * c.problem.output_cols()));
  const TbeBatchView view{c.indices.data(), c.offsets.data(), c.batch.per_sample_weights.data()};
  PARITY_RETURN_IF_ERROR(cpu::tbe_forward(c.problem, c.weights.data(), view, out.data()));
  rows.push_back(compare_forward("cpu (openmp)", c, out));
  std::vector<float> weights(c.weights_ref.begin(), c.weights_ref.end());
  std::vector<float> state(static_cast<std::size_t>(c.problem.layout.total_rows()), 0.0f);
  PARITY_RETURN_IF_ERROR(cpu::tbe_backward_fused(c.problem, check_optimizer(), weights.data(), state.data(), nullptr,
                                                 view, c.grad.data()));
  rows.push_back(compare_update("cpu (openmp)", c, check_optimizer(), weights));
  return Status::ok();
}

#ifdef PARITY_HAS_CUDA
Status run_gpu(const CheckProblem& c, std::vector<CheckRow>& rows, std::string* bounds_line) {
  namespace eg = embedding::gpu;
  PARITY_ASSIGN_OR_RETURN(auto layout, eg::DeviceTbeLayout::create(c.problem.layout));
  PARITY_ASSIGN_OR_RETURN(auto weights, parity::gpu::upload(c.weights));
  PARITY_ASSIGN_OR_RETURN(auto indices, parity::gpu::upload(c.indices));
  PARITY_ASSIGN_OR_RETURN(auto offsets, parity::gpu::upload(c.offsets));
  PARITY_ASSIGN_OR_RETURN(auto psw, parity::gpu::upload(c.batch.per_sample_weights));
  PARITY_ASSIGN_OR_RETURN(auto grad, parity::gpu::upload(c.grad));
  const std::int64_t out_elements = c.problem.output_rows() * c.problem.output_cols();
  PARITY_ASSIGN_OR_RETURN(auto out, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(out_elements) * 4));
  const eg::DeviceBatch batch{indices.data(), offsets.data(), psw.as<float>()};
  PARITY_RETURN_IF_ERROR(eg::tbe_forward(c.problem, layout, weights.data(), batch, out.data()));
  PARITY_ASSIGN_OR_RETURN(auto host_out, parity::gpu::download<float>(out, static_cast<std::size_t>(out_elements)));
  rows.push_back(compare_forward("gpu", c, host_out));
  PARITY_ASSIGN_OR_RETURN(auto state, parity::gpu::upload(std::vector<float>(static_cast<std::size_t>(c.problem.layout.total_rows()), 0.0f)));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t ws_bytes, eg::tbe_backward_workspace_bytes(c.problem));
  PARITY_ASSIGN_OR_RETURN(auto ws, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(ws_bytes)));
  PARITY_RETURN_IF_ERROR(eg::tbe_backward_fused(c.problem, layout, check_optimizer(), {weights.data(), state.as<float>(), nullptr},
                                                batch, grad.as<float>(), ws.data(), ws_bytes));
  PARITY_ASSIGN_OR_RETURN(auto host_weights, parity::gpu::download<float>(weights, c.weights_ref.size()));
  rows.push_back(compare_update("gpu", c, check_optimizer(), host_weights));
  // Bounds check in error mode on three planted bad indices: reported, data untouched.
  auto bad = c.batch.indices;
  for (std::size_t k : {std::size_t{5}, bad.size() / 2, bad.size() - 1}) bad[k] = -1;
  PARITY_ASSIGN_OR_RETURN(auto bad_indices, parity::gpu::upload(pack_indices(bad, DType::kI32)));
  const std::int64_t bc_bytes = eg::bounds_check_workspace_bytes(c.problem);
  PARITY_ASSIGN_OR_RETURN(auto bc_ws, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(bc_bytes)));
  PARITY_RETURN_IF_ERROR(eg::bounds_check(c.problem, layout, BoundsCheckMode::kError, bad_indices.data(), offsets.data(),
                                          bc_ws.data(), bc_bytes));
  PARITY_ASSIGN_OR_RETURN(auto report, eg::read_bounds_check_report(c.problem, BoundsCheckMode::kError, bad_indices.data(),
                                                                    offsets.data(), bc_ws.data()));
  if (report.bad_indices != 3) return internal_error("tbe check: gpu bounds check found ", report.bad_indices, " of 3 bad indices");
  *bounds_line = "gpu bounds check (error mode, 3 planted): " + bounds_check_status(report, BoundsCheckMode::kError).message();
  return Status::ok();
}
#endif

Status run_check(std::uint64_t seed) {
  PARITY_ASSIGN_OR_RETURN(const CheckProblem c, make_check_problem(seed));
  std::printf("tbe check: %d tables (dims 4..2048), batch %lld, %lld indices, weighted, int32, seed %llu\n",
              c.problem.layout.num_tables(), static_cast<long long>(c.problem.batch_size),
              static_cast<long long>(c.problem.num_indices), static_cast<unsigned long long>(seed));
  std::vector<CheckRow> rows;
  PARITY_RETURN_IF_ERROR(run_cpu(c, rows));
  std::string gpu_note = "gpu: skipped (built without CUDA)";
  std::string bounds_line;
#ifdef PARITY_HAS_CUDA
  if (parity::gpu::device_count() > 0) {
    PARITY_RETURN_IF_ERROR(run_gpu(c, rows, &bounds_line));
    gpu_note.clear();
  } else {
    gpu_note = "gpu: skipped (no CUDA device visible)";
  }
#endif
  std::printf("%-14s %-28s %14s %14s  %s\n", "path", "op", "max_abs_err", "tolerance", "result");
  bool all_ok = true;
  for (const auto& row : rows) {
    const bool ok = row.max_err <= row.tolerance;
    all_ok = all_ok && ok;
    std::printf("%-14s %-28s %14.3e %14.3e  %s\n", row.path.c_str(), row.op.c_str(), row.max_err, row.tolerance,
                ok ? "ok" : "FAIL");
  }
  if (!gpu_note.empty()) std::printf("%s\n", gpu_note.c_str());
  if (!bounds_line.empty()) std::printf("%s\n", bounds_line.c_str());
  // CPU bounds check in fix mode on the same planted entries.
  auto bad = c.batch.indices;
  bad[5] = c.problem.layout.feature_rows(0) + 7;
  auto packed = pack_indices(bad, DType::kI32);
  auto offsets = c.offsets;
  PARITY_ASSIGN_OR_RETURN(auto report, cpu::tbe_bounds_check(c.problem, BoundsCheckMode::kFix, packed.data(), offsets.data()));
  std::printf("cpu bounds check (fix mode, 1 planted): %s\n", report.describe().c_str());
  if (!all_ok) return internal_error("tbe check: an error exceeded its tolerance");
  return Status::ok();
}

}  // namespace

void add_tbe_commands(CLI::App& tbe, Outcome& outcome) {
  auto* check = tbe.add_subcommand("check", "Run every TBE path on a small built-in problem against the fp64 reference");
  auto seed = std::make_shared<std::uint64_t>(7);
  check->add_option("--seed", *seed, "Seed of the built-in problem");
  check->callback([seed, &outcome] { outcome.status = run_check(*seed); });
}

}  // namespace parity::cli
