// OpenMP CPU path of jagged attention (src/attention/attention_cpu.hpp). Inputs are widened to
// fp32 once, work is split into (sequence, head, tile of rows) items, sums run in fp32, results
// are rounded once to the output dtype. The backward runs two passes so no item writes another's
// rows (no atomics, deterministic): rows of q give dq, tiles of kv columns give dk and dv.
#include "attention/attention_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace parity::attention::cpu {
namespace {

std::vector<float> widen(const void* data, DType dtype, std::int64_t count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  const auto* bits = static_cast<const std::uint16_t*>(data);
  for (std::int64_t i = 0; i < count; ++i) {
    values[static_cast<std::size_t>(i)] =
        dtype == DType::kBF16 ? bf16_bits_to_float(bits[i]) : fp16_bits_to_float(bits[i]);
  }
  return values;
}

void store(void* data, DType dtype, std::int64_t index, float value) {
  static_cast<std::uint16_t*>(data)[index] = dtype == DType::kBF16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
}

float act(PointwiseActivation kind, float x) {
  switch (kind) {
    case PointwiseActivation::kSilu: return x / (1.0f + std::exp(-x));
    case PointwiseActivation::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
    case PointwiseActivation::kRelu: return std::max(x, 0.0f);
    case PointwiseActivation::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
  }
  return 0.0f;
}

float act_grad(PointwiseActivation kind, float x) {
  switch (kind) {
    case PointwiseActivation::kSilu: {
      const float sig = 1.0f / (1.0f + std::exp(-x));
      return sig + x * sig * (1.0f - sig);
    }
    case PointwiseActivation::kGelu:
      return 0.5f * (1.0f + std::erf(x * 0.70710678f)) + x * 0.39894228f * std::exp(-0.5f * x * x);
    case PointwiseActivation::kRelu: return x > 0.0f ? 1.0f : 0.0f;
    case PointwiseActivation::kSigmoid: {
      const float sig = 1.0f / (1.0f + std::exp(-x));
      return sig * (1.0f - sig);
    }
  }
  return 0.0f;
}

// The mask of one sequence with the position ids precomputed (docs/attention.md, "Masks").
class SequenceMask {
 public:
  SequenceMask(const AttentionProblem& problem, std::int64_t q_length, std::int64_t targets) : problem_(problem) {
    limit_ = problem.kind == AttentionKind::kSoftmax ? std::min(q_length, problem.max_seq_len) : q_length;
    if (problem.cross) return;
    const std::int64_t context = problem.contextual_len;
    max_id_ = context > 0 ? limit_ - context + 1 : limit_;
    if (problem.has_num_targets) max_id_ -= targets;
    ids_.resize(static_cast<std::size_t>(limit_));
    for (std::int64_t p = 0; p < limit_; ++p) {
      std::int64_t id = context > 0 ? std::max<std::int64_t>(p - context + 1, 0) : p;
      if (problem.has_num_targets) id = std::min(id, max_id_);
      ids_[static_cast<std::size_t>(p)] = id;
    }
  }
  // Rows and columns past the softmax truncation take no part.
  std::int64_t limit() const { return limit_; }
  bool valid(std::int64_t i, std::int64_t j) const {
    if (problem_.cross) return problem_.kind != AttentionKind::kSoftmax || (i < limit_ && j < problem_.max_seq_len);
    if (i >= limit_ || j >= limit_) return false;
    const std::int64_t id_i = ids_[static_cast<std::size_t>(i)];
    const std::int64_t id_j = ids_[static_cast<std::size_t>(j)];
    const std::int64_t distance = problem_.causal ? id_i - id_j : std::abs(id_i - id_j);
    bool ok = i == j || distance > 0;
    if (problem_.max_attn_len > 0 && distance > problem_.max_attn_len) {
      ok = ok && problem_.min_full_attn_len > 0 && id_i >= max_id_ - problem_.min_full_attn_len;
    }
    if (problem_.contextual_len > 0 && id_i == 0 && id_j < max_id_) ok = true;
    return ok;
  }

