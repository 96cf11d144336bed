// TBE on the CPU with OpenMP: forward parallel over bags; backward sorts (row, position) pairs,
// then applies one optimiser update per unique row, runs in parallel (each run owned by one
// thread, so no two threads touch a row). fp32 accumulation, as the GPU kernels.
#include "parity/embedding/tbe_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

namespace parity::embedding::cpu {
namespace {

float load_element(const void* base, DType t, std::int64_t i) {
  switch (t) {
    case DType::kF16: return fp16_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    case DType::kBF16: return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

void store_element(void* base, DType t, std::int64_t i, float v) {
  switch (t) {
    case DType::kF16: static_cast<std::uint16_t*>(base)[i] = float_to_fp16_bits(v); break;
    case DType::kBF16: static_cast<std::uint16_t*>(base)[i] = float_to_bf16_bits(v); break;
    default: static_cast<float*>(base)[i] = v; break;
  }
}

std::int64_t load_index(const void* base, DType t, std::int64_t i) {
  return t == DType::kI32 ? static_cast<const std::int32_t*>(base)[i] : static_cast<const std::int64_t*>(base)[i];
}

Status check_views(const TbeProblem& problem, const TbeBatchView& batch) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_CHECK_ARG(batch.offsets != nullptr, "tbe: offsets is null");
  PARITY_CHECK_ARG(problem.num_indices == 0 || batch.indices != nullptr, "tbe: indices is null with num_indices=",
                   problem.num_indices);
  PARITY_CHECK_ARG(!problem.has_per_sample_weights || problem.num_indices == 0 || batch.per_sample_weights,
                   "tbe: has_per_sample_weights is set but per_sample_weights is null");
  return Status::ok();
}

// Offsets are trusted here (the bounds check owns their validation); a decreasing pair is an
// empty bag rather than a negative loop.
std::pair<std::int64_t, std::int64_t> bag_range(const TbeProblem& problem, const TbeBatchView& batch,
                                                std::int64_t bag) {
  const std::int64_t start = load_index(batch.offsets, problem.index_dtype, bag);
  const std::int64_t end = load_index(batch.offsets, problem.index_dtype, bag + 1);
  return {start, std::max(start, end)};
}

struct Occurrence {
  std::int64_t global_row;
  std::int64_t position;
  std::int64_t bag;
};

// All (row, position, bag) triples sorted by row then position: a fixed aggregation order.
std::vector<Occurrence> sorted_occurrences(const TbeProblem& problem, const TbeBatchView& batch) {
  const auto& layout = problem.layout;
  std::vector<Occurrence> occ;
  occ.reserve(static_cast<std::size_t>(problem.num_indices));
  for (std::int64_t bag = 0; bag < problem.num_bags(); ++bag) {
    const int f = static_cast<int>(bag / problem.batch_size);
    const auto [start, end] = bag_range(problem, batch, bag);
    const std::int64_t base = layout.row_base(layout.table_of_feature()[f]);
    for (std::int64_t p = start; p < end; ++p) {
      occ.push_back({base + load_index(batch.indices, problem.index_dtype, p), p, bag});
    }
  }
  std::stable_sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) {
    return a.global_row < b.global_row || (a.global_row == b.global_row && a.position < b.position);
  });
  return occ;
}

// Sums the gradient of the run occ[begin, end) (one global row) into `grad` (dim floats).
void aggregate_run(const TbeProblem& problem, const TbeBatchView& batch, const float* grad_output,
                   const std::vector<Occurrence>& occ, std::size_t begin, std::size_t end, int dim,
                   float* grad) {
  const auto& layout = problem.layout;
  const std::int64_t cols = problem.output_cols();
  std::fill(grad, grad + dim, 0.0f);
  for (std::size_t k = begin; k < end; ++k) {
    const Occurrence& o = occ[k];
    const int f = static_cast<int>(o.bag / problem.batch_size);
    const std::int64_t b = o.bag % problem.batch_size;
    float scale = problem.has_per_sample_weights ? batch.per_sample_weights[o.position] : 1.0f;
    if (problem.pooling == PoolingMode::kMean) {
      const auto [start, stop] = bag_range(problem, batch, o.bag);
      scale /= static_cast<float>(stop - start);
    }
    const float* g = problem.pooling == PoolingMode::kNone
                         ? grad_output + o.position * cols
                         : grad_output + b * cols + layout.output_column_offset(f);
    for (int j = 0; j < dim; ++j) grad[j] += scale * g[j];
  }
}

}  // namespace

