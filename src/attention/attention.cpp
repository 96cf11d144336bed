// AttentionProblem::validate, the host-side argument check, names and the useful-FLOP model
// (include/parity/attention/attention.hpp).
#include "parity/attention/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace parity::attention {
namespace {

constexpr int kMaxHeads = 1024;
constexpr int kMaxHeadDim = 256;
// Keeps rows * heads * dim element counts and byte offsets far inside int64.
constexpr std::int64_t kMaxRows = std::int64_t{1} << 36;

Status check_range(const char* name, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high) return invalid_argument(name, ": ", value, " is out of range [", low, ", ", high, "]");
  return Status::ok();
}

Status check_offsets(const char* name, const std::int64_t* offsets, std::int64_t batch, std::int64_t total) {
  if (offsets == nullptr) return invalid_argument(name, ": null (", batch + 1, " offsets expected)");
  if (offsets[0] != 0) return invalid_argument(name, "[0]: ", offsets[0], " (must be 0)");
  for (std::int64_t b = 0; b < batch; ++b) {
    if (offsets[b + 1] < offsets[b]) {
      return invalid_argument(name, "[", b + 1, "]: ", offsets[b + 1], " is below ", name, "[", b, "] = ", offsets[b],
                              " (offsets must not decrease)");
    }
  }
  if (offsets[batch] != total) {
    return invalid_argument(name, "[", batch, "]: ", offsets[batch], " does not match the tensor rows ", total);
  }
  return Status::ok();
}

}  // namespace

float AttentionProblem::effective_alpha() const {
  return alpha != 0.0f ? alpha : 1.0f / std::sqrt(static_cast<float>(dim_qk));
}

Status AttentionProblem::validate() const {
  if (kind != AttentionKind::kHstu && kind != AttentionKind::kSoftmax && kind != AttentionKind::kGdpa) {
    return invalid_argument("kind: ", static_cast<int>(kind), " is not an AttentionKind");
  }
  if (static_cast<int>(activation) > static_cast<int>(PointwiseActivation::kSigmoid)) {
    return invalid_argument("activation: ", static_cast<int>(activation), " is not a PointwiseActivation");
  }
  PARITY_RETURN_IF_ERROR(check_range("batch", batch, 1, std::numeric_limits<std::int32_t>::max()));
  PARITY_RETURN_IF_ERROR(check_range("heads", heads, 1, kMaxHeads));
  PARITY_RETURN_IF_ERROR(check_range("dim_qk", dim_qk, 1, kMaxHeadDim));
  PARITY_RETURN_IF_ERROR(check_range("dim_v", dim_v, 1, kMaxHeadDim));
  PARITY_RETURN_IF_ERROR(check_range("total_q", total_q, 0, kMaxRows));
  PARITY_RETURN_IF_ERROR(check_range("total_kv", total_kv, 0, kMaxRows));
  if (!cross && total_kv != total_q) {
    return invalid_argument("total_kv: ", total_kv, " differs from total_q ", total_q, " in self-attention (cross = false)");
  }
  PARITY_RETURN_IF_ERROR(check_range("max_seq_len", max_seq_len, 1, kMaxRows));
  PARITY_RETURN_IF_ERROR(check_range("contextual_len", contextual_len, 0, std::numeric_limits<int>::max()));
  PARITY_RETURN_IF_ERROR(check_range("max_attn_len", max_attn_len, 0, std::numeric_limits<int>::max()));
  PARITY_RETURN_IF_ERROR(check_range("min_full_attn_len", min_full_attn_len, 0, std::numeric_limits<int>::max()));
  if (min_full_attn_len > 0 && max_attn_len == 0) {
    return invalid_argument("min_full_attn_len: ", min_full_attn_len, " needs a window (max_attn_len > 0)");
  }
  if (cross) {
    // Cross-attention (GDPA with few keys) has no shared positions between q and kv, so the
    // position masks are undefined for it.
    if (causal) return invalid_argument("causal: true is not defined for cross-attention (cross = true)");
    if (has_num_targets) return invalid_argument("has_num_targets: true is not defined for cross-attention");
    if (contextual_len != 0) return invalid_argument("contextual_len: ", contextual_len, " must be 0 for cross-attention");
    if (max_attn_len != 0) return invalid_argument("max_attn_len: ", max_attn_len, " must be 0 for cross-attention");
  }
  if (!std::isfinite(alpha)) return invalid_argument("alpha: ", alpha, " is not finite");
  if (dtype != DType::kBF16 && dtype != DType::kF16) {
    return invalid_argument("dtype: ", dtype_name(dtype), " is not supported (bf16 or fp16)");
  }
  return Status::ok();
}

