// DlrmModel: buffers, seeded initialisation, forward and training step (see dlrm_model.hpp).
#include "train/dlrm_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "parity/core/dtype.hpp"
#include "core/device_hooks.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "parity/nn/interaction.hpp"
#include "parity/nn/loss.hpp"
#include "parity/nn/optimizer.hpp"
#include "nn/variant_support.hpp"

namespace parity::train::detail {

namespace {

constexpr std::int64_t kFloat = 4;
// Parameter blocks start on 64-byte boundaries (16 floats).
std::int64_t align16(std::int64_t count) { return (count + 15) / 16 * 16; }

// Counter-based random numbers: value k of stream s depends only on (seed, s, k), so
// initialisation is parallel and independent of the thread count.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double uniform01(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t bits = mix(mix(seed ^ mix(stream)) + index);
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1p-53;  // (0, 1)
}
void fill_uniform(float* values, std::int64_t count, double bound, std::uint64_t seed,
                  std::uint64_t stream) {
#pragma omp parallel for schedule(static) if (count >= nn::detail::kParallelMinElements)
  for (std::int64_t k = 0; k < count; ++k) {
    values[k] = static_cast<float>((2 * uniform01(seed, stream, k) - 1) * bound);
  }
}
void fill_normal(float* values, std::int64_t count, double stddev, std::uint64_t seed,
                 std::uint64_t stream) {
#pragma omp parallel for schedule(static) if (count >= nn::detail::kParallelMinElements)
  for (std::int64_t k = 0; k < count; ++k) {  // Box-Muller on two counters
    const double u1 = uniform01(seed, stream, 2 * k), u2 = uniform01(seed, stream, 2 * k + 1);
    values[k] = static_cast<float>(stddev * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
  }
}

Result<Buffer> activation(DeviceKind device, std::int64_t rows, std::int64_t cols, const char* what,
                          DType dtype = DType::kF32) {
  return Buffer::allocate(device, rows * cols * static_cast<std::int64_t>(dtype_size_bytes(dtype)), what);
}

}  // namespace

// Long on purpose: the model's parameter layout and every buffer, allocated in one place in the
// order the step uses them (train/memory_plan.cpp lists the same buffers by name).
Result<DlrmModel> DlrmModel::create(const model::ModelSpec& spec, std::int64_t max_batch_size,
                                    const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(spec.validate());
  PARITY_CHECK_ARG(max_batch_size >= 1, "batch_size=", max_batch_size, ": expected >= 1");
  DlrmModel model;
  model.spec_ = spec;
  model.context_ = context;
  model.max_batch_size_ = max_batch_size;
  PARITY_ASSIGN_OR_RETURN(model.layout_, spec.tbe_layout());
  const DeviceKind device = context.device;
  const std::int64_t batch = max_batch_size;
  // bf16 compute: bf16 activations and GEMM operands, fp32 master weights, fp32 accumulation.
  const DType act = spec.precision == model::DensePrecision::kBf16 ? DType::kBF16 : DType::kF32;
  if (act == DType::kBF16 && device != DeviceKind::kGpu) {
    return unsupported("precision: bf16 dense compute runs on the GPU only (use fp32 on the CPU)");
  }
  model.act_dtype_ = act;

  // Dense parameter layout: bottom layers, cross layers, top layers.
  std::int64_t offset = 0;
  const auto add_mlp = [&](std::int64_t in, std::int64_t fan_in, const std::vector<int>& widths,
                           bool relu_on_last, std::vector<LinearSlot>* slots) {
    for (std::size_t l = 0; l < widths.size(); ++l) {
      LinearSlot slot;
      slot.in = in;
      slot.fan_in = l == 0 ? fan_in : in;
      slot.out = widths[l];
      const bool is_last = l + 1 == widths.size();
      slot.activation = (!is_last || relu_on_last) ? nn::Activation::kRelu : nn::Activation::kNone;
      slot.weight_offset = offset;
      offset += align16(slot.in * slot.out);
      slot.bias_offset = offset;
      offset += align16(slot.out);
      slots->push_back(slot);
      in = slot.out;
    }
  };
  // Bottom MLP: ReLU after every layer (DLRM, MLPerf DLRMv2); top: none after the logit.
  // GPU: the dense input, and the dot interaction's output, padded to 8 columns (the cross net's
  // width is the concatenation itself and stays unpadded).
  const bool on_gpu = device == DeviceKind::kGpu;
  const auto padded = [](bool pad, std::int64_t columns) { return pad ? (columns + 7) / 8 * 8 : columns; };
  model.dense_input_width_ = padded(on_gpu, spec.num_dense_features);
  add_mlp(model.dense_input_width_, spec.num_dense_features, spec.bottom_mlp, true, &model.bottom_);
  const std::int64_t width = spec.interaction_output_dim();
  model.top_input_width_ = padded(on_gpu && spec.interaction == model::InteractionKind::kDot, width);
  if (spec.interaction == model::InteractionKind::kDcnV2) {
    for (int l = 0; l < spec.cross_layers; ++l) {
      CrossSlot slot;
      slot.v_offset = offset;
      offset += align16(spec.cross_rank * width);
      slot.u_offset = offset;
      offset += align16(width * spec.cross_rank);
      slot.c_offset = offset;
      offset += align16(width);
      model.cross_.push_back(slot);
    }
  }
  add_mlp(model.top_input_width_, width, spec.top_mlp, false, &model.top_);
  model.dense_parameters_ = offset;
  if (on_gpu) PARITY_RETURN_IF_ERROR(model.check_device_memory(batch));

  const int state_buffers = nn::dense_optimizer_state_buffers(spec.dense_optimizer.kind);
  PARITY_ASSIGN_OR_RETURN(model.dense_weights_, Buffer::allocate(device, offset * kFloat, "dense weights"));
  PARITY_ASSIGN_OR_RETURN(model.dense_grads_, Buffer::allocate(device, offset * kFloat, "dense gradients"));
  if (act == DType::kBF16) {
    PARITY_ASSIGN_OR_RETURN(model.shadow_, Buffer::allocate(device, offset * 2, "bf16 dense weights"));
    PARITY_ASSIGN_OR_RETURN(model.input_dense_act_,
                            activation(device, batch, model.dense_input_width_, "bf16 dense input", act));
  }
  PARITY_ASSIGN_OR_RETURN(model.dense_state1_,
                          Buffer::allocate(device, state_buffers >= 1 ? offset * kFloat : 0, "dense state1"));
  PARITY_ASSIGN_OR_RETURN(model.dense_state2_,
                          Buffer::allocate(device, state_buffers >= 2 ? offset * kFloat : 0, "dense state2"));
  const auto& layout = model.layout_;
  const auto kind = spec.embedding.optimizer.kind;
  PARITY_ASSIGN_OR_RETURN(model.embedding_weights_,
                          Buffer::allocate(device,
                                           layout.total_weight_elements() *
                                               static_cast<std::int64_t>(dtype_size_bytes(spec.embedding.weight_dtype)),
                                           "embedding weights"));
  PARITY_ASSIGN_OR_RETURN(model.embedding_state1_,
                          Buffer::allocate(device, embedding::optimizer_state1_elements(layout, kind) * kFloat,
                                           "embedding state1"));
  PARITY_ASSIGN_OR_RETURN(model.embedding_state2_,
                          Buffer::allocate(device, embedding::optimizer_state2_elements(layout, kind) * kFloat,
                                           "embedding state2"));

  std::int64_t ids_per_sample = 0;
  for (const auto& feature : spec.embedding.features) ids_per_sample += feature.ids_per_sample;
  model.max_indices_ = batch * ids_per_sample;
  PARITY_ASSIGN_OR_RETURN(model.input_dense_, activation(device, batch, model.dense_input_width_, "dense input"));
  PARITY_ASSIGN_OR_RETURN(model.input_indices_, Buffer::allocate(device, model.max_indices_ * 8, "indices"));
  PARITY_ASSIGN_OR_RETURN(model.input_offsets_,
                          Buffer::allocate(device, (batch * spec.num_features() + 1) * 8, "offsets"));
  PARITY_ASSIGN_OR_RETURN(model.input_labels_, activation(device, batch, 1, "labels"));

  std::int64_t widest = std::max<std::int64_t>(model.dense_input_width_, model.top_input_width_);
  const auto add_outputs = [&](const std::vector<LinearSlot>& slots, const char* what,
                               std::vector<Buffer>* outputs) -> Status {
    for (const auto& slot : slots) {
      PARITY_ASSIGN_OR_RETURN(Buffer out, activation(device, batch, slot.out, what, act));
      outputs->push_back(std::move(out));
      widest = std::max(widest, slot.out);
    }
    return Status::ok();
  };
  PARITY_RETURN_IF_ERROR(add_outputs(model.bottom_, "bottom activations", &model.bottom_outputs_));
  PARITY_RETURN_IF_ERROR(add_outputs(model.top_, "top activations", &model.top_outputs_));
  model.bottom_masks_.resize(model.bottom_.size());  // empty until set_fused_drelu(true)
  model.top_masks_.resize(model.top_.size());
  for (std::size_t l = 0; l < model.cross_.size(); ++l) {
    PARITY_ASSIGN_OR_RETURN(Buffer out, activation(device, batch, width, "cross outputs", act));
    PARITY_ASSIGN_OR_RETURN(Buffer low, activation(device, batch, spec.cross_rank, "cross low", act));
    PARITY_ASSIGN_OR_RETURN(Buffer cross, activation(device, batch, width, "cross products", act));
    model.cross_outputs_.push_back(std::move(out));
    model.cross_low_.push_back(std::move(low));
    model.cross_cross_.push_back(std::move(cross));
  }
  const std::int64_t pooled = layout.total_output_dim();
  PARITY_ASSIGN_OR_RETURN(model.pooled_, activation(device, batch, pooled, "pooled embeddings", act));
  PARITY_ASSIGN_OR_RETURN(model.interaction_, activation(device, batch, model.top_input_width_, "interaction", act));
  PARITY_ASSIGN_OR_RETURN(model.grad_a_, activation(device, batch, widest, "gradients", act));
  PARITY_ASSIGN_OR_RETURN(model.grad_b_, activation(device, batch, widest, "gradients", act));
  PARITY_ASSIGN_OR_RETURN(model.grad_pre_, activation(device, batch, widest, "gradients", act));
  PARITY_ASSIGN_OR_RETURN(model.grad_pooled_, activation(device, batch, pooled, "embedding gradients"));
  const bool is_dcn = !model.cross_.empty();
  PARITY_ASSIGN_OR_RETURN(model.grad_x0_, activation(device, is_dcn ? batch : 0, width, "cross x0 gradient", act));
  PARITY_ASSIGN_OR_RETURN(model.scratch_cross_, activation(device, is_dcn ? batch : 0, width, "cross scratch", act));
  PARITY_ASSIGN_OR_RETURN(model.scratch_low_,
                          activation(device, is_dcn ? batch : 0, spec.cross_rank, "cross scratch", act));
  PARITY_ASSIGN_OR_RETURN(model.grad_logits_, activation(device, batch, 1, "logit gradients", act));
  model.logits_ = model.top_outputs_.back().data();
  return model;
}

Status DlrmModel::initialize(std::uint64_t seed) {
  // Dense parameters are filled on the host (and copied to the device on a GPU run).
  std::vector<float> host_params;
  const bool on_gpu = context_.device == DeviceKind::kGpu;
  if (on_gpu) host_params.assign(static_cast<std::size_t>(dense_parameters_), 0.0f);
  float* p = on_gpu ? host_params.data() : params();
  if (!on_gpu) PARITY_RETURN_IF_ERROR(dense_weights_.fill_zero());  // padding and cross biases
  std::uint64_t stream = 1;
  for (const auto* slots : {&bottom_, &top_}) {
    for (const auto& slot : *slots) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(slot.fan_in));
      // Value k of the stream is element (o, i) = (k / fan_in, k % fan_in) of the unpadded weight,
      // so a padded (GPU) layout holds the same weights as the CPU's; padding columns stay zero.
      std::vector<float> weight(static_cast<std::size_t>(slot.out * slot.fan_in));
      fill_uniform(weight.data(), slot.out * slot.fan_in, bound, seed, stream++);
      for (std::int64_t o = 0; o < slot.out; ++o) {
        std::copy_n(weight.data() + o * slot.fan_in, slot.fan_in, p + slot.weight_offset + o * slot.in);
        std::fill(p + slot.weight_offset + o * slot.in + slot.fan_in, p + slot.weight_offset + (o + 1) * slot.in, 0.0f);
      }
      fill_uniform(p + slot.bias_offset, slot.out, bound, seed, stream++);
    }
  }
  const std::int64_t width = spec_.interaction_output_dim(), rank = spec_.cross_rank;
  for (const auto& slot : cross_) {
    const double stddev = std::sqrt(2.0 / static_cast<double>(width + rank));
    fill_normal(p + slot.v_offset, rank * width, stddev, seed, stream++);
    fill_normal(p + slot.u_offset, width * rank, stddev, seed, stream++);
  }
  if (on_gpu) PARITY_RETURN_IF_ERROR(dense_weights_.copy_from_host(host_params.data(), dense_parameters_ * kFloat));
  PARITY_RETURN_IF_ERROR(refresh_shadow());
  for (Buffer* state : {&dense_grads_, &dense_state1_, &dense_state2_, &embedding_state1_, &embedding_state2_}) {
    PARITY_RETURN_IF_ERROR(state->fill_zero());
  }
  const DType dtype = spec_.embedding.weight_dtype;
  if (on_gpu) return initialize_tables_on_device(seed);
  for (int t = 0; t < layout_.num_tables(); ++t) {
    const auto& table = layout_.tables()[t];
    const double bound = 1.0 / std::sqrt(static_cast<double>(table.num_rows));
    const std::int64_t count = table.num_rows * table.dim, base = layout_.weights_offset(t);
    const std::uint64_t table_stream = 1'000'000 + static_cast<std::uint64_t>(t);
#pragma omp parallel for schedule(static) if (count >= nn::detail::kParallelMinElements)
    for (std::int64_t k = 0; k < count; ++k) {
      const auto value = static_cast<float>((2 * uniform01(seed, table_stream, k) - 1) * bound);
      if (dtype == DType::kF32) {
        embedding_weights_.as<float>()[base + k] = value;
      } else {
        embedding_weights_.as<std::uint16_t>()[base + k] =
            dtype == DType::kBF16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
      }
    }
  }
  return Status::ok();
}

