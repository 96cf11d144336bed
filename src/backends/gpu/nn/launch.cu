// Host launches of the dense DLRM kernels (kernels.cuh): argument checks, dtype dispatch, grids.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "backends/gpu/embedding/launch_common.cuh"
#include "backends/gpu/nn/interaction_kernels.cuh"
#include "backends/gpu/nn/kernels.cuh"
#include "parity/nn/dense_gpu.hpp"

namespace parity::nn::gpu {
namespace {

using gpu_device::nn::ElemKind;

constexpr int kElementwiseThreads = 256;
constexpr int kBceThreads = 256;
constexpr std::int64_t kMaxSharedBytes = 48 * 1024;  // the default per-block limit on every target

Result<ElemKind> elem_kind(DType dtype, const char* what) {
  switch (dtype) {
    case DType::kF32: return ElemKind::kF32;
    case DType::kF16: return ElemKind::kF16;
    case DType::kBF16: return ElemKind::kBF16;
    default: return invalid_argument(what, ": dtype ", dtype_name(dtype), " is not fp32, fp16 or bf16");
  }
}

// Grid-stride kernels: a few blocks per SM are enough to saturate HBM.
Result<int> elementwise_blocks(std::int64_t count) {
  PARITY_ASSIGN_OR_RETURN(const int sm_count, embedding::gpu::current_sm_count());
  const std::int64_t wanted = (count + kElementwiseThreads - 1) / kElementwiseThreads;
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, 8LL * sm_count));
}

// Turns a runtime element kind into the template argument K of `call` (hipcc builds C++17 here:
// no template lambdas).
#define PARITY_DISPATCH_ELEM(kind, K, call)                   \
  switch (kind) {                                             \
    case ElemKind::kF32: {                                    \
      constexpr ElemKind K = ElemKind::kF32;                  \
      return call;                                            \
    }                                                         \
    case ElemKind::kF16: {                                    \
      constexpr ElemKind K = ElemKind::kF16;                  \
      return call;                                            \
    }                                                         \
    case ElemKind::kBF16: {                                   \
      constexpr ElemKind K = ElemKind::kBF16;                 \
      return call;                                            \
    }                                                         \
  }                                                           \
  return internal_error("unknown element kind")

template <ElemKind K>
using Storage = typename gpu_device::nn::Elem<K>::Storage;

std::int64_t interaction_forward_shared_bytes(const InteractionShape& s) {
  return static_cast<std::int64_t>(s.num_vectors()) * (s.dim + 1) * 4;
}
std::int64_t interaction_backward_shared_bytes(const InteractionShape& s) {
  return interaction_forward_shared_bytes(s) + static_cast<std::int64_t>(s.num_vectors()) * s.num_vectors() * 4;
}


template <ElemKind K>
Status launch_interaction_forward(const InteractionShape& shape, const void* bottom, const void* embeddings,
                                  void* output, std::size_t shared, gpuStream_t s) {
  gpu_device::nn::interaction_forward_kernel<K><<<static_cast<unsigned>(shape.batch), 128, shared, s>>>(
      shape.num_vectors(), shape.dim, shape.output_row_stride(), static_cast<const Storage<K>*>(bottom),
      static_cast<const Storage<K>*>(embeddings), static_cast<Storage<K>*>(output));
  PARITY_GPU_CHECK_LAUNCH(interaction_forward_kernel);
  return Status::ok();
}

template <ElemKind K>
Status launch_interaction_backward(const InteractionShape& shape, const void* bottom, const void* embeddings,
                                   const void* grad_output, void* grad_bottom, float* grad_embeddings,
                                   std::size_t shared, gpuStream_t s) {
  gpu_device::nn::interaction_backward_kernel<K><<<static_cast<unsigned>(shape.batch), 128, shared, s>>>(
      shape.num_vectors(), shape.dim, shape.output_row_stride(), static_cast<const Storage<K>*>(bottom),
      static_cast<const Storage<K>*>(embeddings), static_cast<const Storage<K>*>(grad_output),
      static_cast<Storage<K>*>(grad_bottom), grad_embeddings);
  PARITY_GPU_CHECK_LAUNCH(interaction_backward_kernel);
  return Status::ok();
}

