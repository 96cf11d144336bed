// The torch op library (parity/_torch_ops.so, loaded by python/parity/torch): TORCH_LIBRARY(parity)
// schemas and their CPU and CUDA kernels over the library's TBE op. Fake (meta) kernels and the
// autograd formula are registered from Python (python/parity/torch/_ops.py).
//
//   parity::tbe_forward(weights, indices, offsets, per_sample_weights?, table_rows, table_dims,
//                       table_of_feature, pooling, output_dtype) -> output
//   parity::tbe_backward_with_optimizer(weights!, state1!, state2!, indices, offsets,
//                       per_sample_weights?, grad_output, ...layout, pooling, optimizer fields,
//                       step!) -> ()   (step: one int64 CPU tensor, incremented by each update)
//   parity::bounds_check(indices!, offsets!, ...layout, check_mode) -> [bad_indices, bad_offsets] (CPU)
//   (not "mode": inductor's lowering passes its own `mode` keyword)
//   parity::dot_interaction(dense, embeddings, output_stride) -> output   [B, D + pairs] or [B, stride]
//   parity::dot_interaction_backward(dense, embeddings, grad_output) -> (grad_dense, grad_embeddings fp32)
//   (the library's nn::dot_interaction_{forward,backward}; bf16 on the CPU computes in fp32, as the
//   CPU variants are fp32 only)
//
// Library errors become c10::ValueError (Python ValueError) for bad input,
// c10::NotImplementedError for what the build or device cannot run, c10::Error (RuntimeError)
// otherwise; nothing aborts the interpreter. The CPU kernels bounds-check the batch before the
// lookup (a bad index must never read outside the weights); on CUDA the caller checks
// (parity::bounds_check or the modules' default), as a device-side check would need a sync.
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "parity/embedding/tbe_cpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "parity/nn/interaction.hpp"
#include "tbe_args.hpp"
#if defined(PARITY_HAS_CUDA)
#include "parity/core/gpu.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#endif