Status tbe_forward(const TbeProblem& problem, const void* weights, const TbeBatchView& batch, void* output) {
  PARITY_RETURN_IF_ERROR(check_views(problem, batch));
  const auto& layout = problem.layout;
  const std::int64_t cols = problem.output_cols();
  const std::int64_t num_bags = problem.num_bags();
#pragma omp parallel
  {
    std::vector<float> acc(static_cast<std::size_t>(layout.max_dim()));
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t bag = 0; bag < num_bags; ++bag) {
      const int f = static_cast<int>(bag / problem.batch_size);
      const std::int64_t b = bag % problem.batch_size;
      const int dim = layout.feature_dim(f);
      const std::int64_t table_offset = layout.weights_offset(layout.table_of_feature()[f]);
      const std::int64_t row_stride = layout.feature_row_stride(f);
      const auto [start, end] = bag_range(problem, batch, bag);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (std::int64_t p = start; p < end; ++p) {
        const float w = problem.has_per_sample_weights ? batch.per_sample_weights[p] : 1.0f;
        const std::int64_t row = table_offset + load_index(batch.indices, problem.index_dtype, p) * row_stride;
        if (problem.pooling == PoolingMode::kNone) {
          for (int j = 0; j < dim; ++j) {
            store_element(output, problem.output_dtype, p * cols + j,
                          w * load_element(weights, problem.weight_dtype, row + j));
          }
        } else {
          for (int j = 0; j < dim; ++j) acc[j] += w * load_element(weights, problem.weight_dtype, row + j);
        }
      }
      if (problem.pooling == PoolingMode::kNone) continue;
      const float scale = problem.pooling == PoolingMode::kMean && end > start
                              ? 1.0f / static_cast<float>(end - start) : 1.0f;
      const std::int64_t out_base = b * cols + layout.output_column_offset(f);
      for (int j = 0; j < dim; ++j) store_element(output, problem.output_dtype, out_base + j, acc[j] * scale);
    }
  }
  return Status::ok();
}

Status tbe_backward_dense(const TbeProblem& problem, const TbeBatchView& batch, const float* grad_output,
                          std::vector<std::int64_t>* unique_rows, std::vector<float>* grads) {
  PARITY_RETURN_IF_ERROR(check_views(problem, batch));
  PARITY_CHECK_ARG(unique_rows != nullptr && grads != nullptr, "tbe_backward_dense: null output");
  const auto& layout = problem.layout;
  const auto occ = sorted_occurrences(problem, batch);
  std::vector<std::size_t> run_starts;
  for (std::size_t k = 0; k < occ.size(); ++k) {
    if (k == 0 || occ[k].global_row != occ[k - 1].global_row) run_starts.push_back(k);
  }
  run_starts.push_back(occ.size());
  const std::int64_t num_runs = static_cast<std::int64_t>(run_starts.size()) - 1;
  const int max_dim = layout.max_dim();
  unique_rows->assign(static_cast<std::size_t>(num_runs), 0);
  grads->assign(static_cast<std::size_t>(num_runs * max_dim), 0.0f);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t r = 0; r < num_runs; ++r) {
    const auto& first = occ[run_starts[r]];
    const int dim = layout.feature_dim(static_cast<int>(first.bag / problem.batch_size));
    (*unique_rows)[r] = first.global_row;
    aggregate_run(problem, batch, grad_output, occ, run_starts[r], run_starts[r + 1], dim,
                  grads->data() + r * max_dim);
  }
  return Status::ok();
}

Status tbe_backward_fused(const TbeProblem& problem, const OptimizerParams& opt, void* weights, float* state1,
                          float* state2, const TbeBatchView& batch, const float* grad_output) {
  PARITY_RETURN_IF_ERROR(opt.validate());
  std::vector<std::int64_t> rows;
  std::vector<float> grads;
  PARITY_RETURN_IF_ERROR(tbe_backward_dense(problem, batch, grad_output, &rows, &grads));
  const auto& layout = problem.layout;
  const int max_dim = layout.max_dim();
  const DType wt = problem.weight_dtype;
  const auto num_rows = static_cast<std::int64_t>(rows.size());
  const float lr = opt.learning_rate, eps = opt.eps, wd = opt.weight_decay;
  const float c1 = 1.0f - static_cast<float>(std::pow(opt.beta1, static_cast<double>(opt.step)));
  const float c2 = 1.0f - static_cast<float>(std::pow(opt.beta2, static_cast<double>(opt.step)));
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t r = 0; r < num_rows; ++r) {
    const std::int64_t global_row = rows[r];
    const auto it = std::upper_bound(layout.row_bases().begin(), layout.row_bases().end(), global_row);
    const int t = static_cast<int>(it - layout.row_bases().begin()) - 1;
    const int dim = layout.tables()[t].dim;
    const std::int64_t base = layout.weights_offset(t) + (global_row - layout.row_base(t)) * layout.row_stride(t);
    const float* g = grads.data() + r * max_dim;
    switch (opt.kind) {
      case OptimizerKind::kSgd:
        for (int j = 0; j < dim; ++j) store_element(weights, wt, base + j, load_element(weights, wt, base + j) - lr * g[j]);
        break;
      case OptimizerKind::kAdagrad:
        for (int j = 0; j < dim; ++j) {
          float& m = state1[base + j];
          m += g[j] * g[j];
          store_element(weights, wt, base + j, load_element(weights, wt, base + j) - lr * g[j] / (std::sqrt(m) + eps));
        }
        break;
      case OptimizerKind::kRowwiseAdagrad: {
        float sum_sq = 0.0f;
        for (int j = 0; j < dim; ++j) {
          float gj = g[j];
          if (opt.weight_decay_mode == WeightDecayMode::kL2) gj += wd * load_element(weights, wt, base + j);
          sum_sq += gj * gj;
        }
        float& m = state1[global_row];
        m += sum_sq / static_cast<float>(dim);
        const float mult = lr / (std::sqrt(m) + eps);
        float corr = 1.0f;
        if (opt.weight_decay_mode == WeightDecayMode::kL2) corr = 1.0f - mult * wd;
        if (opt.weight_decay_mode == WeightDecayMode::kDecoupled) corr = 1.0f - lr * wd;
        float norm_sq = 0.0f;
        for (int j = 0; j < dim; ++j) {
          const float w = load_element(weights, wt, base + j);
          const float gj = opt.weight_decay_mode == WeightDecayMode::kL2 ? g[j] + wd * w : g[j];
          const float updated = corr * w - mult * gj;
          norm_sq += updated * updated;
          store_element(weights, wt, base + j, updated);
        }
        if (opt.max_norm > 0.0f && std::sqrt(norm_sq) > opt.max_norm) {
          const float scale = opt.max_norm / std::sqrt(norm_sq);
          for (int j = 0; j < dim; ++j) store_element(weights, wt, base + j, load_element(weights, wt, base + j) * scale);
        }
        break;
      }
      case OptimizerKind::kAdam:
        for (int j = 0; j < dim; ++j) {
          float& m = state1[base + j];
          float& v = state2[base + j];
          m = opt.beta1 * m + (1.0f - opt.beta1) * g[j];
          v = opt.beta2 * v + (1.0f - opt.beta2) * g[j] * g[j];
          const float w = load_element(weights, wt, base + j);
          store_element(weights, wt, base + j, w - lr * ((m / c1) / (std::sqrt(v / c2) + eps) + wd * w));
        }
        break;
    }
  }
  return Status::ok();
}