// Tables on the GPU are filled on the device (a host copy of dlrm-v2's 105 GB would not fit):
// the same distribution, U(-1/sqrt(rows), 1/sqrt(rows)), from a device counter hash, so the
// values differ from a CPU run's with the same seed.
Status DlrmModel::initialize_tables_on_device(std::uint64_t seed) {
  PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("embedding initialisation"));
  const DType dtype = spec_.embedding.weight_dtype;
  auto* base = static_cast<char*>(embedding_weights_.data());
  for (int t = 0; t < layout_.num_tables(); ++t) {
    const auto& table = layout_.tables()[t];
    const auto bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(table.num_rows)));
    const std::int64_t offset_bytes = layout_.weights_offset(t) * static_cast<std::int64_t>(dtype_size_bytes(dtype));
    PARITY_RETURN_IF_ERROR(hooks->fill_uniform(base + offset_bytes, dtype, table.num_rows * table.dim,
                                               mix(seed ^ (1'000'000 + static_cast<std::uint64_t>(t))), bound,
                                               context_.stream));
  }
  return hooks->synchronize(context_.stream);
}

Status DlrmModel::refresh_shadow() {
  if (shadow_.size_bytes() == 0) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("bf16 weights"));
  return hooks->cast(dense_weights_.data(), DType::kF32, shadow_.data(), DType::kBF16, dense_parameters_,
                     context_.stream);
}

