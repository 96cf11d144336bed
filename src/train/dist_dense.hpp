// DenseReplica (internal): the dense part of a DLRM (bottom MLP, dot interaction, top MLP) that
// every rank of a distributed run holds in full, run on pooled embeddings computed elsewhere, with
// the backward split into row ranges (gradient chunks) and the update applied separately, after
// the gradients were summed across ranks. CPU, fp32; the parameters use the single-rank model's
// flat layout (blocks on 64-byte boundaries: bottom layers, then top layers; weight then bias),
// so the same "dense.*" checkpoint blobs fit both.
//
// Legend: B rows of the last forward, D bottom output width, P pooled width, I interaction width.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/model/spec.hpp"
#include "parity/nn/linear.hpp"

namespace parity::train::detail {

class DenseReplica {
 public:
  /// Refuses what it does not run (dcnv2, bf16) with the reason.
  static Result<DenseReplica> create(const model::ModelSpec& spec, std::int64_t max_rows,
                                     const ExecutionContext& context);
  std::int64_t parameter_count() const { return parameter_count_; }
  std::vector<float>& parameters() { return parameters_; }
  std::vector<float>& state1() { return state1_; }
  std::vector<float>& state2() { return state2_; }

  /// dense: [B][num_dense], pooled: [B][P] (both must stay alive until the backward). Runs the
  /// ops on row chunks of `chunk_rows` (the last may be shorter): a GEMM's bits depend on its row
  /// count, so equal chunks give equal logits whichever rank runs them. Keeps the activations.
  Status forward(const float* dense, const float* pooled, std::int64_t rows, std::int64_t chunk_rows);
  const float* logits() const { return top_outputs_.back().data(); }
  /// Backward of rows [begin, begin + count) of the last forward, given d loss / d logit of those
  /// rows: parameter gradients of these rows alone into `grads` (overwritten, parameter_count()),
  /// d loss / d pooled into grad_pooled rows [begin, begin + count) ([B][P] buffer). After each
  /// layer, on_ready(first) (when set) is told that grads[first, parameter_count()) are final:
  /// layers finish top to bottom, so `first` only decreases.
  using ReadyCallback = std::function<Status(std::int64_t first_final_parameter)>;
  Status backward_rows(const float* grad_logits, std::int64_t begin, std::int64_t count, float* grads,
                       float* grad_pooled, const ReadyCallback& on_ready = {});
  /// First parameter of each layer, top MLP's last layer first (the order they become final).
  std::vector<std::int64_t> layer_offsets_in_backward_order() const;
  /// The dense optimiser step with `grads` (already summed over the global batch) at `step`.
  Status apply_update(const float* grads, std::int64_t step);

 private:
  struct Layer {
    std::int64_t in = 0;
    std::int64_t out = 0;
    nn::Activation activation = nn::Activation::kRelu;
    std::int64_t weight_offset = 0;
    std::int64_t bias_offset = 0;
  };
  Status forward_rows(std::int64_t begin, std::int64_t count);
  Status backward_mlp(const std::vector<Layer>& layers, std::vector<std::vector<float>>& outputs,
                      const float* input, std::int64_t begin, std::int64_t count, bool needs_input_grad,
                      float* grads, const float** grad, const ReadyCallback& on_ready);

  model::ModelSpec spec_;
  ExecutionContext context_;
  std::int64_t max_rows_ = 0;
  std::int64_t parameter_count_ = 0;
  std::vector<Layer> bottom_, top_;
  std::vector<float> parameters_, state1_, state2_;
  // Activations of the last forward, [max_rows][width] each.
  const float* dense_input_ = nullptr;
  const float* pooled_ = nullptr;
  std::vector<std::vector<float>> bottom_outputs_, top_outputs_;
  std::vector<float> interaction_;
  // Backward scratch, [max_rows][widest].
  std::vector<float> grad_a_, grad_b_, grad_pre_;
};

}  // namespace parity::train::detail
