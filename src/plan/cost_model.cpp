// Placement-independent parts of the planner's models: GEMM pricing, the activation profile,
// and the dense memory/time every rank carries (docs/planner.md, "Dense model").
#include "parity/plan/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"

namespace parity::plan {

Result<GemmPricer> GemmPricer::create(const hw::HardwareSpec& gpu,
                                      const std::optional<std::filesystem::path>& data_dir) {
  PARITY_ASSIGN_OR_RETURN(const gemm::DeviceParams device, gemm::device_params_from_spec(gpu));
  PARITY_ASSIGN_OR_RETURN(const gemm::GemmCalibration calibration,
                          gemm::load_gemm_calibration_or_default(device, data_dir));
  return GemmPricer(device, calibration.scalars, gpu.dense_fp32_tflops.value * 1e6);
}

double GemmPricer::time_us(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                           DType dtype) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0.0;
  const auto key = std::make_tuple(m, n, k, batch, static_cast<int>(dtype));
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  gemm::GemmProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.batch = batch;
  problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
  std::shared_ptr<gemm::Selector>& selector = selector_by_dtype_[static_cast<int>(dtype)];
  if (selector == nullptr) {
    selector = std::make_shared<gemm::Selector>(gemm::GemmModel(device_, scalars_));
    selector->set_candidates(gemm::modelled_space(gemm::problem_class(problem), device_));
  }
  const auto selection = selector->select(problem, 1);
  // A shape the selector cannot price (none should reach here) costs its compulsory bytes.
  const double time_us = selection.is_ok()
                             ? selection->predicted_us
                             : problem.min_bytes() / (device_.hbm_bytes_per_s * 1e-6);
  cache_.emplace(key, time_us);
  return time_us;
}

double GemmPricer::simt_fp32_time_us(std::int64_t m, std::int64_t n, std::int64_t k,
                                     std::int64_t batch) const {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0.0;
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                       static_cast<double>(k) * static_cast<double>(batch);
  const double bytes = 4.0 * static_cast<double>(batch) *
                       static_cast<double>(m * k + k * n + m * n);
  return std::max(flops / (fp32_flops_per_us_ * kSimtFp32Efficiency),
                  bytes / (device_.hbm_bytes_per_s * 1e-6)) +
         scalars_.launch_us;
}

namespace {

std::int64_t gpu_padded_columns(std::int64_t columns) { return (columns + 7) / 8 * 8; }
std::int64_t parameter_block_floats(std::int64_t count) { return (count + 15) / 16 * 16; }

// The top MLP's input width in the trainer's buffers: the dot output padded, the cross net's
// width (its concatenation) as is.
std::int64_t trainer_top_input_width(const PlannerModel& model) {
  return model.interaction == InteractionKind::kDot
             ? gpu_padded_columns(model.interaction_output_width())
             : model.interaction_output_width();
}

}  // namespace

std::int64_t trainer_dense_parameter_count(const PlannerModel& model) {
  std::int64_t floats = 0;
  const auto mlp = [&floats](std::int64_t in, const std::vector<int>& widths) {
    for (const int out : widths) {
      floats += parameter_block_floats(in * out) + parameter_block_floats(out);
      in = out;
    }
  };
  mlp(gpu_padded_columns(model.dense_features), model.bottom_mlp);
  if (model.interaction == InteractionKind::kDcnV2) {
    const std::int64_t width = model.interaction_output_width();
    floats += model.cross_layers *
              (2 * parameter_block_floats(width * model.cross_rank) + parameter_block_floats(width));
  }
  mlp(trainer_top_input_width(model), model.top_mlp);
  return floats;
}

double activation_bytes_per_sample(const PlannerModel& model, Precision precision) {
  const double s = precision_bytes(precision).activation;
  const auto pooled = static_cast<double>(model.pooled_width());
  const auto top_input = static_cast<double>(trainer_top_input_width(model));
  double widest = std::max(static_cast<double>(gpu_padded_columns(model.dense_features)), top_input);
  double kept = 0.0;
  // Each MLP layer's output (the ReLU backward reads it; the trainer's default keeps no masks).
  for (const auto* widths : {&model.bottom_mlp, &model.top_mlp}) {
    for (const int width : *widths) {
      kept += width * s;
      widest = std::max<double>(widest, width);
    }
  }
  kept += pooled * s + top_input * s;  // pooled embeddings; dot output or the cross net's x0
  double gradients = 3.0 * widest * s  // two ping-pong buffers and the pre-activation gradient
                     + pooled * 4.0     // the TBE backward reads fp32 pooled gradients
                     + s;               // the logit gradient
  if (model.interaction == InteractionKind::kDcnV2) {
    const auto width = static_cast<double>(model.interaction_output_width());
    const double cross = 2.0 * width + model.cross_rank;  // output and product (W), low rank (r)
    kept += model.cross_layers * cross * s;
    gradients += cross * s;  // the x0 gradient and the backward's scratch
  }
  return kept + gradients;
}