template <ElemKind K>
Status launch_bce(std::int64_t batch, const void* logits, const float* labels, float* loss_sum, void* grad_logits,
                  float grad_scale, float* partials, int blocks, gpuStream_t s) {
  gpu_device::nn::bce_partials_kernel<K, kBceThreads><<<blocks, kBceThreads, 0, s>>>(
      batch, static_cast<const Storage<K>*>(logits), labels, static_cast<Storage<K>*>(grad_logits), grad_scale,
      partials);
  PARITY_GPU_CHECK_LAUNCH(bce_partials_kernel);
  gpu_device::nn::sum_partials_kernel<kBceThreads><<<1, kBceThreads, 0, s>>>(blocks, partials, loss_sum);
  PARITY_GPU_CHECK_LAUNCH(sum_partials_kernel);
  return Status::ok();
}

// Null pointers (an optional output) count as aligned.
bool aligned16(std::initializer_list<const void*> pointers) {
  for (const void* pointer : pointers) {
    if (reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0) return false;
  }
  return true;
}

template <ElemKind K>
const Storage<K>* at(const void* p, std::int64_t offset) {
  return p == nullptr ? nullptr : static_cast<const Storage<K>*>(p) + offset;
}
template <ElemKind K>
Storage<K>* at(void* p, std::int64_t offset) {
  return p == nullptr ? nullptr : static_cast<Storage<K>*>(p) + offset;
}

// The element-wise launches: 16-byte vectors over the aligned bulk, the scalar kernel on the tail
// (or on everything when a pointer is not 16-byte aligned). Returns how many elements the vector
// kernel covered.
template <ElemKind K>
std::int64_t vector_elements(std::int64_t count, bool aligned) {
  constexpr int N = gpu_device::nn::Vec<K>::kCount;
  return aligned ? count / N * N : 0;
}

template <ElemKind K>
Status launch_cross_forward(std::int64_t count, const void* x0, const void* t, const void* xl, void* out,
                            int blocks, gpuStream_t s) {
  constexpr int N = gpu_device::nn::Vec<K>::kCount;
  const std::int64_t done = vector_elements<K>(count, aligned16({x0, t, xl, out}));
  if (done > 0) {
    gpu_device::nn::cross_forward_vec_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
        done / N, at<K>(x0, 0), at<K>(t, 0), at<K>(xl, 0), at<K>(out, 0));
    PARITY_GPU_CHECK_LAUNCH(cross_forward_vec_kernel);
  }
  if (done == count) return Status::ok();
  gpu_device::nn::cross_forward_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
      count - done, at<K>(x0, done), at<K>(t, done), at<K>(xl, done), at<K>(out, done));
  PARITY_GPU_CHECK_LAUNCH(cross_forward_kernel);
  return Status::ok();
}

template <ElemKind K>
Status launch_cross_backward(std::int64_t count, const void* grad_out, const void* x0, const void* t, void* grad_t,
                             void* grad_x0, bool accumulate, void* grad_xl, int blocks, gpuStream_t s) {
  constexpr int N = gpu_device::nn::Vec<K>::kCount;
  const std::int64_t done = vector_elements<K>(count, aligned16({grad_out, x0, t, grad_t, grad_x0, grad_xl}));
  if (done > 0) {
    gpu_device::nn::cross_backward_vec_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
        done / N, at<K>(grad_out, 0), at<K>(x0, 0), at<K>(t, 0), at<K>(grad_t, 0), at<K>(grad_x0, 0), accumulate,
        at<K>(grad_xl, 0));
    PARITY_GPU_CHECK_LAUNCH(cross_backward_vec_kernel);
  }
  if (done == count) return Status::ok();
  gpu_device::nn::cross_backward_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
      count - done, at<K>(grad_out, done), at<K>(x0, done), at<K>(t, done), at<K>(grad_t, done),
      at<K>(grad_x0, done), accumulate, at<K>(grad_xl, done));
  PARITY_GPU_CHECK_LAUNCH(cross_backward_kernel);
  return Status::ok();
}

