#include "reference/gemm_run.hpp"

#include <cmath>
#include <initializer_list>

namespace parity::ref {

using gemm::GemmLayout;
using gemm::RunEpilogue;

namespace {

struct Dims {
  std::int64_t m, n, k, batch, lda, ldb, ldc, stride_a, stride_b, stride_c;
  bool a_t, b_t;
};

Dims dims_of(const gemm::GemmRunProblem& p) {
  const gemm::GemmProblem& s = p.shape;
  Dims d{};
  d.m = s.m;
  d.n = s.n;
  d.k = s.k;
  d.batch = s.batch;
  d.a_t = s.layout == GemmLayout::kTN || s.layout == GemmLayout::kTT;
  d.b_t = s.layout == GemmLayout::kNT || s.layout == GemmLayout::kTT;
  d.lda = s.lda != 0 ? s.lda : (d.a_t ? s.k : s.m);
  d.ldb = s.ldb != 0 ? s.ldb : (d.b_t ? s.n : s.k);
  d.ldc = s.ldc != 0 ? s.ldc : s.m;
  d.stride_a = p.stride_a != 0 ? p.stride_a : d.lda * (d.a_t ? s.m : s.k);
  d.stride_b = p.stride_b != 0 ? p.stride_b : d.ldb * (d.b_t ? s.k : s.n);
  d.stride_c = p.stride_c != 0 ? p.stride_c : d.ldc * s.n;
  return d;
}

std::int64_t a_at(const Dims& d, std::int64_t bi, std::int64_t row, std::int64_t kk) {
  return bi * d.stride_a + (d.a_t ? kk + row * d.lda : row + kk * d.lda);
}
std::int64_t b_at(const Dims& d, std::int64_t bi, std::int64_t kk, std::int64_t col) {
  return bi * d.stride_b + (d.b_t ? col + kk * d.ldb : kk + col * d.ldb);
}

bool is_one_of(RunEpilogue e, std::initializer_list<RunEpilogue> list) {
  for (RunEpilogue x : list) {
    if (x == e) return true;
  }
  return false;
}

}  // namespace

double gelu_tanh(double x) {
  const double c0 = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(c0 * (x + 0.044715 * x * x * x)));
}