Result<BoundsCheckReport> tbe_bounds_check(const TbeProblem& problem, BoundsCheckMode mode, void* indices,
                                           void* offsets) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  BoundsCheckReport report;
  if (mode == BoundsCheckMode::kOff) return report;
  PARITY_CHECK_ARG(offsets != nullptr, "tbe_bounds_check: offsets is null");
  const std::int64_t n = problem.num_indices;
  const std::int64_t num_bags = problem.num_bags();
  const DType it = problem.index_dtype;
  auto store_index = [&](void* base, std::int64_t i, std::int64_t v) {
    if (it == DType::kI32) {
      static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v);
    } else {
      static_cast<std::int64_t*>(base)[i] = v;
    }
  };
  std::vector<std::int64_t> effective(static_cast<std::size_t>(num_bags + 1));
  std::int64_t running = 0;
  for (std::int64_t i = 0; i <= num_bags; ++i) {
    const std::int64_t o = load_index(offsets, it, i);
    const bool bad = o < 0 || o > n || (i > 0 && o < load_index(offsets, it, i - 1)) || (i == num_bags && o != n);
    if (bad && report.bad_offsets++ == 0) {
      report.has_bad_offset = true;
      report.first_bad_offset_position = i;
      report.first_bad_offset_value = o;
    }
    running = std::max(running, std::clamp<std::int64_t>(o, 0, n));
    effective[i] = i == num_bags ? n : running;
  }
  report.last_offset_fixed = load_index(offsets, it, num_bags) != n;
  const auto& layout = problem.layout;
  // First bad entry: a serial scan that stops at it, before any index is repaired.
  for (std::int64_t bag = 0; bag < num_bags && !report.has_bad_index; ++bag) {
    const int f = static_cast<int>(bag / problem.batch_size);
    for (std::int64_t p = effective[bag]; p < effective[bag + 1]; ++p) {
      const std::int64_t idx = load_index(indices, it, p);
      if (idx >= 0 && idx < layout.feature_rows(f)) continue;
      report.has_bad_index = true;
      report.first_bad_feature = f;
      report.first_bad_table = layout.table_of_feature()[f];
      report.first_bad_bag = bag % problem.batch_size;
      report.first_bad_position = p;
      report.first_bad_value = idx;
      report.first_bad_table_rows = layout.feature_rows(f);
      break;
    }
  }
  std::int64_t bad_total = 0;
  if (report.has_bad_index) {
#pragma omp parallel for reduction(+ : bad_total) schedule(static)
    for (std::int64_t bag = 0; bag < num_bags; ++bag) {
      const std::int64_t rows = layout.feature_rows(static_cast<int>(bag / problem.batch_size));
      for (std::int64_t p = effective[bag]; p < effective[bag + 1]; ++p) {
        const std::int64_t idx = load_index(indices, it, p);
        if (idx >= 0 && idx < rows) continue;
        ++bad_total;
        if (mode == BoundsCheckMode::kFix) store_index(indices, p, 0);
      }
    }
  }
  report.bad_indices = bad_total;
  if (mode == BoundsCheckMode::kFix) {
    for (std::int64_t i = 0; i <= num_bags; ++i) store_index(offsets, i, effective[i]);
  }
  return report;
}

}  // namespace parity::embedding::cpu