template <ElemKind K>
Status launch_add_split_columns(std::int64_t rows, std::int64_t left_cols, std::int64_t right_cols, const void* a,
                                const void* b, void* left, float* right, int blocks, gpuStream_t s) {
  constexpr int N = gpu_device::nn::Vec<K>::kCount;
  if (left_cols % N == 0 && right_cols % N == 0 && aligned16({a, b, left, right})) {
    gpu_device::nn::add_split_columns_vec_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
        rows, left_cols, right_cols, at<K>(a, 0), at<K>(b, 0), at<K>(left, 0), right);
    PARITY_GPU_CHECK_LAUNCH(add_split_columns_vec_kernel);
    return Status::ok();
  }
  gpu_device::nn::add_split_columns_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
      rows, left_cols, right_cols, at<K>(a, 0), at<K>(b, 0), at<K>(left, 0), right);
  PARITY_GPU_CHECK_LAUNCH(add_split_columns_kernel);
  return Status::ok();
}

template <ElemKind K>
Status launch_relu_backward(std::int64_t count, const void* grad_out, const void* output, void* grad_pre, int blocks,
                            gpuStream_t s) {
  constexpr int N = gpu_device::nn::Vec<K>::kCount;
  const std::int64_t done = vector_elements<K>(count, aligned16({grad_out, output, grad_pre}));
  if (done > 0) {
    gpu_device::nn::relu_backward_vec_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
        done / N, at<K>(grad_out, 0), at<K>(output, 0), at<K>(grad_pre, 0));
    PARITY_GPU_CHECK_LAUNCH(relu_backward_vec_kernel);
  }
  if (done == count) return Status::ok();
  gpu_device::nn::relu_backward_kernel<K><<<blocks, kElementwiseThreads, 0, s>>>(
      count - done, at<K>(grad_out, done), at<K>(output, done), at<K>(grad_pre, done));
  PARITY_GPU_CHECK_LAUNCH(relu_backward_kernel);
  return Status::ok();
}

template <ElemKind KG, ElemKind KS>
Status launch_optimizer(const gpu_device::nn::OptimizerStepArgs& args, std::int64_t count, float* master,
                        float* state1, float* state2, const void* grad, void* shadow, int blocks, gpuStream_t s) {
  gpu_device::nn::dense_optimizer_kernel<KG, KS><<<blocks, kElementwiseThreads, 0, s>>>(
      args, count, master, state1, state2, static_cast<const Storage<KG>*>(grad), static_cast<Storage<KS>*>(shadow));
  PARITY_GPU_CHECK_LAUNCH(dense_optimizer_kernel);
  return Status::ok();
}

template <ElemKind KG>
Status launch_optimizer_for_shadow(ElemKind shadow_kind, const gpu_device::nn::OptimizerStepArgs& args,
                                   std::int64_t count, float* master, float* state1, float* state2,
                                   const void* grad, void* shadow, int blocks, gpuStream_t s) {
  PARITY_DISPATCH_ELEM(shadow_kind, KS,
                       (launch_optimizer<KG, KS>(args, count, master, state1, state2, grad, shadow, blocks, s)));
}

template <ElemKind KI, ElemKind KO>
Status launch_cast(std::int64_t count, const void* in, void* out, int blocks, gpuStream_t s) {
  gpu_device::nn::cast_kernel<KI, KO><<<blocks, kElementwiseThreads, 0, s>>>(
      count, static_cast<const Storage<KI>*>(in), static_cast<Storage<KO>*>(out));
  PARITY_GPU_CHECK_LAUNCH(cast_kernel);
  return Status::ok();
}

