// Shared helpers for the gemm::Gemm run tests (CPU and GPU): seeded cases in every storage type,
// the fp64 reference, and the comparison with derived tolerances.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/rng.hpp"
#include "parity/gemm/gemm.hpp"
#include "reference/gemm_run.hpp"

namespace parity::testing {

inline constexpr gemm::RunEpilogue kAllRunEpilogues[] = {
    gemm::RunEpilogue::kNone,       gemm::RunEpilogue::kBias,        gemm::RunEpilogue::kRelu,
    gemm::RunEpilogue::kBiasRelu,   gemm::RunEpilogue::kBiasReluAux, gemm::RunEpilogue::kGelu,
    gemm::RunEpilogue::kBiasGelu,   gemm::RunEpilogue::kBiasGeluAux, gemm::RunEpilogue::kDRelu,
    gemm::RunEpilogue::kDReluBgrad, gemm::RunEpilogue::kDGelu,       gemm::RunEpilogue::kDGeluBgrad,
    gemm::RunEpilogue::kBgradA,     gemm::RunEpilogue::kBgradB};
inline constexpr gemm::GemmLayout kAllLayouts[] = {gemm::GemmLayout::kTN, gemm::GemmLayout::kNN,
                                                   gemm::GemmLayout::kNT, gemm::GemmLayout::kTT};
struct DtypePair {
  DType in, out;  // A and B, C and D
};

inline gemm::GemmRunProblem make_run_problem(std::int64_t m, std::int64_t n, std::int64_t k,
                                             gemm::GemmLayout layout, DtypePair dtypes,
                                             gemm::RunEpilogue epilogue) {
  gemm::GemmRunProblem p;
  p.shape.m = m;
  p.shape.n = n;
  p.shape.k = k;
  p.shape.layout = layout;
  p.shape.a_dtype = p.shape.b_dtype = dtypes.in;
  p.shape.c_dtype = dtypes.out;
  p.epilogue = epilogue;
  return p;
}

inline float round_to(DType dtype, double value) {
  const auto v = static_cast<float>(value);
  if (dtype == DType::kBF16) return bf16_bits_to_float(float_to_bf16_bits(v));
  if (dtype == DType::kF16) return fp16_bits_to_float(float_to_fp16_bits(v));
  return v;
}

inline void store_as(DType dtype, float value, std::uint8_t* out) {
  if (dtype == DType::kF32) {
    std::memcpy(out, &value, 4);
    return;
  }
  const std::uint16_t bits =
      dtype == DType::kBF16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
  std::memcpy(out, &bits, 2);
}

inline float load_from(DType dtype, const std::uint8_t* in) {
  if (dtype == DType::kF32) {
    float v;
    std::memcpy(&v, in, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, in, 2);
  return dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

// Values rounded to `dtype`, and their storage bytes.
struct HostBuffer {
  std::vector<float> values;
  std::vector<std::uint8_t> bytes;
};

inline HostBuffer random_buffer(Rng& rng, DType dtype, std::int64_t count, double low,
                                double high) {
  HostBuffer buffer;
  const std::size_t size = dtype_size_bytes(dtype);
  buffer.values.resize(static_cast<std::size_t>(count));
  buffer.bytes.resize(static_cast<std::size_t>(count) * size);
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = round_to(dtype, rng.uniform(low, high));
    buffer.values[static_cast<std::size_t>(i)] = v;
    store_as(dtype, v, buffer.bytes.data() + static_cast<std::size_t>(i) * size);
  }
  return buffer;
}

// One randomized run: inputs in their storage types plus the same values for the reference.
struct GemmRunCase {
  gemm::GemmRunProblem problem;
  HostBuffer a, b, c, bias;       // c = D's storage before the run
  std::vector<std::uint8_t> aux;  // aux buffer (input for the backward epilogues)
  std::int64_t aux_ld = 0;
  ref::GemmRunInputs inputs;
};

inline std::int64_t storage_span(std::int64_t batch, std::int64_t stride, std::int64_t matrix) {
  return (batch - 1) * stride + matrix;
}

inline GemmRunCase make_gemm_run_case(const gemm::GemmRunProblem& problem, std::uint64_t seed,
                                      double alpha, double beta) {
  Rng rng(seed);
  GemmRunCase c;
  c.problem = problem;
  const gemm::GemmProblem& s = problem.shape;
  const bool a_t = s.layout == gemm::GemmLayout::kTN || s.layout == gemm::GemmLayout::kTT;
  const bool b_t = s.layout == gemm::GemmLayout::kNT || s.layout == gemm::GemmLayout::kTT;
  const std::int64_t a_matrix = s.lda_or_packed() * (a_t ? s.m : s.k);
  const std::int64_t b_matrix = s.ldb_or_packed() * (b_t ? s.k : s.n);
  c.a = random_buffer(rng, s.a_dtype, storage_span(s.batch, problem.stride_a_or_packed(), a_matrix),
                      -1, 1);
  c.b = random_buffer(rng, s.b_dtype, storage_span(s.batch, problem.stride_b_or_packed(), b_matrix),
                      -1, 1);
  c.c = random_buffer(rng, s.c_dtype,
                      storage_span(s.batch, problem.stride_c_or_packed(), s.ldc_or_packed() * s.n),
                      -1, 1);
  c.bias = random_buffer(rng, s.c_dtype, s.m, -1, 1);
  c.aux_ld = problem.default_aux_ld();
  c.aux.assign(static_cast<std::size_t>(problem.aux_bytes()), 0xA5);
  const gemm::AuxKind aux_kind = gemm::epilogue_aux_kind(problem.epilogue);
  if (gemm::epilogue_reads_aux(problem.epilogue) && aux_kind == gemm::AuxKind::kReluMask) {
    for (auto& byte : c.aux) byte = static_cast<std::uint8_t>(rng.uniform_int(0, 255));
    c.inputs.aux_mask = c.aux;
  } else if (gemm::epilogue_reads_aux(problem.epilogue)) {
    HostBuffer pre = random_buffer(rng, s.c_dtype, c.aux_ld * s.n * s.batch, -3, 3);
    c.aux = pre.bytes;
    c.inputs.aux_preactivation = pre.values;
  }
  c.inputs.a = c.a.values;
  c.inputs.b = c.b.values;
  c.inputs.c = c.c.values;
  c.inputs.bias = c.bias.values;
  c.inputs.aux_ld = c.aux_ld;
  c.inputs.alpha = alpha;
  c.inputs.beta = beta;
  return c;
}

inline gemm::GemmArgs host_args(GemmRunCase& c, std::vector<std::uint8_t>& d,
                                std::vector<float>& bias_grad,
                                std::vector<std::uint8_t>& workspace) {
  gemm::GemmArgs args;
  args.a = c.a.bytes.data();
  args.b = c.b.bytes.data();
  args.d = d.data();
  args.bias = c.bias.bytes.data();
  args.aux = c.aux.empty() ? nullptr : c.aux.data();
  args.aux_ld = c.aux_ld;
  args.bias_grad = bias_grad.empty() ? nullptr : bias_grad.data();
  args.alpha = static_cast<float>(c.inputs.alpha);
  args.beta = static_cast<float>(c.inputs.beta);
  args.workspace = workspace.empty() ? nullptr : workspace.data();
  args.workspace_bytes = static_cast<std::int64_t>(workspace.size());
  return args;
}

// Error model of a run (all derived, none tuned):
//  - operand_roundoff: rounding of each operand before the product (TF32: 2^-11, else 0);
//  - accumulation in fp32 over K products plus alpha, beta*C and bias: gamma_{K+3}(u_fp32) times
//    the sum of |terms| (Higham's bound for any summation order);
//  - activation_roundoff: absolute error of the tanh inside GELU (libm tanhf: a few fp32 ulps;
//    GPU tanh.approx.f32: 2^-10.987 relative); the remaining ~8 fp32 roundings of the GELU
//    formula act on terms bounded by (1 + |x|)^3, so 16 u_fp32 (1 + |x|)^3 bounds them;
//  - the final rounding to c_dtype: u_c |D|.
//  - accumulation_factor: 2 on tensor cores, whose MMA aligns addends by truncation (the bound
//    doubles), 1 for IEEE fp32 FMAs (OpenBLAS).
struct GemmRunErrorModel {
  double operand_roundoff = 0.0;
  double activation_roundoff = 0.0;
  double accumulation_factor = 1.0;
  bool check_relu_mask_bits = true;
};

inline double gamma_of(std::int64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu / (1.0 - nu);
}

// Evaluation error of the GELU forms in fp32 at pre-activation x (0 for the other epilogues).
inline double activation_eval_error(const GemmRunCase& c, double x, std::int64_t aux_index,
                                    const GemmRunErrorModel& model) {
  const double u32 = unit_roundoff(DType::kF32);
  const gemm::RunEpilogue e = c.problem.epilogue;
  if (e == gemm::RunEpilogue::kGelu || e == gemm::RunEpilogue::kBiasGelu ||
      e == gemm::RunEpilogue::kBiasGeluAux) {
    return std::abs(x) * model.activation_roundoff + 16.0 * u32 * std::pow(1.0 + std::abs(x), 3.0);
  }
  if (e == gemm::RunEpilogue::kDGelu || e == gemm::RunEpilogue::kDGeluBgrad) {
    const double pre = c.inputs.aux_preactivation[static_cast<std::size_t>(aux_index)];
    const double dt = 0.5 + std::abs(pre) * (1.0 + 0.14 * pre * pre);  // |d gelu' / d tanh|
    return std::abs(x) *
           (dt * 2.0 * model.activation_roundoff + 16.0 * u32 * std::pow(1.0 + std::abs(pre), 3.0));
  }
  return 0.0;
}

// Bias gradient: the summands' own errors (`summand_tol`) plus fp32 summation over N (or K).
inline void expect_bias_grad_matches(const GemmRunCase& c, const ref::GemmRunOutputs& ref,
                                     const std::vector<float>& bias_grad,
                                     const std::vector<double>& summand_tol,
                                     const GemmRunErrorModel& model) {
  const gemm::RunEpilogue e = c.problem.epilogue;
  const bool from_operand = e == gemm::RunEpilogue::kBgradA || e == gemm::RunEpilogue::kBgradB;
  const std::int64_t terms = from_operand ? c.problem.shape.k : c.problem.shape.n;
  const double gamma = model.accumulation_factor * gamma_of(terms, unit_roundoff(DType::kF32)) +
                       model.operand_roundoff;
  int failures = 0;
  for (std::size_t i = 0; i < ref.bias_grad.size(); ++i) {
    const double tol = summand_tol[i] + gamma * ref.bias_grad_scale[i];
    if (!(std::abs(bias_grad[i] - ref.bias_grad[i]) <= tol) && failures++ < 5) {
      ADD_FAILURE() << "bias_grad[" << i << "]=" << bias_grad[i] << " reference "
                    << ref.bias_grad[i] << " tolerance " << tol;
    }
  }
}

// Compares D (all batches, padding untouched), the aux written, and the bias gradient.
inline void expect_matches_reference(const GemmRunCase& c, const std::vector<std::uint8_t>& d,
                                     const std::vector<std::uint8_t>& aux_out,
                                     const std::vector<float>& bias_grad,
                                     const GemmRunErrorModel& model) {
  const gemm::GemmRunProblem& p = c.problem;
  const gemm::GemmProblem& s = p.shape;
  auto ref = ref::gemm_run(p, c.inputs);
  ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
  const double u32 = unit_roundoff(DType::kF32);
  const double u_c = unit_roundoff(s.c_dtype);
  const double u_op = model.operand_roundoff;
  const double gamma =
      model.accumulation_factor * gamma_of(s.k + 3, u32) + 2.0 * u_op + u_op * u_op;
  const std::size_t c_size = dtype_size_bytes(s.c_dtype);
  const std::int64_t ldc = s.ldc_or_packed();
  std::vector<double> bias_grad_tol(ref->bias_grad.size(), 0.0);
  int failures = 0;
  for (std::int64_t bi = 0; bi < s.batch; ++bi) {
    for (std::int64_t col = 0; col < s.n; ++col) {
      for (std::int64_t row = 0; row < ldc; ++row) {
        const auto di = static_cast<std::size_t>(bi * p.stride_c_or_packed() + row + col * ldc);
        const float got = load_from(s.c_dtype, d.data() + di * c_size);
        if (row >= s.m) {  // padding between m and ldc: never written
          if (got != c.c.values[di] && failures++ < 5)
            ADD_FAILURE() << "padding D[" << row << "," << col << "] changed";
          continue;
        }
        const double x = ref->preactivation[di];
        const double tol_x = gamma * ref->scale[di];
        const std::int64_t aux_index = bi * c.aux_ld * s.n + row + col * c.aux_ld;
        const double eval = activation_eval_error(c, x, aux_index, model);
        // |gelu''| <= 1 bounds the change of the gain between x and the computed pre-activation.
        const double tol_pre_round = (ref->gain[di] + tol_x) * tol_x + eval;
        // Two roundings to the output type: cuBLASLt does not document whether an epilogue sees
        // the fp32 accumulator or the accumulator already rounded to the output type (some
        // kernels round first, e.g. a 64x40-tile dgelu kernel), then the result is rounded again.
        const double tol = tol_pre_round + 2.0 * u_c * std::abs(ref->d[di]);
        if (!(std::abs(got - ref->d[di]) <= tol) && failures++ < 5) {
          ADD_FAILURE() << "D[" << bi << "," << row << "," << col << "]=" << got << " reference "
                        << ref->d[di] << " tolerance " << tol;
        }
        // The bias gradient may be summed from D before or after its rounding: take the larger.
        if (!bias_grad_tol.empty() && p.bias_grad_length() == s.m) bias_grad_tol[row] += tol;
        if (p.epilogue == gemm::RunEpilogue::kBiasReluAux && model.check_relu_mask_bits &&
            std::abs(x) > tol_x) {
          const unsigned bit =
              (aux_out[static_cast<std::size_t>(aux_index / 8)] >> (aux_index % 8)) & 1u;
          if (bit != (x > 0.0 ? 1u : 0u) && failures++ < 5)
            ADD_FAILURE() << "relu mask bit (" << row << "," << col << ")";
        }
        if (p.epilogue == gemm::RunEpilogue::kBiasGeluAux) {
          const double aux =
              load_from(s.c_dtype, aux_out.data() + static_cast<std::size_t>(aux_index) * c_size);
          if (!(std::abs(aux - x) <= tol_x + u_c * std::abs(x)) && failures++ < 5) {
            ADD_FAILURE() << "gelu aux (" << row << "," << col << ")=" << aux << " reference " << x;
          }
        }
      }
    }
  }
  expect_bias_grad_matches(c, *ref, bias_grad, bias_grad_tol, model);
}

}  // namespace parity::testing
