// `parity bench attention`: jagged attention (HSTU, softmax / JFA, GDPA) on the GPU, named
// configurations H1, H2, J1, G1 and `targets` or a free shape (parity/bench/attention_bench.hpp
// does the work). Arguments are validated first (exit 2), then the device is required (exit 3).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "device_support.hpp"
#include "flags.hpp"
#include "parity/bench/attention_bench.hpp"

namespace parity::cli {
namespace {

struct BenchAttentionArgs {
  std::string config;
  bench::AttentionBenchOverrides overrides;
  bench::TimingSettings timing;
  int checked_rows = 8;
  std::string out;
  std::uint64_t seed = 1;
  std::vector<std::string> forward_variants;
  std::vector<std::string> backward_variants;
};

Status bench_attention(const BenchAttentionArgs& args) {
  bench::AttentionBenchRequest request;
  PARITY_ASSIGN_OR_RETURN(request.cases, bench::attention_bench_cases(args.config, args.overrides));
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("bench attention", args.timing));
  request.checked_rows = args.checked_rows;
  request.seed = args.seed;
  request.out = args.out;
  request.forward_variants = args.forward_variants;
  request.backward_variants = args.backward_variants;
  PARITY_RETURN_IF_ERROR(bench::validate_attention_bench_request(request));
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench attention"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const std::string report, bench::run_attention_bench(request, bench::gpu_bench_device()));
  std::fputs(report.c_str(), stdout);
#endif
  return Status::ok();
}

}  // namespace

void add_bench_attention_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchAttentionArgs>();
  auto& o = args->overrides;
  auto* cmd = bench.add_subcommand("attention", "Jagged attention (HSTU, softmax/JFA, GDPA): forward, backward (GPU)");
  cmd->add_option("--config", args->config, "Named configuration: H1, H2, J1, G1 or targets (docs/attention.md)");
  cmd->add_option("--kind", o.kind, "hstu, softmax (jfa) or gdpa (needed without --config)");
  cmd->add_option("--activation", o.activation, "HSTU/GDPA activation: silu, gelu, relu, sigmoid");
  cmd->add_option("--batch", o.batch, "Sequences B");
  cmd->add_option("--heads", o.heads, "Heads H");
  cmd->add_option("--dim", o.dim_qk, "Head dim of q and k (and v unless --dim-v)");
  cmd->add_option("--dim-v", o.dim_v, "Head dim of v and out");
  cmd->add_option("--seq-len", o.seq_lens, "max_seq_len N, one case per value (lengths U[fraction*N, N))");
  cmd->add_option("--min-length-fraction", o.min_length_fraction, "Shortest drawn length as a fraction of N (0.9)");
  cmd->add_option("--dtype", o.dtype, "bf16 or fp16");
  cmd->add_option("--max-targets", o.max_targets, "num_targets U[1, this]; 0 = no targets");
  cmd->add_option("--contextual", o.contextual_len, "Contextual prefix length");
  cmd->add_option("--max-attn-len", o.max_attn_len, "Local window (0 = none)");
  cmd->add_option("--min-full-attn-len", o.min_full_attn_len, "With a window: last rows keeping full attention");
  cmd->add_option("--kv-length", o.kv_length, "Cross-attention: keys per sequence (0 = self-attention)");
  cmd->add_option("--causal", o.causal, "true or false");
  cmd->add_flag("--forward-only", o.forward_only, "Time the forward only");
  cmd->add_option("--check-rows", args->checked_rows, "Rows per case checked against fp64 before timing");
  add_timing_flags(cmd, args->timing, TimingFlags::kAll);
  add_seed_option(cmd, args->seed, "Seed of the lengths, targets and values");
  cmd->add_option("--out", args->out, "Write the results JSON here");
  cmd->add_option("--forward-variants", args->forward_variants,
                  "Forward variants timed beside the default, comma-separated (e.g. "
                  "attention_forward_gpu,attention_forward_gpu_rows128)")
      ->delimiter(',');
  cmd->add_option("--backward-variants", args->backward_variants,
                  "Backward variants timed beside the default, comma-separated (e.g. "
                  "attention_backward_gpu,attention_backward_gpu_wgmma)")
      ->delimiter(',');
  cmd->callback([args, &outcome] { outcome.status = bench_attention(*args); });
}

}  // namespace parity::cli