template <ElemKind KI>
Status launch_cast_to(ElemKind out_kind, std::int64_t count, const void* in, void* out, int blocks, gpuStream_t s) {
  PARITY_DISPATCH_ELEM(out_kind, KO, (launch_cast<KI, KO>(count, in, out, blocks, s)));
}

// ---- The fast interaction kernels (interaction_kernels.cuh) ----

constexpr int kGramThreads = 128;
constexpr int kColumnsThreads = 128;
constexpr int kColumnsMaxVectors = 32;

struct GramPlan {
  gpu_device::nn::GramTiling tiling;
  std::int64_t shared_bytes;
};

// Samples per block and slices of D: the most threads of the block busy with a tile (ties: fewer
// slices, then more samples), within the default shared-memory limit.
Result<GramPlan> gram_tiles_plan(const InteractionShape& shape) {
  if (shape.dim % 4 != 0) return unsupported("interaction gram tiles: dim=", shape.dim, " is not a multiple of 4");
  const std::int64_t vectors = shape.num_vectors(), row_blocks = (vectors + 3) / 4;
  const std::int64_t tiles = row_blocks * (row_blocks + 1) / 2;
  GramPlan best{};
  double best_busy = 0.0;
  for (const int splits : {1, 2, 4, 8}) {
    if (shape.dim % (4 * splits) != 0) continue;
    const std::int64_t floats = (vectors * shape.dim + row_blocks * 4 + splits * shape.num_pairs() + 3) / 4 * 4;
    for (int samples = 1; samples <= 16 && samples * floats * 4 <= kMaxSharedBytes; ++samples) {
      const std::int64_t items = samples * tiles * splits;
      const double busy = static_cast<double>(items) /
                          static_cast<double>((items + kGramThreads - 1) / kGramThreads * kGramThreads);
      const bool same = busy > best_busy - 1e-9 && splits == best.tiling.splits;
      if (busy > best_busy + 1e-9 || (same && samples > best.tiling.samples_per_block)) {
        best_busy = busy;
        best.tiling = {static_cast<int>(vectors), shape.dim, splits, samples, static_cast<int>(floats)};
        best.shared_bytes = samples * floats * 4;
      }
    }
  }
  if (best_busy == 0.0) {
    return unsupported("interaction gram tiles: ", vectors, " vectors of dim ", shape.dim,
                       " need more than ", kMaxSharedBytes, " bytes of shared memory per sample");
  }
  return best;
}

struct ColumnsPlan {
  int samples_per_block;
  int threads;
  std::int64_t shared_bytes;
};

Result<ColumnsPlan> register_columns_plan(const InteractionShape& shape) {
  if (shape.dim % 2 != 0) return unsupported("interaction register columns: dim=", shape.dim, " is odd");
  if (shape.num_vectors() > kColumnsMaxVectors) {
    return unsupported("interaction register columns: ", shape.num_vectors(), " vectors exceed the ",
                       kColumnsMaxVectors, " a thread holds in registers");
  }
  const int lanes = shape.dim / 2;  // <= 2048 by validate(): at most 1024 threads of one sample
  const std::int64_t per_sample_bytes = static_cast<std::int64_t>(shape.num_vectors()) *
                                        ((shape.num_vectors() + 3) / 4 * 4) * 4;
  const int samples = static_cast<int>(std::max<std::int64_t>(
      1, std::min<std::int64_t>(kColumnsThreads / lanes, kMaxSharedBytes / per_sample_bytes)));
  return ColumnsPlan{samples, (samples * lanes + 63) / 64 * 64, samples * per_sample_bytes};
}

bool aligned_to(const void* pointer, std::size_t bytes) {
  return reinterpret_cast<std::uintptr_t>(pointer) % bytes == 0;
}