embedding::TbeProblem DlrmModel::tbe_problem(std::int64_t batch_size) const {
  embedding::TbeProblem problem;
  problem.layout = layout_;
  problem.batch_size = batch_size;
  problem.num_indices = num_indices_;
  problem.index_dtype = DType::kI64;
  problem.weight_dtype = spec_.embedding.weight_dtype;
  problem.output_dtype = act_dtype_;
  problem.pooling = spec_.embedding.pooling;
  problem.max_bag_length_hint = spec_.max_ids_per_sample();  // kernel selection only
  return problem;
}

Status DlrmModel::stage_inputs(const data::Batch& batch) {
  const std::int64_t rows = batch.batch_size;
  PARITY_CHECK_ARG(rows >= 1 && rows <= max_batch_size_, "batch: batch_size=", rows,
                   " out of range [1, ", max_batch_size_, "]");
  const auto indices = static_cast<std::int64_t>(batch.indices.size());
  if (exchange_ == nullptr) {  // else the ids are the exchange's (it checks them)
    PARITY_CHECK_ARG(indices <= max_indices_, "batch: ", indices, " indices exceed the model's ", max_indices_);
    PARITY_CHECK_ARG(static_cast<std::int64_t>(batch.offsets.size()) == rows * spec_.num_features() + 1,
                     "batch: offsets has ", batch.offsets.size(), " entries; expected ",
                     rows * spec_.num_features() + 1);
    num_indices_ = indices;
  }
  if (dense_input_width_ == spec_.num_dense_features) {
    PARITY_RETURN_IF_ERROR(input_dense_.copy_from_host(batch.dense.data(), rows * spec_.num_dense_features * kFloat));
  } else {  // zero padding columns (GPU)
    const auto width = static_cast<std::size_t>(dense_input_width_);
    const auto features = static_cast<std::size_t>(spec_.num_dense_features);
    padded_dense_.assign(static_cast<std::size_t>(rows) * width, 0.0f);
    for (std::size_t b = 0; b < static_cast<std::size_t>(rows); ++b) {
      std::copy_n(batch.dense.data() + b * features, features, padded_dense_.data() + b * width);
    }
    PARITY_RETURN_IF_ERROR(input_dense_.copy_from_host(padded_dense_.data(), rows * dense_input_width_ * kFloat));
  }
  if (exchange_ == nullptr) {  // else the exchange stages the ids its owned tables need
    PARITY_RETURN_IF_ERROR(input_indices_.copy_from_host(batch.indices.data(), indices * 8));
    PARITY_RETURN_IF_ERROR(input_offsets_.copy_from_host(batch.offsets.data(),
                                                         static_cast<std::int64_t>(batch.offsets.size()) * 8));
  }
  PARITY_RETURN_IF_ERROR(input_labels_.copy_from_host(batch.labels.data(), rows * kFloat));
  if (input_dense_act_.size_bytes() == 0) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("bf16 input"));
  return hooks->cast(input_dense_.data(), DType::kF32, input_dense_act_.data(), act_dtype_,
                     rows * dense_input_width_, context_.stream);
}

