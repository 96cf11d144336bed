// fp64 jagged attention reference (src/reference/attention_ref.hpp). Deliberately naive: every
// (b, h, i, j) is visited and the mask is evaluated from its definition for each pair.
#include "reference/attention_ref.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace parity::ref {
namespace {

using attention::AttentionKind;
using attention::AttentionProblem;
using attention::PointwiseActivation;

double activation(PointwiseActivation kind, double x) {
  switch (kind) {
    case PointwiseActivation::kSilu: return x / (1.0 + std::exp(-x));
    case PointwiseActivation::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case PointwiseActivation::kRelu: return x > 0 ? x : 0.0;
    case PointwiseActivation::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
  }
  return 0.0;
}

double activation_derivative(PointwiseActivation kind, double x) {
  const double sigmoid = 1.0 / (1.0 + std::exp(-x));
  switch (kind) {
    case PointwiseActivation::kSilu: return sigmoid * (1.0 + x * (1.0 - sigmoid));
    case PointwiseActivation::kGelu: {
      const double pi = 3.14159265358979323846;
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * pi);
    }
    case PointwiseActivation::kRelu: return x > 0 ? 1.0 : 0.0;
    case PointwiseActivation::kSigmoid: return sigmoid * (1.0 - sigmoid);
  }
  return 0.0;
}

Status check_sizes(const AttentionProblem& problem, const AttentionRefInputs& in) {
  const auto rows_q = static_cast<std::size_t>(problem.total_q * problem.heads);
  const auto rows_kv = static_cast<std::size_t>(problem.total_kv * problem.heads);
  if (in.q.size() != rows_q * problem.dim_qk) return invalid_argument("q: ", in.q.size(), " elements, expected ", rows_q * problem.dim_qk);
  if (in.k.size() != rows_kv * problem.dim_qk) return invalid_argument("k: ", in.k.size(), " elements, expected ", rows_kv * problem.dim_qk);
  if (in.v.size() != rows_kv * problem.dim_v) return invalid_argument("v: ", in.v.size(), " elements, expected ", rows_kv * problem.dim_v);
  if (in.q_offsets.size() != static_cast<std::size_t>(problem.batch + 1)) {
    return invalid_argument("q_offsets: ", in.q_offsets.size(), " entries, expected batch + 1 = ", problem.batch + 1);
  }
  if (!in.kv_offsets.empty() && in.kv_offsets.size() != in.q_offsets.size()) {
    return invalid_argument("kv_offsets: ", in.kv_offsets.size(), " entries, expected batch + 1 = ", problem.batch + 1);
  }
  if (!in.num_targets.empty() && in.num_targets.size() != static_cast<std::size_t>(problem.batch)) {
    return invalid_argument("num_targets: ", in.num_targets.size(), " entries, expected batch = ", problem.batch);
  }
  return attention::check_attention_inputs(problem, in.q_offsets.data(),
                                           in.kv_offsets.empty() ? nullptr : in.kv_offsets.data(),
                                           in.num_targets.empty() ? nullptr : in.num_targets.data());
}

// One sequence's geometry: row starts and lengths of q and kv, and its target count.
struct Sequence {
  std::int64_t q_begin, q_length, kv_begin, kv_length, targets;
};

Sequence sequence(const AttentionProblem& problem, const AttentionRefInputs& in, std::int64_t b) {
  const auto& kv = in.kv_offsets.empty() ? in.q_offsets : in.kv_offsets;
  const auto ub = static_cast<std::size_t>(b);
  return Sequence{in.q_offsets[ub], in.q_offsets[ub + 1] - in.q_offsets[ub], kv[ub], kv[ub + 1] - kv[ub],
                  problem.has_num_targets ? in.num_targets[ub] : 0};
}

double score(const AttentionProblem& problem, const AttentionRefInputs& in, std::int64_t q_row, std::int64_t kv_row,
             int h) {
  double dot = 0;
  for (int x = 0; x < problem.dim_qk; ++x) {
    dot += in.q[static_cast<std::size_t>((q_row * problem.heads + h) * problem.dim_qk + x)] *
           in.k[static_cast<std::size_t>((kv_row * problem.heads + h) * problem.dim_qk + x)];
  }
  return static_cast<double>(problem.effective_alpha()) * dot;
}

double dot_rows(const std::vector<double>& a, const std::vector<double>& b, std::int64_t row_a, std::int64_t row_b,
                int heads, int h, int dim) {
  double sum = 0;
  for (int x = 0; x < dim; ++x) {
    sum += a[static_cast<std::size_t>((row_a * heads + h) * dim + x)] * b[static_cast<std::size_t>((row_b * heads + h) * dim + x)];
  }
  return sum;
}