template <ElemKind K>
Status launch_interaction_gram_tiles(const InteractionShape& shape, const GramPlan& plan, const void* bottom,
                                     const void* embeddings, void* output, gpuStream_t s) {
  const std::int64_t blocks = (shape.batch + plan.tiling.samples_per_block - 1) / plan.tiling.samples_per_block;
  gpu_device::nn::interaction_forward_gram_tiles_kernel<K>
      <<<static_cast<unsigned>(blocks), kGramThreads, static_cast<std::size_t>(plan.shared_bytes), s>>>(
          plan.tiling, shape.batch, shape.output_row_stride(), static_cast<const Storage<K>*>(bottom),
          static_cast<const Storage<K>*>(embeddings), static_cast<Storage<K>*>(output));
  PARITY_GPU_CHECK_LAUNCH(interaction_forward_gram_tiles_kernel);
  return Status::ok();
}

template <ElemKind K>
Status launch_interaction_register_columns(const InteractionShape& shape, const ColumnsPlan& plan,
                                           const void* bottom, const void* embeddings, const void* grad_output,
                                           void* grad_bottom, float* grad_embeddings, gpuStream_t s) {
  const std::int64_t blocks = (shape.batch + plan.samples_per_block - 1) / plan.samples_per_block;
  gpu_device::nn::interaction_backward_register_columns_kernel<K, kColumnsMaxVectors>
      <<<static_cast<unsigned>(blocks), plan.threads, static_cast<std::size_t>(plan.shared_bytes), s>>>(
          shape.num_vectors(), shape.dim, plan.samples_per_block, shape.batch, shape.output_row_stride(),
          static_cast<const Storage<K>*>(bottom), static_cast<const Storage<K>*>(embeddings),
          static_cast<const Storage<K>*>(grad_output), static_cast<Storage<K>*>(grad_bottom), grad_embeddings);
  PARITY_GPU_CHECK_LAUNCH(interaction_backward_register_columns_kernel);
  return Status::ok();
}

// The argument checks every interaction kernel shares; validate() adds the general kernels' limit.
Status check_interaction_arguments(const InteractionShape& shape) {
  PARITY_CHECK_ARG(shape.batch >= 0, "interaction: batch=", shape.batch, " must be >= 0");
  PARITY_CHECK_ARG(shape.num_embeddings >= 1 && shape.num_embeddings <= 1024, "interaction: num_embeddings=",
                   shape.num_embeddings, " must be in [1, 1024]");
  PARITY_CHECK_ARG(shape.dim >= 1 && shape.dim <= 4096, "interaction: dim=", shape.dim, " must be in [1, 4096]");
  PARITY_RETURN_IF_ERROR(elem_kind(shape.dtype, "interaction").status());
  PARITY_CHECK_ARG(shape.output_stride == 0 || shape.output_stride >= shape.output_width(),
                   "interaction: output_stride=", shape.output_stride, " is below the output width ",
                   shape.output_width());
  return Status::ok();
}

}  // namespace

Status InteractionShape::validate() const {
  PARITY_RETURN_IF_ERROR(check_interaction_arguments(*this));
  if (interaction_backward_shared_bytes(*this) > kMaxSharedBytes) {
    return unsupported("interaction: ", num_vectors(), " vectors of dim ", dim, " need ",
                       interaction_backward_shared_bytes(*this), " bytes of shared memory per sample (limit ",
                       kMaxSharedBytes, ")");
  }
  return Status::ok();
}

Status interaction_dot_forward(const InteractionShape& shape, const void* bottom, const void* embeddings,
                               void* output, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(shape.validate());
  if (shape.batch == 0) return Status::ok();
  PARITY_CHECK_ARG(bottom && embeddings && output, "interaction_dot_forward: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(shape.dtype, "interaction"));
  const auto shared = static_cast<std::size_t>(interaction_forward_shared_bytes(shape));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_interaction_forward<K>(shape, bottom, embeddings, output, shared, s)));
}

