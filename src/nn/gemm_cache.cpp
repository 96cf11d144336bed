// GemmCache and the row-major linear-layer GEMM shapes.
#include "nn/gemm_cache.hpp"

#include <cstddef>
#include <vector>

#include "core/device_hooks.hpp"

namespace parity::nn::detail {

namespace {

std::string cache_key(const gemm::GemmRunProblem& problem, const ExecutionContext& context) {
  const gemm::GemmProblem& shape = problem.shape;
  // describe() names A's type only: a plan's output type is part of what it computes.
  return ::parity::detail::concat(shape.describe(), " b=", dtype_name(shape.b_dtype), " c=", dtype_name(shape.c_dtype),
                                  " lda=", shape.lda, " ldb=", shape.ldb, " ldc=", shape.ldc,
                        " run_epilogue=", gemm::run_epilogue_name(problem.epilogue), " strides=",
                        problem.stride_a, ",", problem.stride_b, ",", problem.stride_c,
                        " tf32=", problem.allow_tf32, " device=", device_kind_name(context.device),
                        " choice=", gemm_choice_name(context.gemm_choice));
}

gemm::GemmRunProblem make_problem(gemm::GemmLayout layout, std::int64_t m, std::int64_t n,
                                  std::int64_t k, DType dtype, MathMode math,
                                  gemm::RunEpilogue epilogue) {
  gemm::GemmRunProblem problem;
  problem.shape.m = m;
  problem.shape.n = n;
  problem.shape.k = k;
  problem.shape.a_dtype = dtype;
  problem.shape.b_dtype = dtype;
  problem.shape.c_dtype = dtype;
  problem.shape.layout = layout;
  problem.epilogue = epilogue;
  problem.allow_tf32 = math == MathMode::kTf32;
  return problem;
}

}  // namespace

Result<const gemm::Gemm*> GemmCache::get(const gemm::GemmRunProblem& problem,
                                         const ExecutionContext& context) {
  const std::string key = cache_key(problem, context);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second.get();
  PARITY_ASSIGN_OR_RETURN(gemm::Gemm plan, gemm::Gemm::create(problem, context));
  auto owned = std::make_unique<gemm::Gemm>(std::move(plan));
  const gemm::Gemm* pointer = owned.get();
  plans_.emplace(key, std::move(owned));
  return pointer;
}

Result<void*> GemmCache::device_workspace(std::int64_t size_bytes, const ExecutionContext& context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (size_bytes <= device_workspace_bytes_) return device_workspace_;
  PARITY_ASSIGN_OR_RETURN(const auto* hooks, ::parity::detail::require_device_hooks("gemm workspace"));
  if (device_workspace_ != nullptr) {
    // Kernels queued earlier may still read the old workspace.
    PARITY_RETURN_IF_ERROR(hooks->synchronize(context.stream));
    hooks->release(device_workspace_);
    device_workspace_ = nullptr;
    device_workspace_bytes_ = 0;
  }
  PARITY_ASSIGN_OR_RETURN(device_workspace_, hooks->allocate(size_bytes));
  device_workspace_bytes_ = size_bytes;
  return device_workspace_;
}

std::vector<std::string> GemmCache::plan_descriptions() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> lines;
  for (const auto& [key, plan] : plans_) lines.push_back(key + " -> " + plan->configuration());
  return lines;
}

GemmCache& gemm_cache() {
  static GemmCache cache;
  return cache;
}

gemm::GemmRunProblem linear_forward_gemm(std::int64_t rows, std::int64_t in, std::int64_t out,
                                         DType dtype, MathMode math, gemm::RunEpilogue epilogue) {
  return make_problem(gemm::GemmLayout::kTN, out, rows, in, dtype, math, epilogue);
}

gemm::GemmRunProblem linear_data_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out,
                                           DType dtype, MathMode math, gemm::RunEpilogue epilogue) {
  return make_problem(gemm::GemmLayout::kNN, in, rows, out, dtype, math, epilogue);
}

gemm::GemmRunProblem linear_weight_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out,
                                             DType dtype, MathMode math, gemm::RunEpilogue epilogue) {
  // dW is fp32 whatever the activations are (the master weights' gradient).
  gemm::GemmRunProblem problem =
      make_problem(gemm::GemmLayout::kNT, in, out, rows, dtype, math, epilogue);
  problem.shape.c_dtype = DType::kF32;
  return problem;
}

Status run_gemm(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args,
                const ExecutionContext& context) {
  PARITY_ASSIGN_OR_RETURN(const gemm::Gemm* plan, gemm_cache().get(problem, context));
  if (plan->workspace_bytes() == 0) return plan->run(args, context);
  if (context.device == DeviceKind::kGpu) {
    PARITY_ASSIGN_OR_RETURN(void* workspace, gemm_cache().device_workspace(plan->workspace_bytes(), context));
    gemm::GemmArgs with_workspace = args;
    with_workspace.workspace = workspace;
    with_workspace.workspace_bytes = plan->workspace_bytes();
    return plan->run(with_workspace, context);
  }
  // Host workspace per call on the CPU (bf16 operands converted to fp32).
  std::vector<std::byte> workspace(static_cast<std::size_t>(plan->workspace_bytes()));
  gemm::GemmArgs with_workspace = args;
  with_workspace.workspace = workspace.data();
  with_workspace.workspace_bytes = plan->workspace_bytes();
  return plan->run(with_workspace, context);
}

}  // namespace parity::nn::detail
