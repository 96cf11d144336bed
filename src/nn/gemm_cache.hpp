// One gemm::Gemm per exact problem, created on first use and reused (the configuration is selected
// once, as the run API intends). Thread-safe; entries live as long as the process.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "parity/gemm/gemm.hpp"
#include "parity/nn/linear.hpp"

namespace parity::nn::detail {

class GemmCache {
 public:
  Result<const gemm::Gemm*> get(const gemm::GemmRunProblem& problem, const ExecutionContext& context);
  // GPU: one device workspace shared by every plan (the ops of a step run in order on one
  // stream), grown on demand and kept for the process's life.
  Result<void*> device_workspace(std::int64_t size_bytes, const ExecutionContext& context);
  // "problem -> configuration" of every plan created so far, in key order (what a run used).
  std::vector<std::string> plan_descriptions();

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<gemm::Gemm>> plans_;
  void* device_workspace_ = nullptr;
  std::int64_t device_workspace_bytes_ = 0;
};

GemmCache& gemm_cache();

// Row-major linear-layer GEMMs (gemm.hpp's mapping). rows = B, in = I, out = O.
gemm::GemmRunProblem linear_forward_gemm(std::int64_t rows, std::int64_t in, std::int64_t out,
                                         DType dtype, MathMode math, gemm::RunEpilogue epilogue);
// epilogue: kNone, or kDRelu (fused dReLU of the layer that produced the input; aux = its mask).
gemm::GemmRunProblem linear_data_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out,
                                           DType dtype, MathMode math,
                                           gemm::RunEpilogue epilogue = gemm::RunEpilogue::kNone);
gemm::GemmRunProblem linear_weight_grad_gemm(std::int64_t rows, std::int64_t in, std::int64_t out,
                                             DType dtype, MathMode math, gemm::RunEpilogue epilogue);

// Runs `problem` through the cache.
Status run_gemm(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args,
                const ExecutionContext& context);

}  // namespace parity::nn::detail