Status interaction_dot_backward(const InteractionShape& shape, const void* bottom, const void* embeddings,
                                const void* grad_output, void* grad_bottom, float* grad_embeddings,
                                StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(shape.validate());
  if (shape.batch == 0) return Status::ok();
  PARITY_CHECK_ARG(bottom && embeddings && grad_output && grad_bottom && grad_embeddings,
                   "interaction_dot_backward: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(shape.dtype, "interaction"));
  const auto shared = static_cast<std::size_t>(interaction_backward_shared_bytes(shape));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_interaction_backward<K>(shape, bottom, embeddings, grad_output, grad_bottom,
                                                              grad_embeddings, shared, s)));
}

Status interaction_gram_tiles_supported(const InteractionShape& shape) {
  PARITY_RETURN_IF_ERROR(check_interaction_arguments(shape));
  return gram_tiles_plan(shape).status();
}

Status interaction_dot_forward_gram_tiles(const InteractionShape& shape, const void* bottom, const void* embeddings,
                                          void* output, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(check_interaction_arguments(shape));
  PARITY_ASSIGN_OR_RETURN(const GramPlan plan, gram_tiles_plan(shape));
  if (shape.batch == 0) return Status::ok();
  PARITY_CHECK_ARG(bottom && embeddings && output, "interaction_dot_forward_gram_tiles: null pointer argument");
  const std::size_t quad_bytes = 4 * dtype_size_bytes(shape.dtype);
  if (!aligned_to(bottom, quad_bytes) || !aligned_to(embeddings, quad_bytes)) {
    return interaction_dot_forward(shape, bottom, embeddings, output, stream);
  }
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(shape.dtype, "interaction"));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_interaction_gram_tiles<K>(shape, plan, bottom, embeddings, output, s)));
}

Status interaction_register_columns_supported(const InteractionShape& shape) {
  PARITY_RETURN_IF_ERROR(check_interaction_arguments(shape));
  return register_columns_plan(shape).status();
}

Status interaction_dot_backward_register_columns(const InteractionShape& shape, const void* bottom,
                                                 const void* embeddings, const void* grad_output, void* grad_bottom,
                                                 float* grad_embeddings, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(check_interaction_arguments(shape));
  PARITY_ASSIGN_OR_RETURN(const ColumnsPlan plan, register_columns_plan(shape));
  if (shape.batch == 0) return Status::ok();
  PARITY_CHECK_ARG(bottom && embeddings && grad_output && grad_bottom && grad_embeddings,
                   "interaction_dot_backward_register_columns: null pointer argument");
  const std::size_t pair_bytes = 2 * dtype_size_bytes(shape.dtype);
  if (!aligned_to(bottom, pair_bytes) || !aligned_to(embeddings, pair_bytes) || !aligned_to(grad_bottom, pair_bytes) ||
      !aligned_to(grad_embeddings, 8)) {
    return interaction_dot_backward(shape, bottom, embeddings, grad_output, grad_bottom, grad_embeddings, stream);
  }
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(shape.dtype, "interaction"));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_interaction_register_columns<K>(shape, plan, bottom, embeddings, grad_output,
                                                                        grad_bottom, grad_embeddings, s)));
}

std::int64_t bce_workspace_bytes(std::int64_t batch) {
  const std::int64_t blocks = std::clamp<std::int64_t>((batch + kBceThreads - 1) / kBceThreads, 1, 1024);
  return blocks * static_cast<std::int64_t>(sizeof(float));
}

