#include "reference/gemm.hpp"

#include <algorithm>
#include <cmath>

namespace parity::ref {

using gemm::GemmLayout;

namespace {
bool a_transposed(const gemm::GemmProblem& p) {
  return p.layout == GemmLayout::kTN || p.layout == GemmLayout::kTT;
}
bool b_transposed(const gemm::GemmProblem& p) {
  return p.layout == GemmLayout::kNT || p.layout == GemmLayout::kTT;
}
// Stored columns of each operand (column-major): A is K x M when transposed else M x K, and so on.
std::int64_t a_columns(const gemm::GemmProblem& p) { return a_transposed(p) ? p.m : p.k; }
std::int64_t b_columns(const gemm::GemmProblem& p) { return b_transposed(p) ? p.k : p.n; }
}  // namespace

std::int64_t gemm_a_index(const gemm::GemmProblem& p, std::int64_t batch_index, std::int64_t row,
                          std::int64_t kk) {
  const std::int64_t lda = p.lda_or_packed();
  const std::int64_t base = batch_index * lda * a_columns(p);
  return base + (a_transposed(p) ? kk + row * lda : row + kk * lda);
}

std::int64_t gemm_b_index(const gemm::GemmProblem& p, std::int64_t batch_index, std::int64_t kk,
                          std::int64_t col) {
  const std::int64_t ldb = p.ldb_or_packed();
  const std::int64_t base = batch_index * ldb * b_columns(p);
  return base + (b_transposed(p) ? col + kk * ldb : kk + col * ldb);
}

std::int64_t gemm_d_index(const gemm::GemmProblem& p, std::int64_t batch_index, std::int64_t row,
                          std::int64_t col) {
  const std::int64_t ldc = p.ldc_or_packed();
  return batch_index * ldc * p.n + row + col * ldc;
}

std::int64_t gemm_a_storage(const gemm::GemmProblem& p) {
  return p.batch * p.lda_or_packed() * a_columns(p);
}
std::int64_t gemm_b_storage(const gemm::GemmProblem& p) {
  return p.batch * p.ldb_or_packed() * b_columns(p);
}
std::int64_t gemm_d_storage(const gemm::GemmProblem& p) { return p.batch * p.ldc_or_packed() * p.n; }

GemmElement gemm_element(const gemm::GemmProblem& p, const ElementAt& a_at, const ElementAt& b_at,
                         const ElementAt& bias_at, std::int64_t batch_index, std::int64_t row,
                         std::int64_t col) {
  GemmElement out;
  for (std::int64_t kk = 0; kk < p.k; ++kk) {
    const double a = a_at(gemm_a_index(p, batch_index, row, kk));
    const double b = b_at(gemm_b_index(p, batch_index, kk, col));
    out.value += a * b;
    out.abs_sum += std::abs(a) * std::abs(b);
  }
  if (p.epilogue == gemm::Epilogue::kBias) {
    const double bias = bias_at(row);
    out.value += bias;
    out.abs_sum += std::abs(bias);
  } else if (p.epilogue == gemm::Epilogue::kRelu) {
    out.value = std::max(0.0, out.value);
  }
  return out;
}

std::vector<GemmElement> gemm(const gemm::GemmProblem& p, const std::vector<float>& a,
                              const std::vector<float>& b, const std::vector<float>& bias) {
  const ElementAt a_at = [&](std::int64_t i) { return static_cast<double>(a[static_cast<std::size_t>(i)]); };
  const ElementAt b_at = [&](std::int64_t i) { return static_cast<double>(b[static_cast<std::size_t>(i)]); };
  const ElementAt bias_at = [&](std::int64_t i) {
    return bias.empty() ? 0.0 : static_cast<double>(bias[static_cast<std::size_t>(i)]);
  };
  std::vector<GemmElement> d(static_cast<std::size_t>(gemm_d_storage(p)));
  for (std::int64_t batch_index = 0; batch_index < p.batch; ++batch_index) {
    for (std::int64_t col = 0; col < p.n; ++col) {
      for (std::int64_t row = 0; row < p.m; ++row) {
        d[static_cast<std::size_t>(gemm_d_index(p, batch_index, row, col))] =
            gemm_element(p, a_at, b_at, bias_at, batch_index, row, col);
      }
    }
  }
  return d;
}

}  // namespace parity::ref
