// fp64 reference of gemm::Gemm::run: D = epilogue(alpha * op(A) * op(B) + beta * C) for every
// RunEpilogue, layout, leading dimension and batch stride. Plain loops that share no code with the
// CPU (OpenBLAS) or GPU (cuBLASLt) paths; the ReLU mask layout (bit row + col * aux_ld of the
// batch's bytes, least significant bit first) is spelled out here independently.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/gemm.hpp"

namespace parity::ref {

// Host operands as values (already rounded to their storage type), laid out like the buffers the
// run reads: A and B with the problem's leading dimensions and batch strides.
struct GemmRunInputs {
  std::vector<float> a;
  std::vector<float> b;
  std::vector<float> c;     // D's previous storage, read when beta != 0 (may be empty otherwise)
  std::vector<float> bias;  // length M for the bias epilogues
  std::vector<float> aux_preactivation;  // kDGelu*: aux_ld * N per batch
  std::vector<std::uint8_t> aux_mask;    // kDRelu*: aux_ld * N / 8 bytes per batch
  std::int64_t aux_ld = 0;               // 0 = the problem's default_aux_ld()
  double alpha = 1.0;
  double beta = 0.0;
};

// Per element of D's storage (batch stride stride_c; elements outside M x N are left 0).
struct GemmRunOutputs {
  std::vector<double> d;
  // The value the epilogue starts from: alpha*AB + beta*C (+ bias for the bias epilogues).
  std::vector<double> preactivation;
  // Error scale of `preactivation`: sum_k |alpha a b| + |beta c| (+ |bias|).
  std::vector<double> scale;
  // |d D / d preactivation| at the reference point (1 without activation, 0/1 ReLU, gelu'(x)
  // GELU, f'(aux) for the backward epilogues).
  std::vector<double> gain;
  std::vector<std::uint8_t> aux_mask;   // kBiasReluAux, the bytes the run must write
  std::vector<double> bias_grad;        // length problem.bias_grad_length()
  std::vector<double> bias_grad_scale;  // sum of |terms|
};

// Checks that the inputs span what the problem reads (sizes named in the message).
Result<GemmRunOutputs> gemm_run(const gemm::GemmRunProblem& problem, const GemmRunInputs& inputs);

// tanh-approximated GELU and its derivative in fp64 (cuBLASLt's GELU epilogue definition).
double gelu_tanh(double x);
double gelu_tanh_derivative(double x);

}  // namespace parity::ref