Status bce_with_logits(std::int64_t batch, DType logit_dtype, const void* logits, const float* labels,
                       float* loss_sum, void* grad_logits, float grad_scale, void* workspace,
                       std::int64_t workspace_bytes, StreamHandle stream) {
  PARITY_CHECK_ARG(batch >= 1, "bce_with_logits: batch=", batch, " must be >= 1");
  PARITY_CHECK_ARG(logits && labels && loss_sum && grad_logits && workspace,
                   "bce_with_logits: null pointer argument");
  PARITY_CHECK_ARG(workspace_bytes >= bce_workspace_bytes(batch), "bce_with_logits: workspace_bytes=",
                   workspace_bytes, " is below the ", bce_workspace_bytes(batch), " needed");
  PARITY_CHECK_ARG(std::isfinite(grad_scale), "bce_with_logits: grad_scale=", grad_scale, " is not finite");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(logit_dtype, "bce_with_logits"));
  const int blocks = static_cast<int>(bce_workspace_bytes(batch) / static_cast<std::int64_t>(sizeof(float)));
  auto s = static_cast<gpuStream_t>(stream);
  auto* partials = static_cast<float*>(workspace);
  PARITY_DISPATCH_ELEM(kind, K, (launch_bce<K>(batch, logits, labels, loss_sum, grad_logits, grad_scale, partials,
                                               blocks, s)));
}

Status cross_forward(std::int64_t count, DType dtype, const void* x0, const void* t, const void* xl, void* out,
                     StreamHandle stream) {
  PARITY_CHECK_ARG(count >= 0, "cross_forward: count=", count, " must be >= 0");
  if (count == 0) return Status::ok();
  PARITY_CHECK_ARG(x0 && t && xl && out, "cross_forward: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(dtype, "cross_forward"));
  PARITY_ASSIGN_OR_RETURN(const int blocks, elementwise_blocks(count));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_cross_forward<K>(count, x0, t, xl, out, blocks, s)));
}

Status cross_backward(std::int64_t count, DType dtype, const void* grad_out, const void* x0, const void* t,
                      void* grad_t, void* grad_x0, bool accumulate_grad_x0, StreamHandle stream, void* grad_xl) {
  PARITY_CHECK_ARG(count >= 0, "cross_backward: count=", count, " must be >= 0");
  if (count == 0) return Status::ok();
  PARITY_CHECK_ARG(grad_out && x0 && t && grad_t && grad_x0, "cross_backward: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(dtype, "cross_backward"));
  PARITY_ASSIGN_OR_RETURN(const int blocks, elementwise_blocks(count));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_cross_backward<K>(count, grad_out, x0, t, grad_t, grad_x0, accumulate_grad_x0,
                                                          grad_xl, blocks, s)));
}

Status add_split_columns(const void* a, const void* b, DType dtype, std::int64_t rows, std::int64_t left_cols,
                         std::int64_t right_cols, void* left, float* right, StreamHandle stream) {
  PARITY_CHECK_ARG(rows >= 0 && left_cols >= 0 && right_cols >= 0, "add_split_columns: rows=", rows,
                   ", left_cols=", left_cols, ", right_cols=", right_cols, ": expected >= 0");
  const std::int64_t count = rows * (left_cols + right_cols);
  if (count == 0) return Status::ok();
  PARITY_CHECK_ARG(a && b && (left || left_cols == 0) && (right || right_cols == 0),
                   "add_split_columns: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(dtype, "add_split_columns"));
  PARITY_ASSIGN_OR_RETURN(const int blocks, elementwise_blocks(count));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_add_split_columns<K>(rows, left_cols, right_cols, a, b, left, right, blocks, s)));
}

