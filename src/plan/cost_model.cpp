// Placement-independent parts of the planner's models: GEMM pricing, the activation profile,
// and the dense memory/time every rank carries (docs/planner.md, "Dense model").
#include "parity/plan/cost_model.hpp"

#include <algorithm>
#include <cmath>

#include "parity/embedding/tbe.hpp"
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

double GemmPricer::time_us(const Shape& shape) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0) return 0.0;
  const int dtype = static_cast<int>(shape.dtype), c_dtype = static_cast<int>(shape.c_dtype);
  const int layout = static_cast<int>(shape.layout), epilogue = static_cast<int>(shape.epilogue);
  const auto key =
      std::make_tuple(shape.m, shape.n, shape.k, shape.batch, dtype, c_dtype, layout, epilogue);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  gemm::GemmProblem problem;
  problem.m = shape.m;
  problem.n = shape.n;
  problem.k = shape.k;
  problem.batch = shape.batch;
  problem.a_dtype = problem.b_dtype = shape.dtype;
  problem.c_dtype = shape.c_dtype;
  problem.layout = shape.layout;
  problem.epilogue = shape.epilogue;
  std::shared_ptr<gemm::Selector>& selector =
      selector_by_class_[std::make_tuple(dtype, c_dtype, layout, epilogue)];
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
  const auto chunk = static_cast<double>(embedding::tbe_backward_chunk_positions(
      static_cast<std::int64_t>(std::ceil(lookups)), max_dim, embedding::BackwardChunkLength::kShort));
  const double chunks = std::ceil(lookups / chunk);
  return 16.0 * lookups + chunks * (8.0 * max_dim + 32.0);
}

int tbe_sort_passes(const PlannerModel& model) {
  constexpr int kRadixDigitBits = 9;  // src/backends/gpu/sort/kernels.cuh kRadixMaxDigitBits
  double rows = 0.0;
  for (const PlannerTable& table : model.tables) rows += static_cast<double>(table.rows);
  // The key holds every global row and the sentinel row (= total rows).
  const int row_bits = std::max(1, static_cast<int>(std::ceil(std::log2(rows + 1.0))));
  return (row_bits + kRadixDigitBits - 1) / kRadixDigitBits;
}

double tbe_sort_bytes_per_lookup(int passes) { return 8.0 + 24.0 * passes + 8.0; }

double expected_unique_rows(double rows, double lookups) {
  if (rows <= 0.0 || lookups <= 0.0) return 0.0;
  return rows * -std::expm1(-lookups / rows);  // rows * (1 - exp(-N/E)), exact for small N/E
}

namespace {

// Forward and backward of the MLPs (bottom and top) and of the interaction, as the trainer's step
// benchmark splits them (phases "gemms" and "interaction").
struct DenseTimes {
  double mlp_forward_us = 0, mlp_backward_us = 0, bottom_forward_us = 0, bottom_backward_us = 0;
  double interaction_forward_us = 0, interaction_backward_us = 0, loss_us = 0;
};

// The TF32 factor for a layout (cuBLAS column-major op codes) by its count of MN-major operands:
// TN none, NN (A) and TT (B) one, NT two.
double tf32_gemm_time_factor(const PlannerCalibration& calibration, gemm::GemmLayout layout) {
  switch (layout) {
    case gemm::GemmLayout::kTN: return calibration.tf32_tn_gemm_time_factor.value;
    case gemm::GemmLayout::kNN:
    case gemm::GemmLayout::kTT: return calibration.tf32_nn_gemm_time_factor.value;
    case gemm::GemmLayout::kNT: return calibration.tf32_nt_gemm_time_factor.value;
  }
  return calibration.tf32_nt_gemm_time_factor.value;
}

// Prices the trainer's dense kernels for one per-rank batch (docs/planner.md, "Dense model").
class DensePricer {
 public:
  DensePricer(GemmPricer& pricer, const PlannerCalibration& calibration, double hbm_bytes_per_us,
              std::int64_t batch, Precision precision)
      : pricer_(pricer),
        calibration_(calibration),
        hbm_bytes_per_us_(hbm_bytes_per_us),
        batch_(batch),
        bytes_(precision_bytes(precision)) {}

  double activation_bytes() const { return bytes_.activation; }