double gelu_tanh_derivative(double x) {
  const double c0 = std::sqrt(2.0 / M_PI);
  const double t = std::tanh(c0 * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c0 * (1.0 + 3.0 * 0.044715 * x * x);
}

namespace {

Status check_inputs(const gemm::GemmRunProblem& p, const Dims& d, const GemmRunInputs& in,
                    std::int64_t aux_ld) {
  const auto need = [](const char* name, std::size_t have, std::int64_t want) -> Status {
    if (static_cast<std::int64_t>(have) < want) {
      return invalid_argument("reference gemm_run: ", name, " has ", have, " elements, needs ",
                              want);
    }
    return Status::ok();
  };
  const RunEpilogue e = p.epilogue;
  PARITY_RETURN_IF_ERROR(
      need("a", in.a.size(), (d.batch - 1) * d.stride_a + d.lda * (d.a_t ? d.m : d.k)));
  PARITY_RETURN_IF_ERROR(
      need("b", in.b.size(), (d.batch - 1) * d.stride_b + d.ldb * (d.b_t ? d.k : d.n)));
  if (in.beta != 0.0) {
    PARITY_RETURN_IF_ERROR(need("c", in.c.size(), (d.batch - 1) * d.stride_c + d.ldc * d.n));
  }
  if (gemm::epilogue_reads_bias(e)) PARITY_RETURN_IF_ERROR(need("bias", in.bias.size(), d.m));
  if (is_one_of(e, {RunEpilogue::kDRelu, RunEpilogue::kDReluBgrad})) {
    PARITY_RETURN_IF_ERROR(need("aux_mask", in.aux_mask.size(), aux_ld * d.n * d.batch / 8));
  }
  if (is_one_of(e, {RunEpilogue::kDGelu, RunEpilogue::kDGeluBgrad})) {
    PARITY_RETURN_IF_ERROR(
        need("aux_preactivation", in.aux_preactivation.size(), aux_ld * d.n * d.batch));
  }
  return Status::ok();
}

struct Activated {
  double value = 0.0;
  double gain = 1.0;
};

// The epilogue's activation of x at element `aux_index` of the aux (mask bits LSB first).
Activated activate(RunEpilogue e, double x, std::int64_t aux_index, const GemmRunInputs& in) {
  if (is_one_of(e, {RunEpilogue::kRelu, RunEpilogue::kBiasRelu, RunEpilogue::kBiasReluAux})) {
    return {x > 0.0 ? x : 0.0, x > 0.0 ? 1.0 : 0.0};
  }
  if (is_one_of(e, {RunEpilogue::kGelu, RunEpilogue::kBiasGelu, RunEpilogue::kBiasGeluAux})) {
    return {gelu_tanh(x), std::abs(gelu_tanh_derivative(x))};
  }
  if (is_one_of(e, {RunEpilogue::kDRelu, RunEpilogue::kDReluBgrad})) {
    const unsigned bit =
        (in.aux_mask[static_cast<std::size_t>(aux_index / 8)] >> (aux_index % 8)) & 1u;
    return {bit != 0 ? x : 0.0, bit != 0 ? 1.0 : 0.0};
  }
  if (is_one_of(e, {RunEpilogue::kDGelu, RunEpilogue::kDGeluBgrad})) {
    const double factor = gelu_tanh_derivative(
        static_cast<double>(in.aux_preactivation[static_cast<std::size_t>(aux_index)]));
    return {x * factor, std::abs(factor)};
  }
  return {x, 1.0};
}

// kBgradA / kBgradB: sums of op(A)'s rows / op(B)'s columns over K (batch is 1).
void operand_bias_grad(const gemm::GemmRunProblem& p, const Dims& d, const GemmRunInputs& in,
                       GemmRunOutputs* out) {
  const bool is_a = p.epilogue == RunEpilogue::kBgradA;
  const std::int64_t length = is_a ? d.m : d.n;
  for (std::int64_t i = 0; i < length; ++i) {
    for (std::int64_t kk = 0; kk < d.k; ++kk) {
      const double v = is_a ? in.a[static_cast<std::size_t>(a_at(d, 0, i, kk))]
                            : in.b[static_cast<std::size_t>(b_at(d, 0, kk, i))];
      out->bias_grad[static_cast<std::size_t>(i)] += v;
      out->bias_grad_scale[static_cast<std::size_t>(i)] += std::abs(v);
    }
  }
}

}  // namespace

Result<GemmRunOutputs> gemm_run(const gemm::GemmRunProblem& p, const GemmRunInputs& in) {
  PARITY_RETURN_IF_ERROR(p.validate());
  const Dims d = dims_of(p);
  const RunEpilogue e = p.epilogue;
  const std::int64_t aux_ld = in.aux_ld != 0 ? in.aux_ld : p.default_aux_ld();
  PARITY_RETURN_IF_ERROR(check_inputs(p, d, in, aux_ld));
  GemmRunOutputs out;
  const auto storage = static_cast<std::size_t>((d.batch - 1) * d.stride_c + d.ldc * d.n);
  out.d.assign(storage, 0.0);
  out.preactivation.assign(storage, 0.0);
  out.scale.assign(storage, 0.0);
  out.gain.assign(storage, 0.0);
  if (e == RunEpilogue::kBiasReluAux) {
    out.aux_mask.assign(static_cast<std::size_t>(aux_ld * d.n * d.batch / 8), 0);
  }
  out.bias_grad.assign(static_cast<std::size_t>(p.bias_grad_length()), 0.0);
  out.bias_grad_scale.assign(out.bias_grad.size(), 0.0);
  const bool has_bias = gemm::epilogue_reads_bias(e);
  for (std::int64_t bi = 0; bi < d.batch; ++bi) {
    for (std::int64_t col = 0; col < d.n; ++col) {
      for (std::int64_t row = 0; row < d.m; ++row) {
        double x = 0.0, scale = 0.0;
        for (std::int64_t kk = 0; kk < d.k; ++kk) {
          const double product =
              in.alpha * static_cast<double>(in.a[static_cast<std::size_t>(a_at(d, bi, row, kk))]) *
              static_cast<double>(in.b[static_cast<std::size_t>(b_at(d, bi, kk, col))]);
          x += product;
          scale += std::abs(product);
        }
        const auto di = static_cast<std::size_t>(bi * d.stride_c + row + col * d.ldc);
        if (in.beta != 0.0) {
          x += in.beta * static_cast<double>(in.c[di]);
          scale += std::abs(in.beta * static_cast<double>(in.c[di]));
        }
        if (has_bias) {
          x += static_cast<double>(in.bias[static_cast<std::size_t>(row)]);
          scale += std::abs(static_cast<double>(in.bias[static_cast<std::size_t>(row)]));
        }
        const std::int64_t aux_index = bi * aux_ld * d.n + row + col * aux_ld;
        const Activated activated = activate(e, x, aux_index, in);
        if (e == RunEpilogue::kBiasReluAux && x > 0.0) {
          auto& byte = out.aux_mask[static_cast<std::size_t>(aux_index / 8)];
          byte = static_cast<std::uint8_t>(byte | (1u << (aux_index % 8)));
        }
        out.d[di] = activated.value;
        out.preactivation[di] = x;
        out.scale[di] = scale;
        out.gain[di] = activated.gain;
        if (is_one_of(e, {RunEpilogue::kDReluBgrad, RunEpilogue::kDGeluBgrad})) {
          out.bias_grad[static_cast<std::size_t>(row)] += activated.value;
          out.bias_grad_scale[static_cast<std::size_t>(row)] += std::abs(activated.value);
        }
      }
    }
  }
  if (e == RunEpilogue::kBgradA || e == RunEpilogue::kBgradB) operand_bias_grad(p, d, in, &out);
  return out;
}

}  // namespace parity::ref
