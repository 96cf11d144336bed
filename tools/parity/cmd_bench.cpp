// `parity bench hbm | gemm | tbe | attention | interaction | gemm-run | hstu-layer`: the device benchmarks.
// Each parses its flags into the library's request, which checks them (exit 2); then a CUDA device
// is required (exit 3) and the library's driver checks each kernel against its reference, times it
// beside its baseline and returns the report (train and comm: cmd_bench_train.cpp).
//   hbm          device copy bandwidth: the portable copy kernel and cudaMemcpyAsync (bench/hbm.hpp)
//   gemm         cuBLASLt's heuristic top-1 (or cublasGemmEx), TN, checked on sampled entries
//   tbe          table-batched embeddings: named configurations, a layout file or free shapes
//   attention    jagged attention (HSTU, softmax / JFA, GDPA): named configurations or a free shape
//   interaction  the dot interaction, every GPU variant of the forward and backward
//   gemm-run     the DLRM dense-layer GEMMs through gemm::Gemm::run beside cuBLASLt and the oracle
//   hstu-layer   the HSTU layer forward and backward (CPU fp32; GPU bf16, device-event medians)
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/bench/attention_bench.hpp"
#include "parity/bench/hstu_layer_bench.hpp"
#include "parity/bench/gemm_run_bench.hpp"
#include "parity/bench/gemm_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/interaction_bench.hpp"
#include "parity/bench/tbe_bench.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::cli {
namespace {

void add_bench_hbm(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<bench::HbmBenchSettings>();
  auto* cmd = bench.add_subcommand("hbm", "Device memory bandwidth: D2D copy, bytes read + written, L2 flushed");
  cmd->add_option("--bytes", args->total_bytes, "bytes read + written per copy (e.g. 4GiB, 512MiB, 1e9); far above L2");
  add_bench_flags(cmd, args->timing, TimingFlags::kAll, args->out);
  cmd->callback([args, &outcome] {
    outcome.status = run_on_cuda_device("bench hbm", bench::hbm_bench_request_from_settings(*args),
                                        [](const auto& r) {
                                          return bench::run_hbm_bench(r.total_bytes, r.timing, r.out);
                                        });
  });
}

void add_bench_gemm(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<gemm::GemmBenchSettings>();
  auto* cmd =
      bench.add_subcommand("gemm", "GEMM with cuBLASLt's default choice: checked, then timed with the L2 flushed");
  cmd->add_option("--m", args->m, "rows of C");
  cmd->add_option("--n", args->n, "columns of C");
  cmd->add_option("--k", args->k, "reduction length");
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp32 (run as TF32)");
  cmd->add_option("--shapes", args->shapes, "CSV of shapes (name,m,n,k[,...]) instead of --m/--n/--k");
  add_bench_flags(cmd, args->timing, TimingFlags::kAll, args->out);
  cmd->add_option("--library", args->library,
                  "cublaslt: cuBLASLt's heuristic top-1 (default); cublas: cublasGemmEx, the call torch's "
                  "default BLAS backend makes")
      ->check(CLI::IsMember({"cublaslt", "cublas"}));
  cmd->add_option("--cublas-workspace-bytes", args->cublas_workspace_bytes, "cuBLAS handle's workspace (--library cublas)");
  cmd->callback([args, &outcome] {
    outcome.status = run_on_cuda_device("bench gemm", gemm::gemm_bench_request_from_settings(*args),
                                        [](const auto& request) { return gemm::run_gemm_bench(request, print_flushed); });
  });
}

void add_bench_tbe(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<bench::TbeBenchSettings>();
  auto& o = args->overrides;
  auto* cmd = bench.add_subcommand("tbe", "Table-batched embeddings: forward, fwd+bwd+optimizer, bounds check (GPU)");
  cmd->add_option("--config", args->config, "Named configuration: C1..C7, BC or D1..D7 (docs/embedding.md)");
  cmd->add_option("--layout", o.layout_file, "Table-layout JSON file (schema in docs/embedding.md)");
  cmd->add_option("--tables", o.tables, "Number of tables (one feature each)");
  cmd->add_option("--rows", o.rows, "Rows per table, or a list cycled over the tables: 1000000,500000");
  cmd->add_option("--dim", o.dim, "Embedding dim (multiple of 4, <= 2048), or a list cycled over the tables: 16,32,64");
  cmd->add_option("--batch", o.batch, "Batch size B");
  cmd->add_option("--pooling-factor", o.bag_lengths, "Bag length: L (fixed), LO..HI (uniform) or one-hot");
  cmd->add_option("--zipf", o.zipf, "Zipf exponent alpha >= 0 of the row distribution (0 = uniform)");
  cmd->add_option("--pooling", o.pooling, "sum or mean");
  cmd->add_flag("--weighted", o.weighted, "Per-sample weights (sum pooling only)");
  cmd->add_option("--hot-rows", o.hot_rows, "Draw every index from this many rows per table (C6)");
  cmd->add_option("--bad-fraction", o.bad_fraction, "Fraction of bad indices for the bounds-check timing");
  cmd->add_option("--weights-dtype,--dtype", o.weight_dtype, "Weights dtype: fp32, fp16, bf16");
  cmd->add_option("--output-dtype", o.output_dtype, "Output dtype: fp32 or bf16 (default: the weights dtype)");
  cmd->add_option("--index-dtype", o.index_dtype, "int32 or int64");
  cmd->add_option("--row-stride", o.row_stride,
                  "aligned (default: rows padded where that saves DRAM fetches, e.g. 56-byte rows to 64) or packed");
  cmd->add_option("--optimizer", o.optimizer, "sgd, adagrad, rowwise-adagrad, adam");
  add_bench_flags(cmd, args->timing, TimingFlags::kCountsAndCache, args->request.out);
  cmd->add_option("--backward-variant", o.backward_variant,
                  "Backward kernels timed: both (default), batched (row updates queued), row (one at a time), "
                  "atomic_sgd (SGD, any weights dtype: atomic adds, not bitwise repeatable), short_chunks (the "
                  "default chunk length, row updates), long_chunks (chunks of max(128, D) positions), prefetch_state / "
                  "no_prefetch_state (Adagrad / Adam state loads early / late), large_sort_tiles (radix sort in "
                  "4096-key tiles at every batch size), small_batch_short_chunks (below 2^20 indices, chunks "
                  "shorter than D/4 positions: partials up to 32 MiB in all, not 32 B per index), vendor_sort (the keys "
                  "sorted by CUB's radix sort instead of the portable one), sort_counts_in_scatter (the portable "
                  "sort's scatters count the next pass's digits: no histogram launch after the first pass)");
  cmd->add_option("--variant", args->request.variant,
                  "Kernels: auto (default: narrow rows where rows are <= 128 bytes, fitted groups where they "
                  "fit), narrow_rows, wide_rows, fitted_groups")
      ->check(CLI::IsMember({"auto", "narrow_rows", "wide_rows", "fitted_groups"}));
  // The library's list, so the help never falls behind a new kernel.
  cmd->add_option("--forward-variant", args->forward_variants,
                  "Forward kernels also timed, each checked first: a list of " + bench::tbe_forward_variant_list_text());
  cmd->add_flag("--forward-only", args->request.forward_only,
                "Time only the forward kernels (--variant and --forward-variant): no backward, step or bounds check");
  add_seed_option(cmd, args->request.seed, "Seed of the synthetic batch and weights");
  cmd->callback([args, &outcome] {
    outcome.status = run_on_cuda_device("bench tbe", bench::tbe_bench_request_from_settings(*args),
                                        [](const auto& request) { return bench::run_tbe_bench(request); });
  });
}

void add_bench_attention(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<bench::AttentionBenchSettings>();
  auto& o = args->overrides;
  auto& r = args->request;
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
  cmd->add_option("--check-rows", r.checked_rows, "Rows per case checked against fp64 before timing");
  add_bench_flags(cmd, args->timing, TimingFlags::kAll, r.out);
  add_seed_option(cmd, r.seed, "Seed of the lengths, targets and values");
  cmd->add_option("--forward-variants", r.forward_variants,
                  "Forward variants timed beside the default, comma-separated (e.g. "
                  "attention_forward_gpu,attention_forward_gpu_rows128)")
      ->delimiter(',');
  cmd->add_option("--backward-variants", r.backward_variants,
                  "Backward variants timed beside the default, comma-separated (e.g. "
                  "attention_backward_gpu,attention_backward_gpu_wgmma)")
      ->delimiter(',');
  cmd->callback([args, &outcome] {
    outcome.status = run_on_cuda_device(
        "bench attention", bench::attention_bench_request_from_settings(*args),
        [](const auto& request) { return bench::run_attention_bench(request, bench::gpu_bench_device()); });
  });
}

void add_bench_interaction(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<bench::InteractionBenchSettings>();
  auto& r = args->request;
  auto* cmd = bench.add_subcommand("interaction", "Dot interaction forward and backward, every GPU variant (GPU)");
  cmd->add_option("--batch", r.batch, "Samples B");
  cmd->add_option("--embeddings", r.num_embeddings, "Pooled embeddings F per sample (V = F + 1 vectors)");
  cmd->add_option("--dim", r.dim, "Vector dim D");
  cmd->add_option("--dtype", args->dtype, "Activations: bf16 or fp32 (the TF32 trainer's)");
  cmd->add_option("--stride", r.output_stride, "Output row stride: -1 = width padded to 8 (the trainer's), 0 = packed");
  cmd->add_option("--check-samples", r.checked_samples, "Samples checked against fp64 before timing");
  add_bench_flags(cmd, args->timing, TimingFlags::kAll, r.out);
  add_seed_option(cmd, r.seed, "Seed of the inputs");
  cmd->callback([args, &outcome] {
    outcome.status = run_on_cuda_device(
        "bench interaction", bench::interaction_bench_request_from_settings(*args),
        [](const auto& request) { return bench::run_interaction_bench(request, bench::gpu_bench_device()); });
  });
}

void add_bench_gemm_run(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<bench::GemmRunBenchSettings>();
  auto& r = args->request;
  auto* cmd = bench.add_subcommand("gemm-run", "DLRM dense-layer GEMMs through gemm::Gemm::run vs the oracle");
  cmd->add_option("--model", r.model, "all, dlrm-kaggle or dlrm-v2");
  cmd->add_option("--batch-size", r.batch_size, "batch size (N of forward/data-gradient, K of weight-gradient)");
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp32 (run as TF32)");
  add_bench_flags(cmd, args->timing, TimingFlags::kCounts, r.out);
  cmd->add_option("--gemm-choice", args->gemm_choice, "measured (the trainer's default), auto, model, heuristic");
  cmd->add_option("--measured-per-source", args->measured_per_source, "measured: candidates timed per source");
  cmd->add_option("--measured-model-list", args->measured_model_list, "measured: the model's best tiles or configs");
  cmd->add_option("--measured-timing", args->measured_timing, "measured: flushed (medians) or back-to-back");
  cmd->add_flag("--no-oracle", args->skip_oracle, "skip the oracle (fast: Gemm::run, heuristic, host time only)");
  cmd->add_option("--hw", r.options.hardware, "catalogue entry the selector models (default: the device's own entry)");
  cmd->callback([args, &outcome] {
    outcome.status = run_on_cuda_device(
        "bench gemm-run", bench::gemm_run_bench_request_from_settings(*args),
        [](const auto& request) { return bench::run_gemm_run_bench_report(request, print_flushed); });
  });
}

void add_bench_hstu_layer(CLI::App& bench, Outcome& outcome) {
  auto request = std::make_shared<bench::HstuLayerBenchRequest>();
  auto device = std::make_shared<std::string>("cpu");
  auto& p = request->problem;
  p.batch = 8;
  p.max_seq_len = 256;
  p.model_dim = 256;
  p.heads = 2;
  p.dim_qk = 64;
  p.dim_v = 64;
  auto* cmd = bench.add_subcommand("hstu-layer", "HSTU layer forward and backward (norms, projections, attention, gating)");
  cmd->add_option("--batch", p.batch, "Sequences B (default 8)");
  cmd->add_option("--seq-len", p.max_seq_len, "N: the longest sequence; lengths U[ceil(fraction N), N] (default 256)");
  cmd->add_option("--min-length-fraction", request->min_length_fraction, "Shortest length as a fraction of N (default 0.9)");
  cmd->add_option("--model-dim", p.model_dim, "D, the layer's width (default 256)");
  cmd->add_option("--heads", p.heads, "H (default 2)");
  cmd->add_option("--dim-qk", p.dim_qk, "Attention dim of q and k per head (default 64)");
  cmd->add_option("--dim-v", p.dim_v, "Dim of u and v per head (default 64)");
  cmd->add_option("--max-targets", request->max_targets, "num_targets U[1, max] per sequence; 0 = none");
  cmd->add_option("--contextual-len", p.contextual_len, "Contextual prefix every row sees");
  cmd->add_option("--max-attn-len", p.max_attn_len, "Local window (0 = none)");
  cmd->add_option("--min-full-attn-len", p.min_full_attn_len, "With a window: last rows keeping full attention");
  cmd->add_option("--warmup", request->warmup, "Untimed passes first (default 1)");
  cmd->add_option("--reps", request->repetitions, "Timed passes; the median is reported (default 5)");
  cmd->add_option("--device", *device, "cpu (default) or gpu");
  cmd->add_option("--out", request->out, "Results JSON with provenance");
  add_seed_option(cmd, request->seed, "Seed of the lengths, targets, weights and inputs");
  cmd->callback([request, device, &outcome] {
    auto kind = parse_device_kind(*device);
    if (!kind.is_ok()) {
      outcome.status = kind.status().with_context("bench hstu-layer: --device");
      return;
    }
    request->device = kind.value();
#ifdef PARITY_HAS_CUDA
    const bench::AttentionBenchDevice timing = bench::gpu_bench_device();
#else
    const bench::AttentionBenchDevice timing;  // a GPU request is refused with the variants' reasons
#endif
    outcome.status = print_report(bench::run_hstu_layer_bench(*request, timing));
  });
}

}  // namespace

void add_bench_commands(CLI::App& app, Outcome& outcome) {
  auto* bench = app.add_subcommand("bench", "Benchmarks: device-event timing, L2 flushed, baseline beside");
  bench->require_subcommand(1);
  add_bench_hbm(*bench, outcome);
  add_bench_gemm(*bench, outcome);
  add_bench_tbe(*bench, outcome);
  add_bench_attention(*bench, outcome);
  add_bench_interaction(*bench, outcome);
  add_bench_gemm_run(*bench, outcome);
  add_bench_hstu_layer(*bench, outcome);
  add_bench_comm_command(*bench, outcome);
  add_bench_train_command(*bench, outcome);
}

}  // namespace parity::cli