 private:
  const AttentionProblem& problem_;
  std::int64_t limit_ = 0;
  std::int64_t max_id_ = 0;
  std::vector<std::int64_t> ids_;
};

// Where one sequence's rows of q and of k/v start, and how many there are.
struct SequenceRows {
  std::int64_t q_begin, q_length, kv_begin, kv_length;
};

struct WorkItem {
  std::int64_t sequence;
  int head;
  std::int64_t begin, end;  // rows (or kv columns) of the sequence, local positions
};

// Items over the rows of q (by_kv = false) or of kv (by_kv = true) of every sequence and head.
std::vector<WorkItem> work_items(const AttentionProblem& problem, const std::int64_t* q_offsets,
                                 const std::int64_t* kv_offsets, bool by_kv) {
  std::vector<WorkItem> items;
  const std::int64_t* offsets = by_kv ? kv_offsets : q_offsets;
  for (std::int64_t b = 0; b < problem.batch; ++b) {
    const std::int64_t length = offsets[b + 1] - offsets[b];
    for (int h = 0; h < problem.heads; ++h) {
      for (std::int64_t begin = 0; begin < length; begin += kRowTile) {
        items.push_back(WorkItem{b, h, begin, std::min(begin + kRowTile, length)});
      }
    }
  }
  return items;
}

// fp32 copies of the inputs and the per-pass geometry shared by forward and backward.
struct Context {
  const AttentionProblem& problem;
  const std::int64_t* q_offsets;
  const std::int64_t* kv_offsets;
  const std::int32_t* num_targets;
  std::vector<float> q, k, v;
  float alpha;
  float inv_n;

  Context(const AttentionProblem& p, const AttentionForwardArgs& args)
      : problem(p),
        q_offsets(args.q_offsets),
        kv_offsets(p.cross ? args.kv_offsets : args.q_offsets),
        num_targets(args.num_targets),
        q(widen(args.q, p.dtype, p.total_q * p.heads * p.dim_qk)),
        k(widen(args.k, p.dtype, p.total_kv * p.heads * p.dim_qk)),
        v(widen(args.v, p.dtype, p.total_kv * p.heads * p.dim_v)),
        alpha(p.effective_alpha()),
        inv_n(1.0f / static_cast<float>(p.max_seq_len)) {}