  // A memory-bound kernel moving `bytes_per_sample` per sample of the batch.
  double elementwise_us(double bytes_per_sample, int kernels) const {
    return bytes_per_sample * static_cast<double>(batch_) /
               (hbm_bytes_per_us_ * calibration_.elementwise_efficiency.value) +
           kernels * calibration_.kernel_launch_us.value;
  }

  // C[m x n] = A[m x k] B[k x n] in the layer's precision through the GEMM model, as the trainer
  // creates it (nn/gemm_cache.cpp): `layout`, fp32 D for weight gradients, the bias epilogue class.
  // TF32 takes its layout's measured factor over the model (the model is calibrated on bf16).
  double gemm_us(std::int64_t m, std::int64_t n, std::int64_t k, gemm::GemmLayout layout,
                 bool fp32_output, bool bias) {
    if (bytes_.is_simt_fp32) return pricer_.simt_fp32_time_us(m, n, k, 1);
    GemmPricer::Shape shape{m,
                            n,
                            k,
                            1,
                            bytes_.gemm_dtype,
                            fp32_output ? DType::kF32 : bytes_.gemm_dtype,
                            layout,
                            bias ? gemm::Epilogue::kBias : gemm::Epilogue::kNone};
    const double factor =
        bytes_.gemm_dtype == DType::kF32 ? tf32_gemm_time_factor(calibration_, layout) : 1.0;
    return factor * pricer_.time_us(shape);
  }

  // The bias-gradient epilogue of a weight-gradient GEMM (reduction length k = the batch): its
  // measured time beyond the plain GEMM grows with k, whatever the layer's width.
  double bias_gradient_us() const {
    return calibration_.bias_gradient_ns_per_sample.value * static_cast<double>(batch_) * 1e-3;
  }

  // One linear layer [batch, in] -> [batch, out] of the trainer (nn::linear_forward/backward):
  // forward GEMM with the bias (+ReLU) epilogue; backward: the ReLU derivative as its own pass,
  // the weight-gradient GEMM with the bias-gradient epilogue, the data-gradient GEMM unless the
  // layer's input needs none.
  void linear(std::int64_t in, std::int64_t out, bool relu, bool has_bias, bool data_gradient,
              double& forward_us, double& backward_us) {
    const double s = bytes_.activation;
    if (relu) backward_us += elementwise_us(3.0 * static_cast<double>(out) * s, 1);
    if (has_bias) backward_us += bias_gradient_us();
    if (out == 1) {  // the logit: matrix-vector products, see gemv_us
      forward_us += gemv_us(in, false);
      backward_us += gemv_us(in, true) + (data_gradient ? gemv_us(in, false) : 0.0);
      return;
    }
    // nn/gemm_cache.cpp: forward TN (m=out, n=batch, k=in); weight gradient NT (m=in, n=out,
    // k=batch) into fp32; data gradient NN (m=in, n=batch, k=out).
    forward_us += gemm_us(out, batch_, in, gemm::GemmLayout::kTN, false, has_bias);
    backward_us += gemm_us(in, out, batch_, gemm::GemmLayout::kNT, true, false);
    if (data_gradient) backward_us += gemm_us(in, batch_, out, gemm::GemmLayout::kNN, false, false);
  }

 private:
  // A GEMM with one side of width 1 (the logit layer) streams its [batch, in] operand once: the
  // GEMM model, which describes tiled tensor-core kernels, does not apply. In bf16 cuBLASLt has no
  // kernel for the weight gradient's fp32 bias gradient at a width of 1, so the trainer runs that
  // one on fp32 copies (nn_variants_gpu.cpp Fp32Fallback): a cast of the operand (read 2, write 4
  // bytes) before the fp32 pass; the forward and the data gradient run in bf16.
  double gemv_us(std::int64_t in, bool weight_gradient) const {
    const double elements = static_cast<double>(in);
    const bool fallback = weight_gradient && bytes_.activation == 2 && !bytes_.is_simt_fp32;
    const double per_sample =
        fallback ? elements * (2.0 + 4.0 + 4.0) : elements * bytes_.activation;
    return elementwise_us(per_sample, fallback ? 2 : 1);
  }

