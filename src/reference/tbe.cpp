// fp64 TBE reference: plain loops (see tbe.hpp).
#include "reference/tbe.hpp"

#include <algorithm>
#include <cmath>

namespace parity::ref {

using embedding::BoundsCheckMode;
using embedding::BoundsCheckReport;
using embedding::OptimizerKind;
using embedding::OptimizerParams;
using embedding::PoolingMode;
using embedding::TbeProblem;
using embedding::WeightDecayMode;

std::vector<double> tbe_forward(const TbeProblem& problem, const std::vector<double>& weights,
                                const TbeRefBatch& batch) {
  const auto& layout = problem.layout;
  const std::int64_t cols = problem.output_cols();
  std::vector<double> out(static_cast<std::size_t>(problem.output_rows() * cols), 0.0);
  const bool weighted = !batch.per_sample_weights.empty();
  for (int f = 0; f < layout.num_features(); ++f) {
    const int t = layout.table_of_feature()[f];
    const int dim = layout.feature_dim(f);
    for (std::int64_t b = 0; b < problem.batch_size; ++b) {
      const std::int64_t bag = f * problem.batch_size + b;
      const std::int64_t start = batch.offsets[bag];
      const std::int64_t end = batch.offsets[bag + 1];
      for (std::int64_t p = start; p < end; ++p) {
        const double w = weighted ? batch.per_sample_weights[p] : 1.0;
        const std::int64_t row = layout.weights_offset(t) + batch.indices[p] * layout.row_stride(t);
        for (int j = 0; j < dim; ++j) {
          const double v = w * weights[row + j];
          if (problem.pooling == PoolingMode::kNone) {
            out[p * cols + j] = v;
          } else {
            out[b * cols + layout.output_column_offset(f) + j] += v;
          }
        }
      }
      // Mean of an empty bag stays 0 (factor 1, as FBGEMM).
      if (problem.pooling == PoolingMode::kMean && end > start) {
        for (int j = 0; j < dim; ++j) {
          out[b * cols + layout.output_column_offset(f) + j] /= static_cast<double>(end - start);
        }
      }
    }
  }
  return out;
}

std::map<std::int64_t, std::vector<double>> tbe_row_gradients(const TbeProblem& problem,
                                                              const TbeRefBatch& batch,
                                                              const std::vector<double>& grad_output) {
  const auto& layout = problem.layout;
  const std::int64_t cols = problem.output_cols();
  const bool weighted = !batch.per_sample_weights.empty();
  std::map<std::int64_t, std::vector<double>> grads;
  for (int f = 0; f < layout.num_features(); ++f) {
    const int t = layout.table_of_feature()[f];
    const int dim = layout.feature_dim(f);
    for (std::int64_t b = 0; b < problem.batch_size; ++b) {
      const std::int64_t bag = f * problem.batch_size + b;
      const std::int64_t start = batch.offsets[bag];
      const std::int64_t end = batch.offsets[bag + 1];
      for (std::int64_t p = start; p < end; ++p) {
        double scale = weighted ? batch.per_sample_weights[p] : 1.0;
        if (problem.pooling == PoolingMode::kMean) scale /= static_cast<double>(end - start);
        auto& g = grads[layout.row_base(t) + batch.indices[p]];
        g.resize(static_cast<std::size_t>(dim), 0.0);
        for (int j = 0; j < dim; ++j) {
          const double go = problem.pooling == PoolingMode::kNone
                                ? grad_output[p * cols + j]
                                : grad_output[b * cols + layout.output_column_offset(f) + j];
          g[j] += scale * go;
        }
      }
    }
  }
  return grads;
}

void tbe_backward_fused(const TbeProblem& problem, const OptimizerParams& opt, TbeRefTrainingState& state,
                        const TbeRefBatch& batch, const std::vector<double>& grad_output) {
  const auto& layout = problem.layout;
  const auto grads = tbe_row_gradients(problem, batch, grad_output);
  const double lr = opt.learning_rate, eps = opt.eps, wd = opt.weight_decay;
  for (const auto& [global_row, g] : grads) {
    int t = 0;
    while (layout.row_base(t + 1) <= global_row) ++t;
    const std::int64_t r = global_row - layout.row_base(t);
    const int dim = layout.tables()[t].dim;
    const std::int64_t base = layout.weights_offset(t) + r * layout.row_stride(t);
    double* w = &state.weights[base];
    switch (opt.kind) {
      case OptimizerKind::kSgd:
        for (int j = 0; j < dim; ++j) w[j] -= lr * g[j];
        break;
      case OptimizerKind::kAdagrad:
        for (int j = 0; j < dim; ++j) {
          double& m = state.state1[base + j];
          m += g[j] * g[j];
          w[j] -= lr * g[j] / (std::sqrt(m) + eps);
        }
        break;
      case OptimizerKind::kRowwiseAdagrad: {
        // g' = g + wd*w only for L2; M += mean(g'^2); w = corr*w - mult*g'.
        double sum_sq = 0.0;
        std::vector<double> gp(g);
        for (int j = 0; j < dim; ++j) {
          if (opt.weight_decay_mode == WeightDecayMode::kL2) gp[j] += wd * w[j];
          sum_sq += gp[j] * gp[j];
        }
        double& m = state.state1[global_row];
        m += sum_sq / dim;
        const double mult = lr / (std::sqrt(m) + eps);
        double corr = 1.0;
        if (opt.weight_decay_mode == WeightDecayMode::kL2) corr = 1.0 - mult * wd;
        if (opt.weight_decay_mode == WeightDecayMode::kDecoupled) corr = 1.0 - lr * wd;
        for (int j = 0; j < dim; ++j) w[j] = corr * w[j] - mult * gp[j];
        if (opt.max_norm > 0.0f) {
          double norm = 0.0;
          for (int j = 0; j < dim; ++j) norm += w[j] * w[j];
          norm = std::sqrt(norm);
          if (norm > opt.max_norm) {
            for (int j = 0; j < dim; ++j) w[j] *= opt.max_norm / norm;
          }
        }
        break;
      }
      case OptimizerKind::kAdam: {
        const double b1 = opt.beta1, b2 = opt.beta2;
        const double c1 = 1.0 - std::pow(b1, static_cast<double>(opt.step));
        const double c2 = 1.0 - std::pow(b2, static_cast<double>(opt.step));
        for (int j = 0; j < dim; ++j) {
          double& m = state.state1[base + j];
          double& v = state.state2[base + j];
          m = b1 * m + (1.0 - b1) * g[j];
          v = b2 * v + (1.0 - b2) * g[j] * g[j];
          w[j] -= lr * ((m / c1) / (std::sqrt(v / c2) + eps) + wd * w[j]);
        }
        break;
      }
    }
  }
}

BoundsCheckReport tbe_bounds_check(const TbeProblem& problem, BoundsCheckMode mode,
                                   std::vector<std::int64_t>& indices, std::vector<std::int64_t>& offsets) {
  BoundsCheckReport report;
  if (mode == BoundsCheckMode::kOff) return report;
  const auto& layout = problem.layout;
  const std::int64_t n = problem.num_indices;
  const std::int64_t num_bags = problem.num_bags();
  // Offsets: each entry outside [0, N], below its predecessor, or a last entry != N is bad.
  for (std::int64_t i = 0; i <= num_bags; ++i) {
    const std::int64_t o = offsets[i];
    const bool bad = o < 0 || o > n || (i > 0 && o < offsets[i - 1]) || (i == num_bags && o != n);
    if (!bad) continue;
    if (report.bad_offsets == 0) {
      report.has_bad_offset = true;
      report.first_bad_offset_position = i;
      report.first_bad_offset_value = o;
    }
    ++report.bad_offsets;
  }
  report.last_offset_fixed = offsets[num_bags] != n;
  // The effective offsets every consumer sees: clamped, running max, last = N.
  std::vector<std::int64_t> effective(offsets.size());
  std::int64_t running = 0;
  for (std::int64_t i = 0; i < num_bags; ++i) {
    running = std::max(running, std::clamp<std::int64_t>(offsets[i], 0, n));
    effective[i] = running;
  }
  effective[num_bags] = n;
  for (int f = 0; f < layout.num_features(); ++f) {
    const std::int64_t rows = layout.feature_rows(f);
    for (std::int64_t b = 0; b < problem.batch_size; ++b) {
      const std::int64_t bag = f * problem.batch_size + b;
      for (std::int64_t p = effective[bag]; p < effective[bag + 1]; ++p) {
        const std::int64_t idx = indices[p];
        if (idx >= 0 && idx < rows) continue;
        if (!report.has_bad_index || p < report.first_bad_position) {
          report.has_bad_index = true;
          report.first_bad_feature = f;
          report.first_bad_table = layout.table_of_feature()[f];
          report.first_bad_bag = b;
          report.first_bad_position = p;
          report.first_bad_value = idx;
          report.first_bad_table_rows = rows;
        }
        ++report.bad_indices;
        if (mode == BoundsCheckMode::kFix) indices[p] = 0;
      }
    }
  }
  if (mode == BoundsCheckMode::kFix) offsets = effective;
  return report;
}

}  // namespace parity::ref
