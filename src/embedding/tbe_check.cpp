// tbe check (include/parity/embedding/tbe_check.hpp): the built-in problem, the comparisons with
// the fp64 reference under derived tolerances, the CPU paths and the report.
//
// Notation: u = unit_roundoff(fp32) = 2^-24; gamma_n = n u / (1 - n u) <= (n + 1) u for the sizes
// here (n <= 2^12). A sum of n fp32 products in any order errs by <= gamma_n sum |terms| (each term
// passes one product and at most n - 1 additions). The GPU's fast sqrt and division are within
// 2 ulp <= 4 u relative (portability.cuh); the bounds use 4 u for both, which covers the CPU's
// correctly rounded ones too.
#include "parity/embedding/tbe_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <cstdio>
#include <sstream>

#include "embedding/tbe_check_problem.hpp"
#include "parity/core/rng.hpp"
#include "parity/embedding/tbe_cpu.hpp"

namespace parity::embedding {
namespace {

const double kU = unit_roundoff(DType::kF32);
constexpr double kApproxOpRoundoffs = 4.0;  // fast sqrt / divide: <= 2 ulp = 4 u
// A tolerance of 0 is exact agreement; the ratio test needs a positive denominator.
constexpr double kTiny = std::numeric_limits<double>::min();

double gamma(double n) { return (n + 1.0) * kU; }

// Keeps the element with the largest err / tol.
void keep_worst(double err, double tol, double* worst_ratio, TbeCheckRow* row) {
  if (err / tol >= *worst_ratio) {
    *worst_ratio = err / tol;
    row->max_err = err;
    row->tolerance = tol;
  }
}

// The derived bound on one updated weight of row-wise Adagrad (m0 = 0, no weight decay), given the
// exact row gradient g_j, its absolute sum G_j, the row's occurrences n and its dim D:
//   gradient   |g^_j - g_j| <= delta_j = gamma_n G_j         (n products psw * grad, n - 1 adds)
//   state      S = sum g_j^2: |S^ - S| <= sum (2|g_j| delta_j + delta_j^2) + gamma_D sum (|g_j| + delta_j)^2
//              m = S / D:     |m^ - m| <= |S^ - S| / D + 2 u m^          (divide or reciprocal-multiply)
//   root       |sqrt m^ - sqrt m| <= |m^ - m| / (sqrt m + sqrt max(m - dm, 0)), then the fast sqrt's
//              4 u and the + eps rounding's u give delta_d on d = sqrt m + eps
//   multiplier mult = lr / d: |mult^ - mult| <= lr delta_d / (d d_lo) + 4 u lr / d_lo, d_lo = max(d - delta_d, eps)
//   step       |w^ - w| <= |mult^ - mult| (|g_j| + delta_j) + mult delta_j + u mult^ (|g_j| + delta_j) + u |w|
struct RowBound {
  double d = 0, d_lo = 0, delta_d = 0;
};

RowBound row_bound(const std::vector<double>& g, const std::vector<double>& abs_g, std::int64_t occurrences, double eps) {
  const double dim = static_cast<double>(g.size());
  double exact_s = 0, error_s = 0, upper_s = 0;
  for (std::size_t j = 0; j < g.size(); ++j) {
    const double delta = gamma(static_cast<double>(occurrences)) * abs_g[j];
    exact_s += g[j] * g[j];
    error_s += 2.0 * std::abs(g[j]) * delta + delta * delta;
    upper_s += (std::abs(g[j]) + delta) * (std::abs(g[j]) + delta);
  }
  error_s += gamma(dim) * upper_s;
  const double m = exact_s / dim;
  const double delta_m = error_s / dim + 2.0 * kU * (upper_s / dim);
  const double root = std::sqrt(m);
  // |sqrt a - sqrt b| = |a - b| / (sqrt a + sqrt b), and <= sqrt |a - b| always.
  double delta_root = std::min(delta_m / std::max(root + std::sqrt(std::max(m - delta_m, 0.0)), kTiny),
                               std::sqrt(delta_m));
  delta_root += kApproxOpRoundoffs * kU * (root + delta_root);
  RowBound b;
  b.d = root + eps;
  b.delta_d = delta_root + kU * (b.d + delta_root);
  b.d_lo = std::max(b.d - b.delta_d, eps * (1.0 - kU));
  return b;
}

}  // namespace

Result<TbeCheckProblem> make_tbe_check_problem(std::uint64_t seed) {
  PARITY_ASSIGN_OR_RETURN(TbeLayout layout,
                          TbeLayout::create({{1000, 4}, {500, 12}, {300, 60}, {200, 132}, {40, 2048}, {3000, 128}}));
  SyntheticBatchOptions options;
  options.batch_size = 64;
  options.pooling_factor = 8;
  options.vary_bag_sizes = true;
  options.empty_bag_fraction = 0.05;
  options.weighted = true;
  options.seed = seed;
  TbeCheckProblem c{TbeProblem{layout}, make_synthetic_batch(layout, options), {}, {}, {}, {}, {}, {}, {}};
  c.problem.batch_size = options.batch_size;
  c.problem.num_indices = static_cast<std::int64_t>(c.batch.indices.size());
  c.problem.has_per_sample_weights = true;
  c.problem.index_dtype = DType::kI32;
  PARITY_RETURN_IF_ERROR(c.problem.validate());
  c.ref_batch = {c.batch.indices, c.batch.offsets, {}};
  for (float w : c.batch.per_sample_weights) c.ref_batch.per_sample_weights.push_back(w);
  c.weights = make_weights(layout, DType::kF32, seed + 1, &c.weights_ref);
  c.indices = pack_indices(c.batch.indices, DType::kI32);
  c.offsets = pack_indices(c.batch.offsets, DType::kI32);
  Rng rng(seed + 2);
  c.grad.resize(static_cast<std::size_t>(c.problem.output_rows() * c.problem.output_cols()));
  for (auto& g : c.grad) g = static_cast<float>(rng.normal());
  c.optimizer.kind = OptimizerKind::kRowwiseAdagrad;
  c.optimizer.learning_rate = 0.05f;
  c.optimizer.eps = 1e-2f;
  return c;
}

// Forward: output element (b, feature f, j) = sum over the bag's L entries of psw * w, so its bound
// is gamma_L sum |psw w| (fp32 weights, psw and output: no other rounding).
TbeCheckRow compare_tbe_forward(const std::string& path, const TbeCheckProblem& c, const std::vector<float>& got) {
  const auto want = ref::tbe_forward(c.problem, c.weights_ref, c.ref_batch);
  std::vector<double> abs_weights(c.weights_ref.size());
  std::transform(c.weights_ref.begin(), c.weights_ref.end(), abs_weights.begin(), [](double v) { return std::abs(v); });
  const auto abs_want = ref::tbe_forward(c.problem, abs_weights, c.ref_batch);  // psw are positive
  const auto& layout = c.problem.layout;
  std::vector<int> feature_of_column(static_cast<std::size_t>(c.problem.output_cols()));
  for (int f = 0; f < layout.num_features(); ++f) {
    for (int j = 0; j < layout.feature_dim(f); ++j) feature_of_column[layout.output_column_offset(f) + j] = f;
  }
  TbeCheckRow row{path, "forward sum", 0, 0};
  double worst_ratio = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto b = static_cast<std::int64_t>(i) / c.problem.output_cols();
    const int f = feature_of_column[static_cast<std::size_t>(static_cast<std::int64_t>(i) % c.problem.output_cols())];
    const std::int64_t bag = f * c.problem.batch_size + b;
    const auto length = static_cast<double>(c.batch.offsets[bag + 1] - c.batch.offsets[bag]);
    keep_worst(std::abs(got[i] - want[i]), gamma(length) * abs_want[i] + kTiny, &worst_ratio, &row);
  }
  return row;
}

