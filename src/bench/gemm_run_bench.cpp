// The dense-layer GEMMs of dlrm-kaggle and dlrm-v2 as gemm::Gemm problems (gemm_run_bench.hpp).
#include "parity/bench/gemm_run_bench.hpp"

#include <utility>

namespace parity::bench {
namespace {

using gemm::GemmLayout;
using gemm::RunEpilogue;

struct Linear {
  std::string name;
  std::int64_t in = 0, out = 0;
  RunEpilogue forward = RunEpilogue::kBiasRelu;  // the trainer's default (separate dReLU pass)
  bool input_after_relu = false;  // the data gradient applies the previous layer's dReLU
  bool has_data_grad = true;
};

gemm::GemmRunProblem make(std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout,
                          DType dtype, DType c_dtype, RunEpilogue epilogue) {
  gemm::GemmRunProblem p;
  p.shape.m = m;
  p.shape.n = n;
  p.shape.k = k;
  p.shape.layout = layout;
  p.shape.a_dtype = p.shape.b_dtype = dtype;
  p.shape.c_dtype = c_dtype;
  p.epilogue = epilogue;
  return p;
}

// A chain of linear layers with ReLU between them; `last_relu` says whether the last has one.
void add_mlp(std::vector<Linear>* layers, const std::string& prefix,
             const std::vector<std::int64_t>& widths, bool last_relu, bool first_has_data_grad) {
  for (std::size_t i = 0; i + 1 < widths.size(); ++i) {
    Linear layer;
    layer.name = prefix + std::to_string(i) + " " + std::to_string(widths[i]) + "->" +
                 std::to_string(widths[i + 1]);
    layer.in = widths[i];
    layer.out = widths[i + 1];
    const bool is_last = i + 2 == widths.size();
    layer.forward = is_last && !last_relu ? RunEpilogue::kBias : RunEpilogue::kBiasRelu;
    layer.input_after_relu = i > 0;
    layer.has_data_grad = i > 0 || first_has_data_grad;
    layers->push_back(layer);
  }
}

void add_passes(std::vector<GemmRunBenchProblem>* out, const std::string& model,
                const std::vector<Linear>& layers, std::int64_t batch, DType dtype) {
  // The trainer's default passes ("forward", "data_grad" with the dReLU as a separate pass,
  // "weight_grad" with the bias gradient), and the fused-dReLU mode's two (`--fused-drelu`:
  // "forward_aux" writes the ReLU mask, "data_grad_drelu" applies it), as src/nn/linear.cpp runs them.
  for (const Linear& l : layers) {
    // The row-major layer Y[B, out] = X[B, in] W[out, in]^T + b, as gemm.hpp maps it.
    out->push_back({model, l.name, "forward",
                    make(l.out, batch, l.in, GemmLayout::kTN, dtype, dtype, l.forward)});
    if (l.forward == RunEpilogue::kBiasRelu) {
      out->push_back({model, l.name, "forward_aux",
                      make(l.out, batch, l.in, GemmLayout::kTN, dtype, dtype, RunEpilogue::kBiasReluAux)});
    }
    if (l.has_data_grad) {
      out->push_back({model, l.name, "data_grad",
                      make(l.in, batch, l.out, GemmLayout::kNN, dtype, dtype, RunEpilogue::kNone)});
      if (l.input_after_relu) {
        out->push_back({model, l.name, "data_grad_drelu",
                        make(l.in, batch, l.out, GemmLayout::kNN, dtype, dtype, RunEpilogue::kDRelu)});
      }
    }
    const RunEpilogue bias_grad =
        l.forward == RunEpilogue::kNone ? RunEpilogue::kNone : RunEpilogue::kBgradB;
    out->push_back({model, l.name, "weight_grad",
                    make(l.in, l.out, batch, GemmLayout::kNT, dtype, DType::kF32, bias_grad)});
  }
}

}  // namespace

std::vector<GemmRunBenchProblem> dlrm_gemm_run_problems(std::int64_t batch_size, DType dtype) {
  std::vector<GemmRunBenchProblem> problems;
  // dlrm-kaggle: 26 sparse features of dim 128 -> interaction output 128 + 27*26/2 = 479.
  std::vector<Linear> kaggle;
  add_mlp(&kaggle, "bottom", {13, 512, 256, 128}, true, false);
  add_mlp(&kaggle, "top", {479, 1024, 1024, 512, 256, 1}, false, true);
  add_passes(&problems, "dlrm-kaggle", kaggle, batch_size, dtype);
  // dlrm-v2: DCNv2 on 26*128 + 128 = 3456 inputs, three low-rank (512) cross layers
  // x_{l+1} = x0 * (U (V x_l) + b) + x_l: V has no bias and no activation, U a bias.
  std::vector<Linear> v2;
  add_mlp(&v2, "bottom", {13, 512, 256, 128}, true, false);
  for (int i = 0; i < 3; ++i) {
    const std::string cross = "cross" + std::to_string(i);
    v2.push_back({cross + "_down 3456->512", 3456, 512, RunEpilogue::kNone, false, true});
    v2.push_back({cross + "_up 512->3456", 512, 3456, RunEpilogue::kBias, false, true});
  }
  add_mlp(&v2, "top", {3456, 1024, 1024, 512, 256, 1}, false, true);
  add_passes(&problems, "dlrm-v2", v2, batch_size, dtype);
  return problems;
}

Result<std::vector<GemmRunBenchProblem>> select_models(std::vector<GemmRunBenchProblem> problems,
                                                       const std::string& model) {
  PARITY_CHECK_ARG(model == "all" || model == "dlrm-kaggle" || model == "dlrm-v2", "model: '",
                   model, "' is not one of all, dlrm-kaggle, dlrm-v2");
  if (model == "all") return problems;
  std::erase_if(problems, [&](const GemmRunBenchProblem& p) { return p.model != model; });
  return problems;
}

Result<std::vector<GemmRunBenchProblem>> gemm_run_bench_problems(
    const GemmRunBenchRequest& request) {
  PARITY_CHECK_ARG(request.batch_size > 0, "bench gemm-run: batch_size=", request.batch_size,
                   " must be > 0");
  PARITY_CHECK_ARG(request.options.host_calls >= 1 && request.options.host_samples >= 1,
                   "bench gemm-run: host_calls=", request.options.host_calls,
                   " and host_samples=", request.options.host_samples, " must be >= 1");
  PARITY_RETURN_IF_ERROR(validate_timing_options(request.options.timing));
  return select_models(dlrm_gemm_run_problems(request.batch_size, request.dtype), request.model);
}

}  // namespace parity::bench