double input_bytes_per_sample(const PlannerModel& model, Precision precision) {
  double ids_per_sample = 0.0;
  for (const PlannerTable& table : model.tables) ids_per_sample += table.ids_per_sample;
  const auto dense = static_cast<double>(gpu_padded_columns(model.dense_features));
  const double dense_copy = precision_bytes(precision).activation == 2 ? 2.0 * dense : 0.0;
  return 4.0 * dense + dense_copy + 8.0 * ids_per_sample + 8.0 * model.num_features() + 4.0;
}

double tbe_backward_workspace_bytes(double lookups, int max_dim) {
  if (lookups <= 0.0) return 0.0;
  const double chunks = std::ceil(lookups / std::max(128, max_dim));
  return 16.0 * lookups + chunks * (8.0 * max_dim + 32.0);
}

double expected_unique_rows(double rows, double lookups) {
  if (rows <= 0.0 || lookups <= 0.0) return 0.0;
  return rows * -std::expm1(-lookups / rows);  // rows * (1 - exp(-N/E)), exact for small N/E
}

namespace {

struct DenseTimes {
  double forward_us = 0, backward_us = 0, bottom_forward_us = 0, bottom_backward_us = 0;
  double interaction_forward_us = 0;
};

// One linear layer [batch, in] -> [batch, out]: forward, data gradient (unless the layer's
// input needs none), weight gradient, in the GEMM model's column-major terms.
double gemm_us(GemmPricer& pricer, std::int64_t m, std::int64_t n, std::int64_t k,
               std::int64_t batch, const PrecisionBytes& precision) {
  return precision.is_simt_fp32 ? pricer.simt_fp32_time_us(m, n, k, batch)
                                : pricer.time_us(m, n, k, batch, precision.gemm_dtype);
}

void add_linear(GemmPricer& pricer, std::int64_t batch, std::int64_t in, std::int64_t out,
                const PrecisionBytes& precision, bool needs_data_gradient, double& forward_us,
                double& backward_us) {
  forward_us += gemm_us(pricer, out, batch, in, 1, precision);
  if (needs_data_gradient) backward_us += gemm_us(pricer, in, batch, out, 1, precision);
  backward_us += gemm_us(pricer, out, in, batch, 1, precision);
}

DenseTimes dense_times(const PlannerModel& model, const PlannerCalibration& calibration,
                       double hbm_bytes_per_us, GemmPricer& pricer, std::int64_t batch,
                       Precision precision) {
  const PrecisionBytes bytes = precision_bytes(precision);
  const PrecisionBytes& dtype = bytes;
  const double s = bytes.activation;
  const double launch_us = calibration.kernel_launch_us.value;
  const double elementwise_bytes_per_us = hbm_bytes_per_us * calibration.elementwise_efficiency.value;
  auto elementwise_us = [&](double bytes_per_sample, int kernels) {
    return bytes_per_sample * static_cast<double>(batch) / elementwise_bytes_per_us +
           kernels * launch_us;
  };
  DenseTimes t;
  std::int64_t in = model.dense_features;
  for (std::size_t l = 0; l < model.bottom_mlp.size(); ++l) {
    add_linear(pricer, batch, in, model.bottom_mlp[l], dtype, l > 0, t.bottom_forward_us,
               t.bottom_backward_us);
    // Bias + ReLU ride the GEMM epilogue forward; backward masks the gradient and reduces bias.
    t.bottom_backward_us += elementwise_us(3.0 * model.bottom_mlp[l] * s, 2);
    in = model.bottom_mlp[l];
  }
  double interaction_fwd = 0.0, interaction_bwd = 0.0;
  const std::int64_t dim = model.bottom_mlp.back();
  const std::int64_t vectors = model.num_features() + 1;
  if (model.interaction == InteractionKind::kDcnV2) {
    const std::int64_t width_elems = model.interaction_output_width();
    const auto width = static_cast<double>(width_elems);
    interaction_fwd += elementwise_us(2.0 * width * s, 1);  // concatenation
    for (int layer = 0; layer < model.cross_layers; ++layer) {
      add_linear(pricer, batch, width_elems, model.cross_rank, dtype, true, interaction_fwd,
                 interaction_bwd);
      add_linear(pricer, batch, model.cross_rank, width_elems, dtype, true, interaction_fwd,
                 interaction_bwd);
      interaction_fwd += elementwise_us(4.0 * width * s, 1);  // x0 * (u + c) + x_l
      interaction_bwd += elementwise_us(6.0 * width * s, 2);
    }
  } else {
    interaction_fwd += gemm_us(pricer, vectors, vectors, dim, batch, dtype);  // T T^T per sample
    interaction_bwd += gemm_us(pricer, vectors, dim, vectors, batch, dtype);  // (dZ + dZ^T) T
    const auto v = static_cast<double>(vectors), d = static_cast<double>(dim);
    const double moved = 2.0 * v * d + v * v +
                         2.0 * static_cast<double>(model.interaction_output_width());
    interaction_fwd += elementwise_us(moved * s, 3);
    interaction_bwd += elementwise_us(1.5 * moved * s, 3);
  }
  double top_fwd = 0.0, top_bwd = 0.0;
  in = model.interaction_output_width();
  for (const int out : model.top_mlp) {
    add_linear(pricer, batch, in, out, dtype, true, top_fwd, top_bwd);
    top_bwd += elementwise_us(3.0 * out * s, 2);
    in = out;
  }
  t.interaction_forward_us = interaction_fwd;
  t.forward_us = t.bottom_forward_us + interaction_fwd + top_fwd + elementwise_us(3.0 * 4.0, 1);
  t.backward_us = t.bottom_backward_us + interaction_bwd + top_bwd + elementwise_us(3.0 * 4.0, 1);
  return t;
}

double dense_optimizer_state_bytes_per_parameter(DenseOptimizer optimizer) {
  switch (optimizer) {
    case DenseOptimizer::kSgd: return 0.0;
    case DenseOptimizer::kAdagrad: return 4.0;
    case DenseOptimizer::kAdam: return 8.0;
  }
  return 0.0;
}

}  // namespace