Status DlrmModel::forward(const data::Batch& batch) {
  PARITY_RETURN_IF_ERROR(stage_inputs(batch));
  PARITY_RETURN_IF_ERROR(forward_staged(batch.batch_size));
  if (context_.device != DeviceKind::kGpu) return Status::ok();
  // The caller reads logits() on the host.
  const auto rows = static_cast<std::size_t>(batch.batch_size);
  host_logits_.resize(rows);
  if (act_dtype_ == DType::kF32) return top_outputs_.back().copy_to_host(host_logits_.data(), batch.batch_size * kFloat);
  std::vector<std::uint16_t> bits(rows);
  PARITY_RETURN_IF_ERROR(top_outputs_.back().copy_to_host(bits.data(), batch.batch_size * 2));
  for (std::size_t i = 0; i < rows; ++i) host_logits_[i] = bf16_bits_to_float(bits[i]);
  return Status::ok();
}

const float* DlrmModel::logits() const {
  return context_.device == DeviceKind::kGpu ? host_logits_.data() : static_cast<const float*>(logits_);
}

Status DlrmModel::forward_staged(std::int64_t batch_size) {
  embedding::TbeForwardArgs args;
  args.weights = embedding_weights_.data();
  args.batch = embedding::TbeBatchView{input_indices_.data(), input_offsets_.data(), nullptr};
  args.output = pooled_.data();
  PARITY_RETURN_IF_ERROR(enter(StepPhase::kEmbeddings));
  if (exchange_ != nullptr) {
    PARITY_RETURN_IF_ERROR(exchange_->forward_pooled(batch_size, pooled_.data()));
  } else {
    PARITY_RETURN_IF_ERROR(embedding::tbe_forward(tbe_problem(batch_size), args, context_));
  }
  return forward_dense_blocks(batch_size);
}