  SequenceRows rows(std::int64_t b) const {
    return SequenceRows{q_offsets[b], q_offsets[b + 1] - q_offsets[b], kv_offsets[b], kv_offsets[b + 1] - kv_offsets[b]};
  }
  SequenceMask mask(std::int64_t b) const {
    return SequenceMask(problem, q_offsets[b + 1] - q_offsets[b], num_targets != nullptr ? num_targets[b] : 0);
  }
  const float* q_row(std::int64_t row, int h) const { return &q[static_cast<std::size_t>((row * problem.heads + h) * problem.dim_qk)]; }
  const float* k_row(std::int64_t row, int h) const { return &k[static_cast<std::size_t>((row * problem.heads + h) * problem.dim_qk)]; }
  const float* v_row(std::int64_t row, int h) const { return &v[static_cast<std::size_t>((row * problem.heads + h) * problem.dim_v)]; }
  float score(std::int64_t q_row_index, std::int64_t kv_row_index, int h) const {
    const float* a = q_row(q_row_index, h);
    const float* b = k_row(kv_row_index, h);
    float dot = 0.0f;
    for (int x = 0; x < problem.dim_qk; ++x) dot += a[x] * b[x];
    return alpha * dot;
  }
};

float dot(const float* a, const float* b, int dim) {
  float sum = 0.0f;
  for (int x = 0; x < dim; ++x) sum += a[x] * b[x];
  return sum;
}

void forward_item(const Context& c, const AttentionForwardArgs& args, const WorkItem& item) {
  const AttentionProblem& p = c.problem;
  const SequenceMask mask = c.mask(item.sequence);
  const auto [q_begin, q_length, kv_begin, kv_length] = c.rows(item.sequence);
  const bool softmax = p.kind == AttentionKind::kSoftmax;
  std::vector<float> acc(static_cast<std::size_t>(p.dim_v));
  std::vector<float> scores(static_cast<std::size_t>(kv_length));
  std::vector<char> is_valid(static_cast<std::size_t>(kv_length));
  for (std::int64_t i = item.begin; i < item.end; ++i) {
    const std::int64_t row = q_begin + i;
    std::fill(acc.begin(), acc.end(), 0.0f);
    float max_score = -std::numeric_limits<float>::infinity();
    bool has_keys = false;
    for (std::int64_t j = 0; j < kv_length; ++j) {
      const auto at = static_cast<std::size_t>(j);
      is_valid[at] = mask.valid(i, j) ? 1 : 0;
      if (!is_valid[at]) continue;
      scores[at] = c.score(row, kv_begin + j, item.head);
      max_score = std::max(max_score, scores[at]);
      has_keys = true;
    }
    float denominator = 0.0f;
    for (std::int64_t j = 0; j < kv_length; ++j) {
      if (!is_valid[static_cast<std::size_t>(j)]) continue;
      const float s = scores[static_cast<std::size_t>(j)];
      const float weight = softmax ? std::exp(s - max_score) : act(p.activation, s) * c.inv_n;
      denominator += weight;
      const float* value = c.v_row(kv_begin + j, item.head);
      for (int y = 0; y < p.dim_v; ++y) acc[static_cast<std::size_t>(y)] += weight * value[y];
    }
    const float scale = softmax ? (has_keys ? 1.0f / denominator : 0.0f) : 1.0f;
    for (int y = 0; y < p.dim_v; ++y) {
      store(args.out, p.dtype, (row * p.heads + item.head) * p.dim_v + y, acc[static_cast<std::size_t>(y)] * scale);
    }
    if (softmax) {
      args.softmax_lse[row * p.heads + item.head] =
          has_keys ? max_score + std::log(denominator) : -std::numeric_limits<float>::infinity();
    }
  }
}

// Backward of one (row i, key j) pair: the weight a_ij (or p_ij) and d loss / d score.
struct PairGrad {
  float weight, grad_score;
};

struct BackwardContext : Context {
  std::vector<float> grad_out;
  std::vector<float> row_delta;  // softmax: D_i = grad_out_i . out_i, per (row, head)
  const float* lse;

  BackwardContext(const AttentionProblem& p, const AttentionBackwardArgs& args)
      : Context(p, args.forward), grad_out(widen(args.grad_out, p.dtype, p.total_q * p.heads * p.dim_v)),
        lse(args.forward.softmax_lse) {
    if (p.kind != AttentionKind::kSoftmax) return;
    const std::vector<float> out = widen(args.forward.out, p.dtype, p.total_q * p.heads * p.dim_v);
    row_delta.resize(static_cast<std::size_t>(p.total_q * p.heads));
    for (std::int64_t r = 0; r < p.total_q * p.heads; ++r) {
      row_delta[static_cast<std::size_t>(r)] = dot(&grad_out[static_cast<std::size_t>(r * p.dim_v)],
                                                   &out[static_cast<std::size_t>(r * p.dim_v)], p.dim_v);
    }
  }
  const float* grad_row(std::int64_t row, int h) const {
    return &grad_out[static_cast<std::size_t>((row * problem.heads + h) * problem.dim_v)];
  }
  PairGrad pair(std::int64_t row, std::int64_t key, int h) const {
    const float s = score(row, key, h);
    const float dp = dot(grad_row(row, h), v_row(key, h), problem.dim_v);
    if (problem.kind == AttentionKind::kSoftmax) {
      const auto at = static_cast<std::size_t>(row * problem.heads + h);
      const float weight = std::exp(s - lse[at]);
      return PairGrad{weight, weight * (dp - row_delta[at])};
    }
    return PairGrad{act(problem.activation, s) * inv_n, dp * act_grad(problem.activation, s) * inv_n};
  }
};

void grad_q_item(const BackwardContext& c, const AttentionBackwardArgs& args, const WorkItem& item) {
  const AttentionProblem& p = c.problem;
  const SequenceMask mask = c.mask(item.sequence);
  const auto [q_begin, q_length, kv_begin, kv_length] = c.rows(item.sequence);
  std::vector<float> acc(static_cast<std::size_t>(p.dim_qk));
  for (std::int64_t i = item.begin; i < item.end; ++i) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (std::int64_t j = 0; j < kv_length; ++j) {
      if (!mask.valid(i, j)) continue;
      const float grad_score = c.pair(q_begin + i, kv_begin + j, item.head).grad_score * c.alpha;
      const float* key = c.k_row(kv_begin + j, item.head);
      for (int x = 0; x < p.dim_qk; ++x) acc[static_cast<std::size_t>(x)] += grad_score * key[x];
    }
    for (int x = 0; x < p.dim_qk; ++x) {
      store(args.grad_q, p.dtype, ((q_begin + i) * p.heads + item.head) * p.dim_qk + x, acc[static_cast<std::size_t>(x)]);
    }
  }
}