namespace parity::python {
namespace {

using embedding::TbeLayout;
using embedding::TbeProblem;

[[noreturn]] void raise(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      TORCH_CHECK_VALUE(false, status.message());
    case StatusCode::kUnsupported:
      TORCH_CHECK_NOT_IMPLEMENTED(false, status.message());
    default:
      TORCH_CHECK(false, status.to_string());
  }
  TORCH_CHECK(false, "unreachable");
}

void raise_if_error(const Status& status) {
  if (!status.is_ok()) raise(status);
}

template <typename T>
T value_or_raise(Result<T> result) {
  raise_if_error(result.status());
  return std::move(result).value();
}

DType dtype_of(at::ScalarType type, const char* name) {
  switch (type) {
    case at::kFloat: return DType::kF32;
    case at::kHalf: return DType::kF16;
    case at::kBFloat16: return DType::kBF16;
    case at::kInt: return DType::kI32;
    case at::kLong: return DType::kI64;
    default: TORCH_CHECK_VALUE(false, name, ": dtype ", type, " is not supported");
  }
}

DType dtype_of(const at::Tensor& tensor, const char* name) { return dtype_of(tensor.scalar_type(), name); }

void require_input(const at::Tensor& tensor, const char* name, const at::Device& device) {
  TORCH_CHECK_VALUE(tensor.device() == device, name, ": on ", tensor.device(), ", expected ", device,
                    " (the weights' device)");
  TORCH_CHECK_VALUE(tensor.is_contiguous(), name, ": expected a contiguous tensor");
}

TbeLayout layout_of(at::IntArrayRef table_rows, at::IntArrayRef table_dims, at::IntArrayRef table_of_feature) {
  return value_or_raise(make_tbe_layout(table_rows.vec(), table_dims.vec(), table_of_feature.vec()));
}

// The problem of a call whose buffers are `weights` (may be undefined for the bounds check),
// `indices`, `offsets`, `per_sample_weights`; all checked to be on the weights' device and contiguous.
TbeProblem problem_of(const TbeLayout& layout, const at::Tensor& weights, const at::Tensor& indices,
                      const at::Tensor& offsets, const std::optional<at::Tensor>& per_sample_weights,
                      std::string_view pooling, DType output_dtype) {
  const at::Device device = weights.defined() ? weights.device() : indices.device();
  if (weights.defined()) require_input(weights, "weights", device);
  require_input(indices, "indices", device);
  require_input(offsets, "offsets", device);
  TbeCallShape shape;
  shape.num_indices = indices.numel();
  shape.num_offsets = offsets.numel();
  shape.index_dtype = dtype_of(indices, "indices");
  shape.offsets_dtype = dtype_of(offsets, "offsets");
  shape.weight_dtype = weights.defined() ? dtype_of(weights, "weights") : DType::kF32;
  shape.output_dtype = output_dtype;
  shape.weight_elements = weights.defined() ? weights.numel() : layout.total_weight_elements();
  shape.has_per_sample_weights = per_sample_weights.has_value() && per_sample_weights->defined();
  if (shape.has_per_sample_weights) {
    require_input(*per_sample_weights, "per_sample_weights", device);
    TORCH_CHECK_VALUE(per_sample_weights->scalar_type() == at::kFloat, "per_sample_weights: dtype ",
                      per_sample_weights->scalar_type(), ", expected float32");
    shape.per_sample_weight_elements = per_sample_weights->numel();
  }
  return value_or_raise(make_tbe_problem(layout, shape, pooling));
}

embedding::TbeBatchView batch_of(const at::Tensor& indices, const at::Tensor& offsets,
                                  const std::optional<at::Tensor>& per_sample_weights) {
  const bool has_psw = per_sample_weights.has_value() && per_sample_weights->defined();
  return {indices.data_ptr(), offsets.data_ptr(), has_psw ? per_sample_weights->data_ptr<float>() : nullptr};
}

// The library's context for a tensor's device: the CPU, or the GPU on torch's current stream.
ExecutionContext context_of(const at::Device& device) {
  ExecutionContext context;
  if (device.is_cpu()) return context;
  TORCH_CHECK_NOT_IMPLEMENTED(device.is_cuda(), "parity ops run on cpu or cuda tensors, not ", device);
#if defined(PARITY_HAS_CUDA)
  context.device = DeviceKind::kGpu;
  context.stream = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getStream(device).native_handle();
  return context;
#else
  TORCH_CHECK_NOT_IMPLEMENTED(false, "parity was built without CUDA (pip install . -C "
                                     "cmake.define.PARITY_ENABLE_CUDA=ON builds it)");
#endif
}

// CPU: error-mode check of a batch (reads only).
void check_cpu_batch(const TbeProblem& problem, const at::Tensor& indices, const at::Tensor& offsets) {
  const auto report = value_or_raise(embedding::cpu::tbe_bounds_check(
      problem, embedding::BoundsCheckMode::kError, indices.data_ptr(), offsets.data_ptr()));
  raise_if_error(embedding::bounds_check_status(report, embedding::BoundsCheckMode::kError));
}

at::Tensor tbe_forward(const at::Tensor& weights, const at::Tensor& indices, const at::Tensor& offsets,
                       const std::optional<at::Tensor>& per_sample_weights, at::IntArrayRef table_rows,
                       at::IntArrayRef table_dims, at::IntArrayRef table_of_feature, c10::string_view pooling,
                       at::ScalarType output_dtype) {
  const TbeLayout layout = layout_of(table_rows, table_dims, table_of_feature);
  const TbeProblem problem = problem_of(layout, weights, indices, offsets, per_sample_weights,
                                        std::string_view(pooling.data(), pooling.size()),
                                        dtype_of(output_dtype, "output_dtype"));
  const c10::DeviceGuard guard(weights.device());
  if (weights.is_cpu()) check_cpu_batch(problem, indices, offsets);
  at::Tensor output = at::empty({problem.output_rows(), problem.output_cols()}, weights.options().dtype(output_dtype));
  const embedding::TbeForwardArgs args{weights.data_ptr(), batch_of(indices, offsets, per_sample_weights),
                                       output.data_ptr()};
  raise_if_error(embedding::tbe_forward(problem, args, context_of(weights.device())));
  return output;
}

void tbe_backward_with_optimizer(const at::Tensor& weights, const at::Tensor& state1, const at::Tensor& state2,
                                 const at::Tensor& indices, const at::Tensor& offsets,
                                 const std::optional<at::Tensor>& per_sample_weights, const at::Tensor& grad_output,
                                 at::IntArrayRef table_rows, at::IntArrayRef table_dims,
                                 at::IntArrayRef table_of_feature, c10::string_view pooling,
                                 c10::string_view optimizer, double learning_rate, double eps, double weight_decay,
                                 c10::string_view weight_decay_mode, double max_norm, double beta1, double beta2,
                                 const at::Tensor& step) {
  // The step counter lives in a tensor (optimiser state, exportable, and no recompilation per step
  // under torch.compile): this update is step + 1, written back once it has run.
  TORCH_CHECK_VALUE(step.device().is_cpu() && step.scalar_type() == at::kLong && step.numel() == 1,
                    "step: expected a one-element int64 CPU tensor, got ", step.scalar_type(), " on ",
                    step.device(), " with ", step.numel(), " elements");
  const std::int64_t this_step = step.data_ptr<std::int64_t>()[0] + 1;
  const TbeLayout layout = layout_of(table_rows, table_dims, table_of_feature);
  const TbeProblem problem = problem_of(layout, weights, indices, offsets, per_sample_weights,
                                        std::string_view(pooling.data(), pooling.size()), DType::kF32);
  const embedding::OptimizerParams params = value_or_raise(make_optimizer(
      {std::string_view(optimizer.data(), optimizer.size()), learning_rate, eps, weight_decay,
       std::string_view(weight_decay_mode.data(), weight_decay_mode.size()), max_norm, beta1, beta2, this_step}));
  const at::Device device = weights.device();
  for (const auto& [tensor, name] : {std::pair{&state1, "state1"}, std::pair{&state2, "state2"},
                                      std::pair{&grad_output, "grad_output"}}) {
    require_input(*tensor, name, device);
    TORCH_CHECK_VALUE(tensor->scalar_type() == at::kFloat, name, ": dtype ", tensor->scalar_type(),
                      ", expected float32");
  }
  raise_if_error(check_elements("grad_output", grad_output.numel(), problem.output_rows() * problem.output_cols()));
  raise_if_error(check_elements("state1", state1.numel(), embedding::optimizer_state1_elements(layout, params.kind)));
  raise_if_error(check_elements("state2", state2.numel(), embedding::optimizer_state2_elements(layout, params.kind)));
  const c10::DeviceGuard guard(device);
  if (weights.is_cpu()) check_cpu_batch(problem, indices, offsets);
  const embedding::TbeBackwardArgs args{params,
                                        weights.data_ptr(),
                                        state1.data_ptr<float>(),
                                        state2.data_ptr<float>(),
                                        batch_of(indices, offsets, per_sample_weights),
                                        grad_output.data_ptr<float>()};
  raise_if_error(embedding::tbe_backward_fused(problem, args, context_of(device)));
  step.data_ptr<std::int64_t>()[0] = this_step;
}

#if defined(PARITY_HAS_CUDA)
// Device copies of the layouts the CUDA bounds check has seen, by content (uploaded once).
const embedding::gpu::DeviceTbeLayout& device_layout(const TbeLayout& layout) {
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, embedding::gpu::DeviceTbeLayout> layouts;
  std::vector<std::int64_t> key;
  for (const auto& table : layout.tables()) key.insert(key.end(), {table.num_rows, table.dim});
  key.push_back(-1);
  for (int table : layout.table_of_feature()) key.push_back(table);
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = layouts.find(key);
  if (it == layouts.end()) {
    it = layouts.emplace(key, value_or_raise(embedding::gpu::DeviceTbeLayout::create(layout))).first;
  }
  return it->second;
}
#endif

at::Tensor bounds_check(const at::Tensor& indices, const at::Tensor& offsets, at::IntArrayRef table_rows,
                        at::IntArrayRef table_dims, at::IntArrayRef table_of_feature, c10::string_view check_mode) {
  const TbeLayout layout = layout_of(table_rows, table_dims, table_of_feature);
  const auto mode =
      value_or_raise(embedding::parse_bounds_check_mode(std::string(check_mode.data(), check_mode.size())));
  const TbeProblem problem = problem_of(layout, at::Tensor(), indices, offsets, std::nullopt, "sum", DType::kF32);
  const c10::DeviceGuard guard(indices.device());
  embedding::BoundsCheckReport report;
  if (indices.is_cpu()) {
    report = value_or_raise(embedding::cpu::tbe_bounds_check(problem, mode, indices.data_ptr(), offsets.data_ptr()));
  } else {
#if defined(PARITY_HAS_CUDA)
    const ExecutionContext context = context_of(indices.device());
    const auto& device_tbe_layout = device_layout(layout);
    const std::int64_t workspace_bytes = embedding::gpu::bounds_check_workspace_bytes(problem);
    const at::Tensor workspace = at::empty({workspace_bytes}, indices.options().dtype(at::kByte));
    raise_if_error(embedding::gpu::bounds_check(problem, device_tbe_layout, mode, indices.data_ptr(),
                                                offsets.data_ptr(), workspace.data_ptr(), workspace_bytes,
                                                context.stream));
    report = value_or_raise(embedding::gpu::read_bounds_check_report(problem, mode, indices.data_ptr(),
                                                                     offsets.data_ptr(), workspace.data_ptr(),
                                                                     context.stream));
#else
    context_of(indices.device());  // raises: this build has no GPU backend
#endif
  }
  raise_if_error(embedding::bounds_check_status(report, mode));
  at::Tensor counts = at::empty({2}, at::TensorOptions().dtype(at::kLong));
  counts.data_ptr<std::int64_t>()[0] = report.bad_indices;
  counts.data_ptr<std::int64_t>()[1] = report.bad_offsets;
  return counts;
}

// ---- dot interaction ----

// The problem of dense [B, D] with embeddings [B, T, D] or [B, T*D] on the same device, in dense's
// dtype or fp32 (the TBE's output, rounded to dense's dtype here; its gradient is fp32 either way,
// what the TBE backward takes).
nn::DotInteractionProblem interaction_problem_of(const at::Tensor& dense, const at::Tensor& embeddings,
                                                 std::int64_t output_stride) {
  TORCH_CHECK_VALUE(dense.dim() == 2, "dense: expected [batch, dim], got ", dense.sizes());
  TORCH_CHECK_VALUE(embeddings.dim() == 2 || embeddings.dim() == 3,
                    "embeddings: expected [batch, features, dim] or [batch, features*dim], got ", embeddings.sizes());
  TORCH_CHECK_VALUE(embeddings.device() == dense.device(), "embeddings: on ", embeddings.device(), ", expected ",
                    dense.device(), " (dense's device)");
  TORCH_CHECK_VALUE(embeddings.scalar_type() == dense.scalar_type() || embeddings.scalar_type() == at::kFloat,
                    "embeddings: dtype ", embeddings.scalar_type(), ", expected ", dense.scalar_type(),
                    " (dense's dtype) or float32");
  const std::int64_t batch = dense.size(0), dim = dense.size(1);
  TORCH_CHECK_VALUE(embeddings.size(0) == batch, "embeddings: batch ", embeddings.size(0), ", expected ", batch,
                    " (dense's)");
  std::int64_t features = 0;
  if (embeddings.dim() == 3) {
    TORCH_CHECK_VALUE(embeddings.size(2) == dim, "embeddings: dim ", embeddings.size(2), ", expected ", dim,
                      " (dense's)");
    features = embeddings.size(1);
  } else {
    TORCH_CHECK_VALUE(dim > 0 && embeddings.size(1) % dim == 0, "embeddings: ", embeddings.size(1),
                      " columns are not a multiple of dense's dim ", dim);
    features = embeddings.size(1) / dim;
  }
  nn::DotInteractionProblem problem{batch, features, dim, dtype_of(dense, "dense"), 0};
  raise_if_error(problem.validate());
  TORCH_CHECK_VALUE(output_stride == 0 || output_stride >= problem.output_dim(), "output_stride: ", output_stride,
                    " is below the output's ", problem.output_dim(), " columns (0: unpadded)");
  problem.output_stride = output_stride == problem.output_dim() ? 0 : output_stride;
  return problem;
}

std::int64_t output_columns(const nn::DotInteractionProblem& problem) {
  return problem.output_stride != 0 ? problem.output_stride : problem.output_dim();
}

// The library's CPU variants take fp32, unpadded: other dtypes compute in fp32 here.
nn::DotInteractionProblem cpu_problem(nn::DotInteractionProblem problem) {
  problem.dtype = DType::kF32;
  problem.output_stride = 0;
  return problem;
}

// `tensor` rounded to `dtype` (as the GPU kernels read it), then as contiguous fp32 for the CPU variants.
at::Tensor cpu_operand(const at::Tensor& tensor, at::ScalarType dtype) {
  return tensor.to(dtype).to(at::kFloat).contiguous();
}

at::Tensor dot_interaction(const at::Tensor& dense, const at::Tensor& embeddings, std::int64_t output_stride) {
  const nn::DotInteractionProblem problem = interaction_problem_of(dense, embeddings, output_stride);
  const c10::DeviceGuard guard(dense.device());
  if (dense.is_cpu()) {
    const at::Tensor dense32 = cpu_operand(dense, dense.scalar_type());
    const at::Tensor embeddings32 = cpu_operand(embeddings, dense.scalar_type());
    at::Tensor output = at::empty({problem.batch_size, problem.output_dim()}, dense32.options());
    raise_if_error(nn::dot_interaction_forward(cpu_problem(problem),
                                               {dense32.data_ptr(), embeddings32.data_ptr(), output.data_ptr()}, {}));
    if (problem.output_stride != 0) {
      output = at::constant_pad_nd(output, {0, problem.output_stride - problem.output_dim()});
    }
    return output.to(dense.scalar_type());
  }
  const at::Tensor dense_c = dense.contiguous();
  const at::Tensor embeddings_c = embeddings.to(dense.scalar_type()).contiguous();
  at::Tensor output = at::empty({problem.batch_size, output_columns(problem)}, dense.options());
  raise_if_error(nn::dot_interaction_forward(problem, {dense_c.data_ptr(), embeddings_c.data_ptr(), output.data_ptr()},
                                             context_of(dense.device())));
  return output;
}

// grad_output's columns give the stride the forward used (D + pairs, or the padded stride).
std::tuple<at::Tensor, at::Tensor> dot_interaction_backward(const at::Tensor& dense, const at::Tensor& embeddings,
                                                            const at::Tensor& grad_output) {
  TORCH_CHECK_VALUE(grad_output.dim() == 2 && grad_output.size(0) == dense.size(0), "grad_output: expected [",
                    dense.size(0), ", output columns], got ", grad_output.sizes());
  TORCH_CHECK_VALUE(grad_output.device() == dense.device(), "grad_output: on ", grad_output.device(), ", expected ",
                    dense.device(), " (dense's device)");
  const std::int64_t unpadded_columns = interaction_problem_of(dense, embeddings, 0).output_dim();
  TORCH_CHECK_VALUE(grad_output.size(1) >= unpadded_columns, "grad_output: ", grad_output.size(1),
                    " columns, expected at least the output's ", unpadded_columns);
  const nn::DotInteractionProblem problem = interaction_problem_of(dense, embeddings, grad_output.size(1));
  const c10::DeviceGuard guard(dense.device());
  at::Tensor grad_embeddings = at::empty(embeddings.sizes(), embeddings.options().dtype(at::kFloat));
  if (dense.is_cpu()) {
    const at::Tensor dense32 = cpu_operand(dense, dense.scalar_type());
    const at::Tensor embeddings32 = cpu_operand(embeddings, dense.scalar_type());
    const at::Tensor grad32 = cpu_operand(grad_output.narrow(1, 0, problem.output_dim()), dense.scalar_type());
    at::Tensor grad_dense = at::empty(dense.sizes(), dense32.options());
    raise_if_error(nn::dot_interaction_backward(cpu_problem(problem),
                                                {dense32.data_ptr(), embeddings32.data_ptr(), grad32.data_ptr(),
                                                 grad_dense.data_ptr(), grad_embeddings.data_ptr<float>()},
                                                {}));
    return {grad_dense.to(dense.scalar_type()), grad_embeddings};
  }
  const at::Tensor dense_c = dense.contiguous();
  const at::Tensor embeddings_c = embeddings.to(dense.scalar_type()).contiguous();
  const at::Tensor grad_c = grad_output.to(dense.scalar_type()).contiguous();
  at::Tensor grad_dense = at::empty(dense.sizes(), dense.options());
  raise_if_error(nn::dot_interaction_backward(problem,
                                              {dense_c.data_ptr(), embeddings_c.data_ptr(), grad_c.data_ptr(),
                                               grad_dense.data_ptr(), grad_embeddings.data_ptr<float>()},
                                              context_of(dense.device())));
  return {grad_dense, grad_embeddings};
}

}  // namespace
}  // namespace parity::python