Status DlrmModel::forward_dense_blocks(std::int64_t batch_size) {
  const DType dtype = act_dtype_;
  const nn::MathMode math = spec_.precision == model::DensePrecision::kTf32 ? nn::MathMode::kTf32
                                                                            : nn::MathMode::kFp32;
  const auto run_mlp = [&](const std::vector<LinearSlot>& slots, std::vector<Buffer>& outputs,
                           const std::vector<Buffer>& masks, const void* input) -> Status {
    PARITY_RETURN_IF_ERROR(enter(StepPhase::kGemms));
    for (std::size_t l = 0; l < slots.size(); ++l) {
      const auto& slot = slots[l];
      const nn::LinearProblem problem{batch_size, slot.in, slot.out, slot.activation, nn::BiasMode::kBias, dtype, math};
      PARITY_RETURN_IF_ERROR(nn::linear_forward(
          problem, {input, gemm_params(slot.weight_offset), gemm_params(slot.bias_offset), outputs[l].data(),
                    masks[l].size_bytes() > 0 ? masks[l].data() : nullptr},
          context_));
      input = outputs[l].data();
    }
    return Status::ok();
  };
  const void* dense_input = input_dense_act_.size_bytes() > 0 ? input_dense_act_.data() : input_dense_.data();
  PARITY_RETURN_IF_ERROR(run_mlp(bottom_, bottom_outputs_, bottom_masks_, dense_input));
  const std::int64_t dim = spec_.bottom_output_dim();
  const void* top_input = interaction_.data();
  PARITY_RETURN_IF_ERROR(enter(StepPhase::kInteraction));
  if (cross_.empty()) {
    const nn::DotInteractionProblem problem{batch_size, spec_.num_features(), dim, dtype,
                                            top_input_width_ == spec_.interaction_output_dim() ? 0 : top_input_width_};
    PARITY_RETURN_IF_ERROR(nn::dot_interaction_forward(
        problem, {bottom_outputs_.back().data(), pooled_.data(), interaction_.data()}, context_));
  } else {
    const std::int64_t width = dim + layout_.total_output_dim();
    PARITY_RETURN_IF_ERROR(concat_cross_input(batch_size, bottom_outputs_.back().data(), pooled_.data(),
                                              interaction_.data()));
    const nn::CrossLayerProblem problem{batch_size, width, spec_.cross_rank, dtype, math};
    for (std::size_t l = 0; l < cross_.size(); ++l) {
      const auto& slot = cross_[l];
      const void* input = l == 0 ? interaction_.data() : cross_outputs_[l - 1].data();
      PARITY_RETURN_IF_ERROR(nn::cross_layer_forward(
          problem, {interaction_.data(), input, gemm_params(slot.v_offset), gemm_params(slot.u_offset),
                    gemm_params(slot.c_offset), cross_low_[l].data(), cross_cross_[l].data(),
                    cross_outputs_[l].data()}, context_));
    }
    top_input = cross_outputs_.back().data();
  }
  return run_mlp(top_, top_outputs_, top_masks_, top_input);
}