// Row-wise Adagrad step: each touched row's bound from row_bound above.
TbeCheckRow compare_tbe_update(const std::string& path, const TbeCheckProblem& c, const std::vector<float>& got_weights) {
  const auto& layout = c.problem.layout;
  const auto& opt = c.optimizer;
  ref::TbeRefTrainingState state{c.weights_ref, std::vector<double>(static_cast<std::size_t>(layout.total_rows()), 0.0), {}};
  const std::vector<double> grad(c.grad.begin(), c.grad.end());
  ref::tbe_backward_fused(c.problem, opt, state, c.ref_batch, grad);
  std::vector<double> abs_grad(grad.size());
  std::transform(grad.begin(), grad.end(), abs_grad.begin(), [](double g) { return std::abs(g); });
  const auto row_g = ref::tbe_row_gradients(c.problem, c.ref_batch, grad);
  const auto row_abs_g = ref::tbe_row_gradients(c.problem, c.ref_batch, abs_grad);
  std::map<std::int64_t, std::int64_t> occurrences;
  for (int f = 0; f < layout.num_features(); ++f) {
    const std::int64_t base = layout.row_base(layout.table_of_feature()[f]);
    for (auto p = c.batch.offsets[f * c.problem.batch_size]; p < c.batch.offsets[(f + 1) * c.problem.batch_size]; ++p) {
      ++occurrences[base + c.batch.indices[p]];
    }
  }
  // Untouched weights must be bit-identical: tolerance u |w| covers only a store's rounding.
  std::vector<double> tol(state.weights.size());
  for (std::size_t i = 0; i < tol.size(); ++i) tol[i] = kU * std::abs(state.weights[i]) + kTiny;
  const double lr = opt.learning_rate;
  for (const auto& [global_row, g] : row_g) {
    int t = 0;
    while (t + 1 < layout.num_tables() && layout.row_base(t + 1) <= global_row) ++t;
    const std::int64_t first = layout.weights_offset(t) + (global_row - layout.row_base(t)) * layout.row_stride(t);
    const auto& abs_g = row_abs_g.at(global_row);
    const std::int64_t n = occurrences[global_row];
    const RowBound rb = row_bound(g, abs_g, n, opt.eps);
    const double mult_error = lr * rb.delta_d / (rb.d * rb.d_lo) + kApproxOpRoundoffs * kU * lr / rb.d_lo;
    for (std::size_t j = 0; j < g.size(); ++j) {
      const double delta = gamma(static_cast<double>(n)) * abs_g[j];
      const double g_upper = std::abs(g[j]) + delta;
      const auto i = static_cast<std::size_t>(first) + j;
      tol[i] = mult_error * g_upper + lr / rb.d * delta + kU * (lr / rb.d_lo) * g_upper +
               kU * std::abs(state.weights[i]) + kTiny;
    }
  }
  TbeCheckRow row{path, "backward + rowwise_adagrad", 0, 0};
  double worst_ratio = 0;
  for (std::size_t i = 0; i < state.weights.size(); ++i) {
    keep_worst(std::abs(got_weights[i] - state.weights[i]), tol[i], &worst_ratio, &row);
  }
  return row;
}