TORCH_LIBRARY(parity, m) {
  m.def("tbe_forward(Tensor weights, Tensor indices, Tensor offsets, Tensor? per_sample_weights, "
        "int[] table_rows, int[] table_dims, int[] table_of_feature, str pooling, ScalarType output_dtype) -> Tensor");
  m.def("tbe_backward_with_optimizer(Tensor(a!) weights, Tensor(b!) state1, Tensor(c!) state2, Tensor indices, "
        "Tensor offsets, Tensor? per_sample_weights, Tensor grad_output, int[] table_rows, int[] table_dims, "
        "int[] table_of_feature, str pooling, str optimizer, float learning_rate, float eps, float weight_decay, "
        "str weight_decay_mode, float max_norm, float beta1, float beta2, Tensor(d!) step) -> ()");
  m.def("bounds_check(Tensor(a!) indices, Tensor(b!) offsets, int[] table_rows, int[] table_dims, "
        "int[] table_of_feature, str check_mode) -> Tensor");
  m.def("dot_interaction(Tensor dense, Tensor embeddings, int output_stride=0) -> Tensor");
  m.def("dot_interaction_backward(Tensor dense, Tensor embeddings, Tensor grad_output) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(parity, CPU, m) {
  m.impl("tbe_forward", &parity::python::tbe_forward);
  m.impl("tbe_backward_with_optimizer", &parity::python::tbe_backward_with_optimizer);
  m.impl("bounds_check", &parity::python::bounds_check);
  m.impl("dot_interaction", &parity::python::dot_interaction);
  m.impl("dot_interaction_backward", &parity::python::dot_interaction_backward);
}

TORCH_LIBRARY_IMPL(parity, CUDA, m) {
  m.impl("tbe_forward", &parity::python::tbe_forward);
  m.impl("tbe_backward_with_optimizer", &parity::python::tbe_backward_with_optimizer);
  m.impl("bounds_check", &parity::python::bounds_check);
  m.impl("dot_interaction", &parity::python::dot_interaction);
  m.impl("dot_interaction_backward", &parity::python::dot_interaction_backward);
}