Status DlrmModel::set_fused_drelu(bool fused) {
  const auto allocate = [&](const std::vector<LinearSlot>& slots, std::vector<Buffer>* masks) -> Status {
    for (std::size_t l = 0; l < slots.size(); ++l) {
      // One bit per element, columns padded to 128 bits (gemm::AuxKind::kReluMask's default ld);
      // only for a ReLU layer whose output feeds the next layer of its MLP.
      const bool feeds_next_layer = fused && l + 1 < slots.size() && slots[l].activation == nn::Activation::kRelu;
      const std::int64_t bytes = feeds_next_layer ? max_batch_size_ * ((slots[l].out + 127) / 128 * 16) : 0;
      PARITY_ASSIGN_OR_RETURN((*masks)[l], Buffer::allocate(context_.device, bytes, "ReLU masks"));
    }
    return Status::ok();
  };
  PARITY_RETURN_IF_ERROR(allocate(bottom_, &bottom_masks_));
  return allocate(top_, &top_masks_);
}

// x0 = [bottom output (B x D), pooled embeddings (B x P)] per row, in the activation dtype.
Status DlrmModel::concat_cross_input(std::int64_t batch_size, const void* bottom, const void* pooled, void* x0) {
  const std::int64_t dim = spec_.bottom_output_dim(), pooled_dim = layout_.total_output_dim();
  const std::int64_t width = dim + pooled_dim;
  if (context_.device == DeviceKind::kGpu) {
    PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("cross net input"));
    const auto element = static_cast<std::int64_t>(dtype_size_bytes(act_dtype_));
    PARITY_RETURN_IF_ERROR(hooks->copy_2d(x0, width * element, bottom, dim * element, dim * element, batch_size,
                                          context_.stream));
    return hooks->copy_2d(static_cast<char*>(x0) + dim * element, width * element, pooled, pooled_dim * element,
                          pooled_dim * element, batch_size, context_.stream);
  }
  const auto* bottom_values = static_cast<const float*>(bottom);
  const auto* pooled_values = static_cast<const float*>(pooled);
  auto* out = static_cast<float*>(x0);