// Natural-log sum of exp(score) over the valid keys of row i; -inf when there are none.
double row_lse(const AttentionProblem& problem, const AttentionRefInputs& in, const Sequence& s, std::int64_t i, int h) {
  double max_score = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < s.kv_length; ++j) {
    if (attention_mask_ref(problem, s.q_length, s.kv_length, s.targets, i, j)) {
      max_score = std::max(max_score, score(problem, in, s.q_begin + i, s.kv_begin + j, h));
    }
  }
  if (max_score == -std::numeric_limits<double>::infinity()) return max_score;
  double sum = 0;
  for (std::int64_t j = 0; j < s.kv_length; ++j) {
    if (attention_mask_ref(problem, s.q_length, s.kv_length, s.targets, i, j)) {
      sum += std::exp(score(problem, in, s.q_begin + i, s.kv_begin + j, h) - max_score);
    }
  }
  return max_score + std::log(sum);
}

}  // namespace

bool attention_mask_ref(const AttentionProblem& problem, std::int64_t q_length, std::int64_t kv_length,
                        std::int64_t num_targets, std::int64_t i, std::int64_t j) {
  (void)kv_length;
  std::int64_t length = q_length;
  if (problem.kind == AttentionKind::kSoftmax) {
    // Softmax attention sees each sequence truncated to its first max_seq_len rows.
    if (i >= problem.max_seq_len || j >= problem.max_seq_len) return false;
    length = std::min(length, problem.max_seq_len);
  }
  if (problem.cross) return true;  // validate() allows no position mask with cross-attention
  // Positions become ids: the contextual prefix shares id 0, targets share the first target id.
  const std::int64_t context = problem.contextual_len;
  std::int64_t id_i = i;
  std::int64_t id_j = j;
  std::int64_t max_id = length;
  if (context > 0) {
    id_i = std::max<std::int64_t>(i - context + 1, 0);
    id_j = std::max<std::int64_t>(j - context + 1, 0);
    max_id = length - context + 1;
  }
  if (problem.has_num_targets) {
    max_id -= num_targets;
    id_i = std::min(id_i, max_id);
    id_j = std::min(id_j, max_id);
  }
  std::int64_t distance = id_i - id_j;
  if (!problem.causal) distance = std::abs(distance);
  bool valid = (i == j) || distance > 0;
  if (problem.max_attn_len > 0) {
    const bool in_window = distance <= problem.max_attn_len;
    const bool keeps_full = problem.min_full_attn_len > 0 && id_i >= max_id - problem.min_full_attn_len;
    valid = valid && (in_window || keeps_full);
  }
  if (context > 0) valid = valid || (id_i == 0 && id_j < max_id);  // contextual rows see every non-target
  return valid;
}

Status attention_forward_ref_row(const AttentionProblem& problem, const AttentionRefInputs& in, std::int64_t b,
                                 std::int64_t i, std::vector<double>* out_row, std::vector<double>* lse_row) {
  const int heads = problem.heads;
  const int dim_v = problem.dim_v;
  const bool softmax = problem.kind == AttentionKind::kSoftmax;
  const Sequence s = sequence(problem, in, b);
  out_row->assign(static_cast<std::size_t>(heads * dim_v), 0.0);
  lse_row->assign(static_cast<std::size_t>(heads), -std::numeric_limits<double>::infinity());
  const std::int64_t row = s.q_begin + i;
  for (int h = 0; h < heads; ++h) {
    const double row_lse_value = softmax ? row_lse(problem, in, s, i, h) : 0.0;
    (*lse_row)[static_cast<std::size_t>(h)] = row_lse_value;
    for (std::int64_t j = 0; j < s.kv_length; ++j) {
      if (!attention_mask_ref(problem, s.q_length, s.kv_length, s.targets, i, j)) continue;
      const double x = score(problem, in, row, s.kv_begin + j, h);
      const double weight =
          softmax ? std::exp(x - row_lse_value) : activation(problem.activation, x) / static_cast<double>(problem.max_seq_len);
      for (int y = 0; y < dim_v; ++y) {
        (*out_row)[static_cast<std::size_t>(h * dim_v + y)] +=
            weight * in.v[static_cast<std::size_t>(((s.kv_begin + j) * heads + h) * dim_v + y)];
      }
    }
  }
  return Status::ok();
}