void grad_kv_item(const BackwardContext& c, const AttentionBackwardArgs& args, const WorkItem& item) {
  const AttentionProblem& p = c.problem;
  const SequenceMask mask = c.mask(item.sequence);
  const auto [q_begin, q_length, kv_begin, kv_length] = c.rows(item.sequence);
  std::vector<float> acc_k(static_cast<std::size_t>(p.dim_qk));
  std::vector<float> acc_v(static_cast<std::size_t>(p.dim_v));
  for (std::int64_t j = item.begin; j < item.end; ++j) {
    std::fill(acc_k.begin(), acc_k.end(), 0.0f);
    std::fill(acc_v.begin(), acc_v.end(), 0.0f);
    for (std::int64_t i = 0; i < q_length; ++i) {
      if (!mask.valid(i, j)) continue;
      const PairGrad g = c.pair(q_begin + i, kv_begin + j, item.head);
      const float* query = c.q_row(q_begin + i, item.head);
      const float* grad = c.grad_row(q_begin + i, item.head);
      for (int x = 0; x < p.dim_qk; ++x) acc_k[static_cast<std::size_t>(x)] += g.grad_score * c.alpha * query[x];
      for (int y = 0; y < p.dim_v; ++y) acc_v[static_cast<std::size_t>(y)] += g.weight * grad[y];
    }
    const std::int64_t key_row = (kv_begin + j) * p.heads + item.head;
    for (int x = 0; x < p.dim_qk; ++x) store(args.grad_k, p.dtype, key_row * p.dim_qk + x, acc_k[static_cast<std::size_t>(x)]);
    for (int y = 0; y < p.dim_v; ++y) store(args.grad_v, p.dtype, key_row * p.dim_v + y, acc_v[static_cast<std::size_t>(y)]);
  }
}

}  // namespace

Status forward(const AttentionProblem& problem, const AttentionForwardArgs& args) {
  const Context c(problem, args);
  const std::vector<WorkItem> items = work_items(problem, c.q_offsets, c.kv_offsets, false);
  const auto count = static_cast<std::int64_t>(items.size());
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t n = 0; n < count; ++n) forward_item(c, args, items[static_cast<std::size_t>(n)]);
  return Status::ok();
}

Status backward(const AttentionProblem& problem, const AttentionBackwardArgs& args) {
  const BackwardContext c(problem, args);
  const std::vector<WorkItem> row_items = work_items(problem, c.q_offsets, c.kv_offsets, false);
  const std::vector<WorkItem> column_items = work_items(problem, c.q_offsets, c.kv_offsets, true);
  const auto row_count = static_cast<std::int64_t>(row_items.size());
  const auto column_count = static_cast<std::int64_t>(column_items.size());
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t n = 0; n < row_count; ++n) grad_q_item(c, args, row_items[static_cast<std::size_t>(n)]);
#pragma omp parallel for schedule(dynamic)
  for (std::int64_t n = 0; n < column_count; ++n) grad_kv_item(c, args, column_items[static_cast<std::size_t>(n)]);
  return Status::ok();
}

}  // namespace parity::attention::cpu