  GemmPricer& pricer_;
  const PlannerCalibration& calibration_;
  double hbm_bytes_per_us_;
  std::int64_t batch_;
  PrecisionBytes bytes_;
};

// The dot interaction's kernels (nn::dot_interaction_forward/backward; docs/planner.md). The fast
// variants the trainer prefers — the Gram-tile forward (dim % 4 == 0, one sample's vectors, pair
// partials and row blocks in 48 KiB of shared memory) and the register-column backward (even dim,
// <= 32 vectors) — are memory-bound kernels: their HBM bytes in the storage types over
// interaction_fast_efficiency, or their fp32 FMAs on the vector FP32 rate, whichever is longer.
// The general one-block-per-sample kernels stage every operand as fp32: their traffic counted in
// fp32 elements over interaction_efficiency. Either pass pays one launch.
void dot_interaction(const PlannerModel& model, const PlannerCalibration& calibration,
                     double hbm_bytes_per_us, double fp32_flops_per_us, std::int64_t batch,
                     Precision precision, double& forward_us, double& backward_us) {
  constexpr double kSharedBytesPerBlock =
      48.0 * 1024;                                // src/backends/gpu/nn/launch.cu kMaxSharedBytes
  constexpr int kRegisterColumnsMaxVectors = 32;  // ... kColumnsMaxVectors
  const std::int64_t dim_elements = model.bottom_mlp.back();
  const auto dim = static_cast<double>(dim_elements);
  const std::int64_t vector_count = model.num_features() + 1;
  const auto vectors = static_cast<double>(vector_count);
  const auto output = static_cast<double>(trainer_top_input_width(model));
  const auto pairs = static_cast<double>(model.interaction_output_width()) - dim;
  const double s = precision_bytes(precision).activation;
  const double samples = static_cast<double>(batch);
  const double launch_us = calibration.kernel_launch_us.value;
  const double fast_efficiency = s < 4.0 ? calibration.interaction_fast_efficiency_16bit.value
                                         : calibration.interaction_fast_efficiency.value;
  const double fast_bytes_per_us = hbm_bytes_per_us * fast_efficiency;
  const double flops_per_us = fp32_flops_per_us * GemmPricer::kSimtFp32Efficiency;
  const double general_bytes_per_us = hbm_bytes_per_us * calibration.interaction_efficiency.value;
  // Forward: reads the vectors, writes the padded output row.
  const double row_blocks = std::ceil(vectors / 4.0);
  const bool gram_tiles = dim_elements % 4 == 0 &&
                          4.0 * (vectors * dim + 4.0 * row_blocks + pairs) <= kSharedBytesPerBlock;
  if (gram_tiles) {
    const double gram_flops =
        2.0 * 16.0 * dim * row_blocks * (row_blocks + 1.0) / 2.0;  // 4 x 4 tiles
    forward_us += std::max((vectors * dim + output) * s * samples / fast_bytes_per_us,
                           gram_flops * samples / flops_per_us);
  } else {
    forward_us += 4.0 * (vectors * dim + output) * samples / general_bytes_per_us;
  }
  // Backward: reads the vectors and the output gradient (dim + pairs), writes the bottom gradient
  // (activation type) and the pooled gradients (fp32, the TBE backward's input).
  const double features = vectors - 1.0;
  if (dim_elements % 2 == 0 && vector_count <= kRegisterColumnsMaxVectors) {
    const double bytes = (vectors * dim + dim + pairs + dim) * s + features * dim * 4.0;
    backward_us += std::max(bytes * samples / fast_bytes_per_us,
                            2.0 * vectors * vectors * dim * samples / flops_per_us);
  } else {
    backward_us += 4.0 * (2.0 * vectors * dim + dim + pairs) * samples / general_bytes_per_us;
  }
  forward_us += launch_us;
  backward_us += launch_us;
}

// DCNv2 (nn::cross_layer_forward/backward and the trainer's concatenation and split): per layer
// the down projection W -> r (no bias) and the up projection r -> W (bias), the fused element-wise
// kernels, and the data gradient of the down projection accumulated onto the layer's input
// gradient (beta = 1: one more read).
void cross_network(const PlannerModel& model, DensePricer& dense, double& forward_us,
                   double& backward_us) {
  const std::int64_t width = model.interaction_output_width();
  const auto w = static_cast<double>(width);
  const double s = dense.activation_bytes();
  forward_us += dense.elementwise_us(2.0 * w * s, 2);  // concatenation: two strided copies
  for (int layer = 0; layer < model.cross_layers; ++layer) {
    dense.linear(width, model.cross_rank, false, false, true, forward_us, backward_us);
    dense.linear(model.cross_rank, width, false, true, true, forward_us, backward_us);
    forward_us += dense.elementwise_us(4.0 * w * s, 1);  // out = x0 * (u + c) + x_l
    // d(u + c) = g * x0, grad_x0 (+)= g * (u + c), grad_input = g: reads g, x0, u + c (and
    // grad_x0 after the first layer visited), writes three; then the beta = 1 read.
    const bool accumulates = layer + 1 < model.cross_layers;
    backward_us += dense.elementwise_us((6.0 + (accumulates ? 1.0 : 0.0) + 1.0) * w * s, 1);
  }
  // grad_x0 + grad_input split into the bottom gradient (activation type) and the pooled
  // gradient (fp32, the TBE backward's input).
  const auto dim = static_cast<double>(model.bottom_mlp.back());
  backward_us += dense.elementwise_us(2.0 * w * s + dim * s + (w - dim) * 4.0, 1);
}

DenseTimes dense_times(const PlannerModel& model, const PlannerCalibration& calibration,
                       double hbm_bytes_per_us, GemmPricer& pricer, std::int64_t batch,
                       Precision precision) {
  DensePricer dense(pricer, calibration, hbm_bytes_per_us, batch, precision);
  DenseTimes t;
  std::int64_t in = gpu_padded_columns(model.dense_features);
  for (std::size_t l = 0; l < model.bottom_mlp.size(); ++l) {
    dense.linear(in, model.bottom_mlp[l], true, true, l > 0, t.bottom_forward_us,
                 t.bottom_backward_us);
    in = model.bottom_mlp[l];
  }
  if (model.interaction == InteractionKind::kDcnV2) {
    cross_network(model, dense, t.interaction_forward_us, t.interaction_backward_us);
  } else {
    dot_interaction(model, calibration, hbm_bytes_per_us, pricer.fp32_flops_per_us(), batch,
                    precision, t.interaction_forward_us, t.interaction_backward_us);
  }
  double top_forward_us = 0.0, top_backward_us = 0.0;
  in = trainer_top_input_width(model);
  for (std::size_t l = 0; l < model.top_mlp.size(); ++l) {
    const bool is_last = l + 1 == model.top_mlp.size();  // the logit has no ReLU
    dense.linear(in, model.top_mlp[l], !is_last, true, true, top_forward_us, top_backward_us);
    in = model.top_mlp[l];
  }
  t.mlp_forward_us = t.bottom_forward_us + top_forward_us;
  t.mlp_backward_us = t.bottom_backward_us + top_backward_us;
  // The loss: one pass over logits and labels writing the logit gradient, its partial sums, and
  // the host read of the loss value.
  t.loss_us = dense.elementwise_us(3.0 * 4.0, 2) + calibration.kernel_launch_us.value;
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
  time.dense_forward_us = dense.mlp_forward_us + dense.interaction_forward_us + dense.loss_us;
  time.dense_backward_us = dense.mlp_backward_us + dense.interaction_backward_us;
  // Checkpointing recomputes the MLP and interaction blocks (not the loss) during the backward.
  const bool recomputes = config.checkpointing == Checkpointing::kFull;
  if (recomputes) time.recompute_us = dense.mlp_forward_us + dense.interaction_forward_us;
  costs.mlp_us = dense.mlp_forward_us * (recomputes ? 2.0 : 1.0) + dense.mlp_backward_us;
  costs.interaction_us =
      dense.interaction_forward_us * (recomputes ? 2.0 : 1.0) + dense.interaction_backward_us;
  costs.loss_us = dense.loss_us;
  // Fused optimiser: read master, gradient and state, write master, state (+ the bf16 copy).
  const double state = dense_optimizer_state_bytes_per_parameter(model.dense_optimizer);
  const double optimizer_bytes =
      parameters * (8.0 + 4.0 + 2.0 * state + (bytes.activation == 2 ? 2.0 : 0.0));
  time.optimizer_us = optimizer_bytes / (hbm_bytes_per_us * calibration.elementwise_efficiency.value) +
                      calibration.kernel_launch_us.value;
  time.overhead_us = calibration.step_overhead_us.value;
  costs.dense_gradient_bytes = parameters * 4.0;
  costs.bottom_forward_us = dense.bottom_forward_us;
  costs.sort_passes = tbe_sort_passes(model);
  costs.bottom_backward_us = dense.bottom_backward_us;
  return costs;
}

}  // namespace parity::plan