bool TbeCheckReport::all_ok() const {
  return std::all_of(rows.begin(), rows.end(), [](const TbeCheckRow& row) { return row.ok(); });
}

Result<TbeCheckReport> tbe_check_cpu(std::uint64_t seed) {
  PARITY_ASSIGN_OR_RETURN(const TbeCheckProblem c, make_tbe_check_problem(seed));
  TbeCheckReport report;
  std::ostringstream problem;
  problem << "tbe check: " << c.problem.layout.num_tables() << " tables (dims 4..2048), batch " << c.problem.batch_size
          << ", " << c.problem.num_indices << " indices, weighted, int32, seed " << seed;
  report.problem = problem.str();
  std::vector<float> out(static_cast<std::size_t>(c.problem.output_rows() * c.problem.output_cols()));
  const TbeBatchView view{c.indices.data(), c.offsets.data(), c.batch.per_sample_weights.data()};
  PARITY_RETURN_IF_ERROR(cpu::tbe_forward(c.problem, c.weights.data(), view, out.data()));
  report.rows.push_back(compare_tbe_forward("cpu (openmp)", c, out));
  std::vector<float> weights(c.weights_ref.begin(), c.weights_ref.end());
  std::vector<float> state(static_cast<std::size_t>(c.problem.layout.total_rows()), 0.0f);
  PARITY_RETURN_IF_ERROR(cpu::tbe_backward_fused(c.problem, c.optimizer, weights.data(), state.data(), nullptr, view,
                                                 c.grad.data()));
  report.rows.push_back(compare_tbe_update("cpu (openmp)", c, weights));
  // Bounds check in fix mode on one planted out-of-range index.
  auto bad = c.batch.indices;
  bad[5] = c.problem.layout.feature_rows(0) + 7;
  auto packed = pack_indices(bad, DType::kI32);
  auto offsets = c.offsets;
  PARITY_ASSIGN_OR_RETURN(auto bounds, cpu::tbe_bounds_check(c.problem, BoundsCheckMode::kFix, packed.data(), offsets.data()));
  report.notes.push_back("cpu bounds check (fix mode, 1 planted): " + bounds.describe());
  return report;
}

std::string to_text(const TbeCheckReport& report) {
  std::ostringstream out;
  out << report.problem << "\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-14s %-28s %14s %14s  %s\n", "path", "op", "max_abs_err", "tolerance", "result");
  out << line;
  for (const auto& row : report.rows) {
    std::snprintf(line, sizeof(line), "%-14s %-28s %14.3e %14.3e  %s\n", row.path.c_str(), row.op.c_str(), row.max_err,
                  row.tolerance, row.ok() ? "ok" : "FAIL");
    out << line;
  }
  for (const auto& note : report.notes) out << note << "\n";
  return out.str();
}

}  // namespace parity::embedding
