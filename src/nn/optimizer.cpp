// Dense optimisers: the CPU variant (OpenMP over elements; each element's update is independent,
// so results do not depend on the thread count) and the GPU slot.
#include "parity/nn/optimizer.hpp"

#include <cmath>

#include "nn/gpu_slots.hpp"
#include "nn/variant_support.hpp"

namespace parity::nn {

int dense_optimizer_state_buffers(DenseOptimizerKind kind) {
  switch (kind) {
    case DenseOptimizerKind::kSgd: return 0;
    case DenseOptimizerKind::kAdagrad: return 1;
    case DenseOptimizerKind::kAdam: return 2;
  }
  return 0;
}

Status DenseOptimizerProblem::validate() const {
  PARITY_CHECK_ARG(num_elements >= 0, "dense_optimizer: num_elements=", num_elements, ": expected >= 0");
  PARITY_CHECK_ARG(std::isfinite(learning_rate) && learning_rate >= 0,
                   "dense_optimizer: learning_rate=", learning_rate, ": expected a finite value >= 0");
  PARITY_CHECK_ARG(std::isfinite(eps) && eps > 0, "dense_optimizer: eps=", eps, ": expected > 0");
  PARITY_CHECK_ARG(beta1 >= 0 && beta1 < 1, "dense_optimizer: beta1=", beta1, ": out of range [0, 1)");
  PARITY_CHECK_ARG(beta2 >= 0 && beta2 < 1, "dense_optimizer: beta2=", beta2, ": out of range [0, 1)");
  PARITY_CHECK_ARG(std::isfinite(weight_decay) && weight_decay >= 0,
                   "dense_optimizer: weight_decay=", weight_decay, ": expected >= 0");
  PARITY_CHECK_ARG(step >= 1, "dense_optimizer: step=", step, ": expected >= 1");
  return Status::ok();
}

namespace {

class DenseOptimizerCpu final : public DenseOptimizerVariant {
 public:
  std::string_view name() const override { return "dense_optimizer_cpu_omp"; }
  Status can_implement(const DenseOptimizerProblem&, const ExecutionContext& context) const override {
    return detail::require_cpu(context);
  }
  Status run(const DenseOptimizerProblem& problem, const DenseOptimizerArgs& args, void*,
             const ExecutionContext&) const override {
    const std::int64_t n = problem.num_elements;
    if (n == 0) return Status::ok();
    PARITY_CHECK_ARG(args.weights != nullptr && args.grads != nullptr,
                     "dense_optimizer: weights and grads must not be null");
    PARITY_CHECK_ARG(args.shadow == nullptr, "dense_optimizer: the CPU variant keeps no 16-bit shadow copy");
    const int buffers = dense_optimizer_state_buffers(problem.kind);
    PARITY_CHECK_ARG(buffers < 1 || args.state1 != nullptr, "dense_optimizer: state1 is null");
    PARITY_CHECK_ARG(buffers < 2 || args.state2 != nullptr, "dense_optimizer: state2 is null");
    const float lr = problem.learning_rate;
    const float wd = problem.weight_decay;
    float* w = args.weights;
    const float* g = args.grads;
    switch (problem.kind) {
      case DenseOptimizerKind::kSgd:
#pragma omp parallel for schedule(static) if (n >= detail::kParallelMinElements)
        for (std::int64_t i = 0; i < n; ++i) w[i] -= lr * (g[i] + wd * w[i]);
        break;
      case DenseOptimizerKind::kAdagrad: {
        float* s = args.state1;
        const float eps = problem.eps;
#pragma omp parallel for schedule(static) if (n >= detail::kParallelMinElements)
        for (std::int64_t i = 0; i < n; ++i) {
          const float grad = g[i] + wd * w[i];
          s[i] += grad * grad;
          w[i] -= lr * grad / (std::sqrt(s[i]) + eps);
        }
        break;
      }
      case DenseOptimizerKind::kAdam: {
        float* m = args.state1;
        float* v = args.state2;
        const float b1 = problem.beta1, b2 = problem.beta2, eps = problem.eps;
        const auto t = static_cast<double>(problem.step);
        const auto correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(b1), t));
        const auto correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(b2), t));
#pragma omp parallel for schedule(static) if (n >= detail::kParallelMinElements)
        for (std::int64_t i = 0; i < n; ++i) {
          const float grad = g[i] + wd * w[i];
          m[i] = b1 * m[i] + (1 - b1) * grad;
          v[i] = b2 * v[i] + (1 - b2) * grad * grad;
          w[i] -= lr * (m[i] / correction1) / (std::sqrt(v[i] / correction2) + eps);
        }
        break;
      }
    }
    return Status::ok();
  }
};

}  // namespace

const std::vector<const DenseOptimizerVariant*>& dense_optimizer_variants() {
  static const DenseOptimizerCpu cpu;
  auto& gpu = detail::dense_optimizer_gpu_elementwise_slot();
  static const std::vector<const DenseOptimizerVariant*> variants = {&cpu, &gpu};
  return variants;
}

Status dense_optimizer_step(const DenseOptimizerProblem& problem, const DenseOptimizerArgs& args,
                            const ExecutionContext& context) {
  return detail::run_preferred(dense_optimizer_variants(), problem, args, context, "dense_optimizer");
}

}  // namespace parity::nn