Status relu_backward(std::int64_t count, DType dtype, const void* grad_out, const void* output, void* grad_pre,
                     StreamHandle stream) {
  PARITY_CHECK_ARG(count >= 0, "relu_backward: count=", count, " must be >= 0");
  if (count == 0) return Status::ok();
  PARITY_CHECK_ARG(grad_out && output && grad_pre, "relu_backward: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind kind, elem_kind(dtype, "relu_backward"));
  PARITY_ASSIGN_OR_RETURN(const int blocks, elementwise_blocks(count));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(kind, K, (launch_relu_backward<K>(count, grad_out, output, grad_pre, blocks, s)));
}

Status DenseOptimizerParams::validate() const {
  PARITY_CHECK_ARG(std::isfinite(learning_rate) && learning_rate >= 0.0f, "optimizer: learning_rate=",
                   learning_rate, " must be finite and >= 0");
  PARITY_CHECK_ARG(std::isfinite(eps) && eps > 0.0f, "optimizer: eps=", eps, " must be > 0");
  PARITY_CHECK_ARG(beta1 >= 0.0f && beta1 < 1.0f, "optimizer: beta1=", beta1, " must be in [0, 1)");
  PARITY_CHECK_ARG(beta2 >= 0.0f && beta2 < 1.0f, "optimizer: beta2=", beta2, " must be in [0, 1)");
  PARITY_CHECK_ARG(std::isfinite(weight_decay) && weight_decay >= 0.0f, "optimizer: weight_decay=",
                   weight_decay, " must be finite and >= 0");
  PARITY_CHECK_ARG(step >= 1, "optimizer: step=", step, " must be >= 1");
  return Status::ok();
}

Status dense_optimizer_step(const DenseOptimizerParams& params, std::int64_t count, float* master,
                            float* state1, float* state2, const void* grad, DType grad_dtype, void* shadow,
                            DType shadow_dtype, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(params.validate());
  PARITY_CHECK_ARG(count >= 0, "dense_optimizer_step: count=", count, " must be >= 0");
  if (count == 0) return Status::ok();
  PARITY_CHECK_ARG(master && grad, "dense_optimizer_step: null master or grad");
  PARITY_CHECK_ARG(params.kind == DenseOptimizer::kSgd || state1 != nullptr,
                   "dense_optimizer_step: state1 is required for Adagrad and Adam");
  PARITY_CHECK_ARG(params.kind != DenseOptimizer::kAdam || state2 != nullptr,
                   "dense_optimizer_step: state2 is required for Adam");
  PARITY_ASSIGN_OR_RETURN(const ElemKind grad_kind, elem_kind(grad_dtype, "dense_optimizer_step grad"));
  PARITY_ASSIGN_OR_RETURN(const ElemKind shadow_kind, elem_kind(shadow_dtype, "dense_optimizer_step shadow"));
  PARITY_ASSIGN_OR_RETURN(const int blocks, elementwise_blocks(count));
  gpu_device::nn::OptimizerStepArgs args{};
  args.kind = static_cast<int>(params.kind);
  args.learning_rate = params.learning_rate;
  args.eps = params.eps;
  args.beta1 = params.beta1;
  args.beta2 = params.beta2;
  args.one_minus_beta1 = static_cast<float>(1.0 - static_cast<double>(params.beta1));
  args.one_minus_beta2 = static_cast<float>(1.0 - static_cast<double>(params.beta2));
  args.weight_decay = params.weight_decay;
  const double step = static_cast<double>(params.step);
  args.adam_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(params.beta1), step));
  args.adam_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(params.beta2), step));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(grad_kind, KG, (launch_optimizer_for_shadow<KG>(shadow_kind, args, count, master, state1,
                                                                       state2, grad, shadow, blocks, s)));
}

Status cast(std::int64_t count, const void* in, DType in_dtype, void* out, DType out_dtype, StreamHandle stream) {
  PARITY_CHECK_ARG(count >= 0, "cast: count=", count, " must be >= 0");
  if (count == 0) return Status::ok();
  PARITY_CHECK_ARG(in && out, "cast: null pointer argument");
  PARITY_ASSIGN_OR_RETURN(const ElemKind in_kind, elem_kind(in_dtype, "cast input"));
  PARITY_ASSIGN_OR_RETURN(const ElemKind out_kind, elem_kind(out_dtype, "cast output"));
  PARITY_ASSIGN_OR_RETURN(const int blocks, elementwise_blocks(count));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_DISPATCH_ELEM(in_kind, KI, (launch_cast_to<KI>(out_kind, count, in, out, blocks, s)));
}

}  // namespace parity::nn::gpu
