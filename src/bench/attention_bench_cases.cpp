// `parity bench attention` (include/parity/bench/attention_bench.hpp): the named configurations,
// the overrides of their shapes and the drawn jagged inputs. The timing, the check and the report
// are in attention_bench.cpp.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "parity/attention/attention_op.hpp"
#include "parity/bench/attention_bench.hpp"
#include "parity/core/rng.hpp"

namespace parity::bench {
namespace {

using attention::AttentionKind;
using attention::AttentionProblem;

// The GR benchmark defaults (research memo sec. 2.4): B=512, H=4, d=128, bf16, causal.
AttentionProblem gr_problem(AttentionKind kind, std::int64_t max_seq_len) {
  AttentionProblem p;
  p.kind = kind;
  p.batch = 512;
  p.heads = 4;
  p.dim_qk = 128;
  p.dim_v = 128;
  p.max_seq_len = max_seq_len;
  p.dtype = DType::kBF16;
  return p;
}

AttentionBenchCase make_case(const std::string& config, const std::string& label, AttentionProblem problem,
                             int max_targets, std::int64_t kv_length = 0) {
  AttentionBenchCase c;
  c.config = config;
  c.label = label;
  c.problem = problem;
  c.max_targets = max_targets;
  c.kv_length = kv_length;
  return c;
}

std::vector<AttentionBenchCase> named_cases(const std::string& config) {
  std::vector<AttentionBenchCase> cases;
  const auto n_label = [&](std::int64_t n) { return config + " N=" + std::to_string(n); };
  if (config == "H1" || config == "J1") {
    const AttentionKind kind = config == "H1" ? AttentionKind::kHstu : AttentionKind::kSoftmax;
    for (std::int64_t n : {256, 512, 1024, 2048, 4096}) {
      cases.push_back(make_case(config, n_label(n), gr_problem(kind, n), config == "H1" ? 20 : 0));
    }
  } else if (config == "H2") {
    AttentionProblem p = gr_problem(AttentionKind::kHstu, 8192);
    p.batch = 64;
    cases.push_back(make_case(config, "H2 N=8192", p, 20));
    p.contextual_len = 10;
    cases.push_back(make_case(config, "H2 N=8192 context 10", p, 20));
    p.contextual_len = 0;
    p.max_attn_len = 256;
    p.min_full_attn_len = 32;
    cases.push_back(make_case(config, "H2 N=8192 window 256 min_full 32", p, 20));
  } else if (config == "G1") {
    for (std::int64_t n : {512, 2048}) {
      AttentionProblem p = gr_problem(AttentionKind::kGdpa, n);
      p.activation = attention::PointwiseActivation::kGelu;
      p.causal = false;
      cases.push_back(make_case(config, n_label(n) + " self", p, 0));
      p.cross = true;
      cases.push_back(make_case(config, n_label(n) + " cross 64 keys", p, 0, 64));
    }
  } else if (config == "targets") {
    // Issue 15's target shapes, the same as the measured anchors (baselines/measured).
    for (std::int64_t n : {2048, 4096}) {
      cases.push_back(make_case(config, "hstu N=" + std::to_string(n), gr_problem(AttentionKind::kHstu, n), 20));
    }
    for (std::int64_t n : {2048, 4096}) {
      cases.push_back(make_case(config, "jfa N=" + std::to_string(n), gr_problem(AttentionKind::kSoftmax, n), 0));
    }
  }
  return cases;
}

Status apply_overrides(const AttentionBenchOverrides& o, AttentionBenchCase* c) {
  AttentionProblem& p = c->problem;
  if (!o.kind.empty()) {
    PARITY_ASSIGN_OR_RETURN(p.kind, attention::parse_attention_kind(o.kind));
  }
  if (!o.activation.empty()) {
    PARITY_ASSIGN_OR_RETURN(p.activation, attention::parse_activation(o.activation));
  }
  if (o.batch > 0) p.batch = o.batch;
  if (o.heads > 0) p.heads = o.heads;
  if (o.dim_qk > 0) p.dim_qk = p.dim_v = o.dim_qk;
  if (o.dim_v > 0) p.dim_v = o.dim_v;
  if (!o.dtype.empty()) {
    PARITY_ASSIGN_OR_RETURN(p.dtype, parse_dtype(o.dtype));
    if (p.dtype != DType::kBF16 && p.dtype != DType::kF16) return invalid_argument("--dtype: '", o.dtype, "' is not bf16 or fp16");
  }
  if (o.max_targets >= 0) c->max_targets = o.max_targets;
  if (o.contextual_len >= 0) p.contextual_len = o.contextual_len;
  if (o.max_attn_len >= 0) p.max_attn_len = o.max_attn_len;
  if (o.min_full_attn_len >= 0) p.min_full_attn_len = o.min_full_attn_len;
  if (o.kv_length >= 0) c->kv_length = o.kv_length;
  p.cross = c->kv_length > 0;
  if (o.min_length_fraction >= 0) {
    if (o.min_length_fraction > 1) return invalid_argument("--min-length-fraction: ", o.min_length_fraction, " is above 1");
    c->min_length_fraction = o.min_length_fraction;
  }
  if (o.causal == "true") p.causal = true;
  if (o.causal == "false") p.causal = false;
  if (!o.causal.empty() && o.causal != "true" && o.causal != "false") {
    return invalid_argument("--causal: '", o.causal, "' is not true or false");
  }
  if (o.forward_only) c->time_backward = false;
  if (c->max_targets > 0 && p.kind == AttentionKind::kSoftmax) {
    return invalid_argument("--max-targets: ", c->max_targets, " (targets are an HSTU/GDPA mask; softmax takes none)");
  }
  p.has_num_targets = c->max_targets > 0;
  // validate() wants totals; any consistent pair will do before the lengths are drawn.
  AttentionProblem check = p;
  check.total_q = check.total_kv = 0;
  return check.validate().with_context(c->label);
}

}  // namespace

std::vector<std::string> attention_bench_config_names() { return {"H1", "H2", "J1", "G1", "targets"}; }

Result<std::vector<AttentionBenchCase>> attention_bench_cases(const std::string& config,
                                                              const AttentionBenchOverrides& overrides) {
  std::vector<AttentionBenchCase> cases;
  if (config.empty()) {
    if (overrides.kind.empty()) return invalid_argument("--kind: needed without --config (hstu, softmax, gdpa)");
    const std::vector<std::int64_t> lengths = overrides.seq_lens.empty() ? std::vector<std::int64_t>{2048} : overrides.seq_lens;
    for (std::int64_t n : lengths) {
      cases.push_back(make_case("custom", "custom N=" + std::to_string(n), gr_problem(AttentionKind::kHstu, n), 0));
    }
  } else {
    cases = named_cases(config);
    if (cases.empty()) {
      std::string names;
      for (const auto& name : attention_bench_config_names()) names += (names.empty() ? "" : ", ") + name;
      return invalid_argument("--config: '", config, "' is not one of ", names);
    }
    if (!overrides.seq_lens.empty()) {
      // Keep the configuration's first case as the template for every requested N.
      const AttentionBenchCase first = cases.front();
      cases.clear();
      for (std::int64_t n : overrides.seq_lens) {
        AttentionBenchCase c = first;
        c.problem.max_seq_len = n;
        c.label = config + " N=" + std::to_string(n);
        cases.push_back(c);
      }
    }
  }
  for (auto& c : cases) {
    if (c.problem.max_seq_len < 1) return invalid_argument("--seq-len: ", c.problem.max_seq_len, " must be >= 1");
    PARITY_RETURN_IF_ERROR(apply_overrides(overrides, &c));
  }
  return cases;
}

Result<AttentionBenchInputs> attention_bench_inputs(const AttentionBenchCase& bench_case, std::uint64_t seed) {
  AttentionBenchInputs in;
  in.problem = bench_case.problem;
  const std::int64_t n = in.problem.max_seq_len;
  const auto low = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::ceil(bench_case.min_length_fraction * static_cast<double>(n))));
  const std::int64_t high = std::max<std::int64_t>(low, n - 1);  // U[low, N): N itself is never drawn
  Rng rng(seed);
  const auto batch = static_cast<std::size_t>(in.problem.batch);
  in.q_offsets.assign(batch + 1, 0);
  for (std::size_t b = 0; b < batch; ++b) {
    in.q_lengths.push_back(rng.uniform_int(low, high));
    in.q_offsets[b + 1] = in.q_offsets[b] + in.q_lengths[b];
    if (bench_case.max_targets > 0) in.num_targets.push_back(static_cast<std::int32_t>(rng.uniform_int(1, bench_case.max_targets)));
  }
  in.problem.total_q = in.q_offsets.back();
  in.problem.total_kv = in.problem.total_q;
  if (in.problem.cross) {
    in.kv_lengths.assign(batch, bench_case.kv_length);
    in.kv_offsets.assign(batch + 1, 0);
    for (std::size_t b = 0; b < batch; ++b) in.kv_offsets[b + 1] = in.kv_offsets[b] + bench_case.kv_length;
    in.problem.total_kv = in.kv_offsets.back();
  }
  in.problem.has_num_targets = !in.num_targets.empty();
  PARITY_RETURN_IF_ERROR(attention::check_attention_inputs(in.problem, in.q_offsets.data(),
                                                           in.problem.cross ? in.kv_offsets.data() : nullptr,
                                                           in.num_targets.empty() ? nullptr : in.num_targets.data()));
  return in;
}

}  // namespace parity::bench