double rank_capacity_bytes(const Machine& machine) {
  return machine.gpu.hbm_capacity_gb.value * 1e9;
}

Result<ConfigCosts> config_costs(const Machine& machine, const PlannerModel& model,
                                 const PlannerCalibration& calibration, GemmPricer& pricer,
                                 const TrainConfig& config) {
  PARITY_RETURN_IF_ERROR(model.validate());
  PARITY_CHECK_ARG(config.per_rank_batch >= 1, "per_rank_batch: ", config.per_rank_batch,
                   " must be >= 1");
  PARITY_CHECK_ARG(config.global_batch == config.per_rank_batch * machine.num_gpus,
                   "global_batch: ", config.global_batch, " must equal per_rank_batch ",
                   config.per_rank_batch, " x ", machine.num_gpus, " ranks");
  const PrecisionBytes bytes = precision_bytes(config.precision);
  const double b = static_cast<double>(config.per_rank_batch);
  const double parameters = static_cast<double>(trainer_dense_parameter_count(model));
  const double hbm_bytes_per_us = machine.gpu.hbm_bandwidth_tbps.value * 1e6;

  ConfigCosts costs;
  costs.config = config;
  costs.comm_bytes_per_elem = bytes.comm;
  costs.table_bytes_per_elem = bytes.table;
  MemoryBreakdown& memory = costs.shared_memory;
  memory.dense_parameters = parameters * (4.0 + (bytes.activation == 2 ? 2.0 : 0.0));
  memory.dense_gradients = parameters * 4.0;
  memory.dense_optimizer = parameters * dense_optimizer_state_bytes_per_parameter(model.dense_optimizer);
  memory.activations = b * activation_bytes_per_sample(model, config.precision);
  memory.io_buffers = calibration.input_batches_in_flight.value * b * input_bytes_per_sample(model, config.precision);
  if (machine.num_gpus > 1) {
    // Receive side of the pooled all-to-all and its gradient's send side, and the library's own.
    memory.comm_buffers = 2.0 * b * static_cast<double>(model.pooled_width()) * bytes.comm +
                          calibration.comm_library_buffer_gb.value * 1e9;
  }
  memory.workspaces = kGemmWorkspaceBytes;  // the TBE workspace depends on the placement
  memory.runtime_reserve = calibration.runtime_reserve_gb.value * 1e9;
  for (const PlannerTable& table : model.tables) costs.max_table_dim = std::max(costs.max_table_dim, table.dim);

  const DenseTimes dense =
      dense_times(model, calibration, hbm_bytes_per_us, pricer, config.per_rank_batch, config.precision);
  TimeBreakdown& time = costs.dense_time;
  time.dense_forward_us = dense.forward_us;
  time.dense_backward_us = dense.backward_us;
  if (config.checkpointing == Checkpointing::kFull) time.recompute_us = dense.forward_us;
  // Fused optimiser: read master, gradient and state, write master, state (+ the bf16 copy).
  const double state = dense_optimizer_state_bytes_per_parameter(model.dense_optimizer);
  const double optimizer_bytes =
      parameters * (8.0 + 4.0 + 2.0 * state + (bytes.activation == 2 ? 2.0 : 0.0));
  time.optimizer_us = optimizer_bytes / (hbm_bytes_per_us * calibration.elementwise_efficiency.value) +
                      calibration.kernel_launch_us.value;
  time.overhead_us = calibration.step_overhead_us.value;
  costs.dense_gradient_bytes = parameters * 4.0;
  costs.bottom_forward_us = dense.bottom_forward_us;
  costs.bottom_backward_us = dense.bottom_backward_us;
  return costs;
}

}  // namespace parity::plan