#pragma omp parallel for schedule(static) if (batch_size * width >= nn::detail::kParallelMinElements)
  for (std::int64_t b = 0; b < batch_size; ++b) {
    std::memcpy(out + b * width, bottom_values + b * dim, dim * kFloat);
    std::memcpy(out + b * width + dim, pooled_values + b * pooled_dim, pooled_dim * kFloat);
  }
  return Status::ok();
}

// The model's state, activations and gradients (docs/training.md "Memory") against the device's
// free memory, before anything is allocated: a clear refusal instead of a failed cudaMalloc midway.
Status DlrmModel::check_device_memory(std::int64_t batch_size) const {
  PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("device memory"));
  std::int64_t free_bytes = 0, total_bytes = 0;
  PARITY_RETURN_IF_ERROR(hooks->memory_info(&free_bytes, &total_bytes));
  const double gib = 1024.0 * 1024.0 * 1024.0;
  char device[96];
  std::snprintf(device, sizeof(device), "the GPU (%.2f GiB free of %.2f GiB)", static_cast<double>(free_bytes) / gib,
                static_cast<double>(total_bytes) / gib);
  return model::check_fits(model::estimate_memory(spec_, batch_size), free_bytes, device);
}

std::int64_t DlrmModel::buffer_bytes() const {
  std::int64_t total = 0;
  for (const Buffer* buffer :
       {&dense_weights_, &dense_grads_, &dense_state1_, &dense_state2_, &embedding_weights_, &embedding_state1_,
        &embedding_state2_, &input_dense_, &input_indices_, &input_offsets_, &input_labels_, &pooled_, &interaction_,
        &grad_a_, &grad_b_, &grad_pre_, &grad_pooled_, &grad_x0_, &scratch_cross_, &scratch_low_, &grad_logits_,
        &shadow_, &input_dense_act_}) {
    total += buffer->size_bytes();
  }
  for (const auto* buffers : {&bottom_outputs_, &top_outputs_, &bottom_masks_, &top_masks_, &cross_outputs_,
                              &cross_low_, &cross_cross_}) {
    for (const Buffer& buffer : *buffers) total += buffer.size_bytes();
  }
  return total;
}

const char* step_phase_name(StepPhase phase) {
  switch (phase) {
    case StepPhase::kEmbeddings: return "embeddings";
    case StepPhase::kGemms: return "gemms";
    case StepPhase::kInteraction: return "interaction";
    case StepPhase::kOther: return "other";
  }
  return "unknown";
}

Result<double> DlrmModel::train_step(const data::Batch& batch, std::int64_t step) {
  PARITY_RETURN_IF_ERROR(stage_inputs(batch));
  return train_step_staged(batch.batch_size, step);
}

Result<double> DlrmModel::train_step_staged(std::int64_t rows, std::int64_t step) {
  PARITY_RETURN_IF_ERROR(forward_staged(rows));
  double loss = 0;
  PARITY_RETURN_IF_ERROR(enter(StepPhase::kOther));
  if (exchange_ != nullptr) {
    PARITY_ASSIGN_OR_RETURN(loss, exchange_->loss(rows, logits_, input_labels_.as<float>(), grad_logits_.data()));
  } else {
    PARITY_RETURN_IF_ERROR(nn::bce_with_logits(
        {rows, act_dtype_}, {logits_, input_labels_.as<float>(), &loss, grad_logits_.data()}, context_));
  }
  PARITY_RETURN_IF_ERROR(backward(rows, step));
  return loss;
}

}  // namespace parity::train::detail