std::string_view attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kHstu: return "hstu";
    case AttentionKind::kSoftmax: return "softmax";
    case AttentionKind::kGdpa: return "gdpa";
  }
  return "unknown";
}

Result<AttentionKind> parse_attention_kind(std::string_view text) {
  if (text == "hstu") return AttentionKind::kHstu;
  if (text == "softmax" || text == "jfa") return AttentionKind::kSoftmax;
  if (text == "gdpa") return AttentionKind::kGdpa;
  return invalid_argument("kind: '", text, "' is not hstu, softmax (jfa) or gdpa");
}

std::string_view activation_name(PointwiseActivation activation) {
  switch (activation) {
    case PointwiseActivation::kSilu: return "silu";
    case PointwiseActivation::kGelu: return "gelu";
    case PointwiseActivation::kRelu: return "relu";
    case PointwiseActivation::kSigmoid: return "sigmoid";
  }
  return "unknown";
}

Result<PointwiseActivation> parse_activation(std::string_view text) {
  if (text == "silu") return PointwiseActivation::kSilu;
  if (text == "gelu") return PointwiseActivation::kGelu;
  if (text == "relu") return PointwiseActivation::kRelu;
  if (text == "sigmoid") return PointwiseActivation::kSigmoid;
  return invalid_argument("activation: '", text, "' is not silu, gelu, relu or sigmoid");
}

Status check_attention_inputs(const AttentionProblem& problem, const std::int64_t* q_offsets,
                              const std::int64_t* kv_offsets, const std::int32_t* num_targets) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(check_offsets("q_offsets", q_offsets, problem.batch, problem.total_q));
  if (problem.cross) {
    PARITY_RETURN_IF_ERROR(check_offsets("kv_offsets", kv_offsets, problem.batch, problem.total_kv));
  } else if (kv_offsets != nullptr && kv_offsets != q_offsets) {
    for (std::int64_t b = 0; b <= problem.batch; ++b) {
      if (kv_offsets[b] != q_offsets[b]) {
        return invalid_argument("kv_offsets[", b, "]: ", kv_offsets[b], " differs from q_offsets[", b, "] = ",
                                q_offsets[b], " in self-attention (cross = false)");
      }
    }
  }
  if (problem.has_num_targets && num_targets == nullptr) {
    return invalid_argument("num_targets: null while has_num_targets is true");
  }
  if (!problem.has_num_targets && num_targets != nullptr) {
    return invalid_argument("num_targets: given while has_num_targets is false");
  }
  if (num_targets != nullptr) {
    for (std::int64_t b = 0; b < problem.batch; ++b) {
      if (num_targets[b] < 0) return invalid_argument("num_targets[", b, "]: ", num_targets[b], " is negative");
    }
  }
  if (problem.kind != AttentionKind::kSoftmax) {
    const std::int64_t* offsets_list[2] = {q_offsets, problem.cross ? kv_offsets : q_offsets};
    const char* names[2] = {"q_offsets", "kv_offsets"};
    for (int which = 0; which < 2; ++which) {
      for (std::int64_t b = 0; b < problem.batch; ++b) {
        const std::int64_t length = offsets_list[which][b + 1] - offsets_list[which][b];
        if (length > problem.max_seq_len) {
          return invalid_argument(names[which], ": sequence ", b, " has length ", length, " > max_seq_len ",
                                  problem.max_seq_len, " (", attention_kind_name(problem.kind),
                                  " divides by max_seq_len, so it must cover every sequence)");
        }
      }
    }
  }
  return Status::ok();
}

std::vector<std::int64_t> lengths_from_offsets(const std::int64_t* offsets, std::int64_t batch) {
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(std::max<std::int64_t>(batch, 0)));
  for (std::int64_t b = 0; b < batch; ++b) lengths[static_cast<std::size_t>(b)] = offsets[b + 1] - offsets[b];
  return lengths;
}