Status attention_forward_ref(const AttentionProblem& problem, const AttentionRefInputs& in, std::vector<double>* out,
                             std::vector<double>* lse) {
  PARITY_RETURN_IF_ERROR(check_sizes(problem, in));
  const auto row_size = static_cast<std::size_t>(problem.heads * problem.dim_v);
  const bool softmax = problem.kind == AttentionKind::kSoftmax;
  out->assign(static_cast<std::size_t>(problem.total_q) * row_size, 0.0);
  lse->clear();
  if (softmax) lse->assign(static_cast<std::size_t>(problem.total_q * problem.heads), 0.0);
  std::vector<double> out_row, lse_row;
  for (std::int64_t b = 0; b < problem.batch; ++b) {
    const Sequence s = sequence(problem, in, b);
    for (std::int64_t i = 0; i < s.q_length; ++i) {
      PARITY_RETURN_IF_ERROR(attention_forward_ref_row(problem, in, b, i, &out_row, &lse_row));
      const auto row = static_cast<std::size_t>(s.q_begin + i);
      std::copy(out_row.begin(), out_row.end(), out->begin() + static_cast<std::ptrdiff_t>(row * row_size));
      if (softmax) {
        std::copy(lse_row.begin(), lse_row.end(), lse->begin() + static_cast<std::ptrdiff_t>(row * problem.heads));
      }
    }
  }
  return Status::ok();
}

Status attention_backward_ref(const AttentionProblem& problem, const AttentionRefInputs& in,
                              const std::vector<double>& grad_out, std::vector<double>* grad_q,
                              std::vector<double>* grad_k, std::vector<double>* grad_v) {
  PARITY_RETURN_IF_ERROR(check_sizes(problem, in));
  const int heads = problem.heads;
  const int dim_qk = problem.dim_qk;
  const int dim_v = problem.dim_v;
  if (grad_out.size() != static_cast<std::size_t>(problem.total_q * heads * dim_v)) {
    return invalid_argument("grad_out: ", grad_out.size(), " elements, expected ", problem.total_q * heads * dim_v);
  }
  const bool softmax = problem.kind == AttentionKind::kSoftmax;
  const double alpha = problem.effective_alpha();
  const auto n_scale = static_cast<double>(problem.max_seq_len);
  grad_q->assign(in.q.size(), 0.0);
  grad_k->assign(in.k.size(), 0.0);
  grad_v->assign(in.v.size(), 0.0);
  for (std::int64_t b = 0; b < problem.batch; ++b) {
    const Sequence s = sequence(problem, in, b);
    for (int h = 0; h < heads; ++h) {
      for (std::int64_t i = 0; i < s.q_length; ++i) {
        const std::int64_t row = s.q_begin + i;
        const double lse_i = softmax ? row_lse(problem, in, s, i, h) : 0.0;
        // Softmax: D_i = sum_j p_ij * (grad_out_i . v_j), the row's share subtracted from each dp.
        double d_i = 0;
        for (std::int64_t j = 0; softmax && j < s.kv_length; ++j) {
          if (!attention_mask_ref(problem, s.q_length, s.kv_length, s.targets, i, j)) continue;
          const double p = std::exp(score(problem, in, row, s.kv_begin + j, h) - lse_i);
          d_i += p * dot_rows(grad_out, in.v, row, s.kv_begin + j, heads, h, dim_v);
        }
        for (std::int64_t j = 0; j < s.kv_length; ++j) {
          if (!attention_mask_ref(problem, s.q_length, s.kv_length, s.targets, i, j)) continue;
          const std::int64_t key = s.kv_begin + j;
          const double x = score(problem, in, row, key, h);
          const double dp = dot_rows(grad_out, in.v, row, key, heads, h, dim_v);
          double weight = 0;
          double grad_score = 0;  // d loss / d (alpha q.k)
          if (softmax) {
            weight = std::exp(x - lse_i);
            grad_score = weight * (dp - d_i);
          } else {
            weight = activation(problem.activation, x) / n_scale;
            grad_score = dp * activation_derivative(problem.activation, x) / n_scale;
          }
          for (int y = 0; y < dim_v; ++y) {
            (*grad_v)[static_cast<std::size_t>((key * heads + h) * dim_v + y)] +=
                weight * grad_out[static_cast<std::size_t>((row * heads + h) * dim_v + y)];
          }
          for (int x_index = 0; x_index < dim_qk; ++x_index) {
            const auto q_at = static_cast<std::size_t>((row * heads + h) * dim_qk + x_index);
            const auto k_at = static_cast<std::size_t>((key * heads + h) * dim_qk + x_index);
            (*grad_q)[q_at] += alpha * grad_score * in.k[k_at];
            (*grad_k)[k_at] += alpha * grad_score * in.q[q_at];
          }
        }
      }
    }
  }
  return Status::ok();
}

}  // namespace parity::ref
