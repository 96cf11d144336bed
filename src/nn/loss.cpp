// BCE-with-logits: the CPU variant (gradient in parallel; the loss summed in fp64 in sample order)
// and the GPU slot.
#include "parity/nn/loss.hpp"

#include <algorithm>
#include <cmath>

#include "nn/gpu_slots.hpp"
#include "nn/variant_support.hpp"

namespace parity::nn {

Status BceLossProblem::validate() const {
  PARITY_CHECK_ARG(batch_size >= 1, "bce_loss: batch_size=", batch_size, ": expected >= 1");
  return Status::ok();
}

namespace {

class BceLossCpu final : public BceLossVariant {
 public:
  std::string_view name() const override { return "bce_with_logits_cpu"; }
  Status can_implement(const BceLossProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(detail::require_cpu(context));
    if (problem.dtype != DType::kF32) return unsupported("the CPU loss takes fp32 logits (dtype=", dtype_name(problem.dtype), ")");
    return Status::ok();
  }
  Status run(const BceLossProblem& problem, const BceLossArgs& args, void*,
             const ExecutionContext&) const override {
    PARITY_CHECK_ARG(args.logits && args.labels && args.loss,
                     "bce_loss: logits, labels and loss must not be null");
    const std::int64_t batch = problem.batch_size;
    const auto* logits = static_cast<const float*>(args.logits);
    if (args.grad_logits != nullptr) {
      auto* grad_logits = static_cast<float*>(args.grad_logits);
      const float scale = 1.0f / static_cast<float>(batch);
#pragma omp parallel for schedule(static) if (batch >= detail::kParallelMinElements)
      for (std::int64_t b = 0; b < batch; ++b) {
        const float sigmoid = 1.0f / (1.0f + std::exp(-logits[b]));
        grad_logits[b] = (sigmoid - args.labels[b]) * scale;
      }
    }
    double total = 0.0;
    for (std::int64_t b = 0; b < batch; ++b) {
      const double z = logits[b];
      total += std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z))) - args.labels[b] * z;
    }
    *args.loss = total / static_cast<double>(batch);
    return Status::ok();
  }
};

}  // namespace

const std::vector<const BceLossVariant*>& bce_loss_variants() {
  static const BceLossCpu cpu;
  auto& gpu = detail::bce_with_logits_gpu_reduce_slot();
  static const std::vector<const BceLossVariant*> variants = {&cpu, &gpu};
  return variants;
}

Status bce_with_logits(const BceLossProblem& problem, const BceLossArgs& args,
                       const ExecutionContext& context) {
  return detail::run_preferred(bce_loss_variants(), problem, args, context, "bce_loss");
}

}  // namespace parity::nn