AttentionFlops useful_flops(const AttentionProblem& problem, const std::vector<std::int64_t>& q_lengths,
                            const std::vector<std::int64_t>& kv_lengths) {
  const bool truncates = problem.kind == AttentionKind::kSoftmax;
  auto effective = [&](std::int64_t n) {
    return static_cast<double>(truncates ? std::min(n, problem.max_seq_len) : n);
  };
  double pairs = 0;
  for (std::size_t b = 0; b < q_lengths.size(); ++b) {
    const double n_q = effective(q_lengths[b]);
    const double n_kv = kv_lengths.empty() ? n_q : effective(kv_lengths[b]);
    pairs += (problem.causal && !problem.cross) ? n_q * n_q / 2.0 : n_q * n_kv;
  }
  const double f1 = 2.0 * problem.heads * problem.dim_qk * pairs;
  const double f2 = 2.0 * problem.heads * problem.dim_v * pairs;
  return AttentionFlops{f1 + f2, 3.0 * f1 + 2.0 * f2};
}

namespace {

// Positions [begin, end) of a sequence, clipped to [0, limit).
struct Interval {
  std::int64_t begin, end;
  std::int64_t size() const { return std::max<std::int64_t>(end - begin, 0); }
  std::int64_t overlap_with_prefix(std::int64_t prefix) const { return Interval{begin, std::min(end, prefix)}.size(); }
};

}  // namespace

std::int64_t masked_pairs(const AttentionProblem& problem, std::int64_t q_length, std::int64_t kv_length,
                          std::int64_t num_targets) {
  const bool truncates = problem.kind == AttentionKind::kSoftmax;
  const std::int64_t n = truncates ? std::min(q_length, problem.max_seq_len) : q_length;
  if (problem.cross) return n * (truncates ? std::min(kv_length, problem.max_seq_len) : kv_length);
  // Ids never decrease with the position, so every id condition selects a run of positions:
  // {j : id_j < x} = [0, first(x)), found by binary search.
  const std::int64_t context = problem.contextual_len;
  std::int64_t max_id = context > 0 ? n - context + 1 : n;
  if (problem.has_num_targets) max_id -= num_targets;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t p = 0; p < n; ++p) {
    std::int64_t id = context > 0 ? std::max<std::int64_t>(p - context + 1, 0) : p;
    ids[static_cast<std::size_t>(p)] = problem.has_num_targets ? std::min(id, max_id) : id;
  }
  auto first = [&](std::int64_t id) {  // first position whose id is >= id
    return static_cast<std::int64_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  const std::int64_t window = problem.max_attn_len;
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t id_i = ids[static_cast<std::size_t>(i)];
    const bool full_row = problem.min_full_attn_len > 0 && id_i >= max_id - problem.min_full_attn_len;
    const bool windowed = window > 0 && !full_row;
    // Off-diagonal keys of the main rule (distance > 0, within the window), as two intervals.
    const Interval same{first(id_i), first(id_i + 1)};
    const Interval below{windowed ? first(id_i - window) : 0, same.begin};
    const Interval above = problem.causal ? Interval{0, 0} : Interval{same.end, windowed ? first(id_i + window + 1) : n};
    const Interval diagonal{i, i + 1};
    std::int64_t count = below.size() + above.size() + 1;
    if (context > 0 && id_i == 0) {
      // Union with the contextual row's keys [0, first(max_id)).
      const std::int64_t prefix = first(max_id);
      count += prefix - below.overlap_with_prefix(prefix) - above.overlap_with_prefix(prefix) -
               diagonal.overlap_with_prefix(prefix);
    }
    pairs += count;
  }
  return pairs;
}

AttentionFlops masked_flops(const AttentionProblem& problem, const std::vector<std::int64_t>& q_lengths,
                            const std::vector<std::int64_t>& kv_lengths, const std::vector<std::int32_t>& num_targets) {
  double pairs = 0;
  for (std::size_t b = 0; b < q_lengths.size(); ++b) {
    const std::int64_t kv = kv_lengths.empty() ? q_lengths[b] : kv_lengths[b];
    pairs += static_cast<double>(masked_pairs(problem, q_lengths[b], kv, num_targets.empty() ? 0 : num_targets[b]));
  }
  const double f1 = 2.0 * problem.heads * problem.dim_qk * pairs;
  const double f2 = 2.0 * problem.heads * problem.dim_v * pairs;
  return AttentionFlops{f1 + f2, 3.0 * f1 + 2.0 * f2};
}

}  // namespace parity::attention
