// `parity bench tbe`: table-batched embeddings on the GPU, named configurations C1-C7, BC, D1-D7,
// a table-layout file or free shape flags (parity/bench/tbe_bench.hpp does the work). Arguments are validated first
// (exit 2), then the device is required (exit 3).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "flags.hpp"
#include "parity/bench/tbe_bench.hpp"

namespace parity::cli {
namespace {

struct BenchTbeArgs {
  std::string config;
  bench::TbeBenchOverrides overrides;
  bench::TimingSettings timing;
  std::string out;
  std::uint64_t seed = 1;
  std::string variant = "auto";
  std::string forward_variants;
  bool forward_only = false;
};

Status bench_tbe(const BenchTbeArgs& args) {
  bench::TbeBenchRequest request;
  PARITY_ASSIGN_OR_RETURN(request.spec, bench::tbe_bench_spec(args.config, args.overrides, args.seed));
  PARITY_RETURN_IF_ERROR(bench::tbe_bench_problem(request.spec).status());
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("bench tbe", args.timing));
  request.seed = args.seed;
  request.out = args.out;
  request.variant = args.variant;
  request.forward_only = args.forward_only;
  if (!args.forward_variants.empty()) {
    PARITY_ASSIGN_OR_RETURN(request.forward_variants, bench::parse_tbe_forward_variants(args.forward_variants));
  }
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench tbe"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const std::string report, bench::run_tbe_bench(request));
  std::fputs(report.c_str(), stdout);
#endif
  return Status::ok();
}

}  // namespace

void add_bench_tbe_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchTbeArgs>();
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
  cmd->add_option("--optimizer", o.optimizer, "sgd, adagrad, rowwise-adagrad, adam");
  add_timing_flags(cmd, args->timing, TimingFlags::kCountsAndCache);
  cmd->add_option("--backward-variant", o.backward_variant,
                  "Backward kernels timed: both (default), batched (row updates queued), row (one at a time), "
                  "atomic_sgd (SGD, fp32 weights: atomic adds, not bitwise repeatable), short_chunks (the "
                  "default chunk length, row updates), long_chunks (chunks of max(128, D) positions)");
  cmd->add_option("--variant", args->variant,
                  "Kernels: auto (default: narrow rows where rows are <= 128 bytes, fitted groups where they "
                  "fit), narrow_rows, wide_rows, fitted_groups")
      ->check(CLI::IsMember({"auto", "narrow_rows", "wide_rows", "fitted_groups"}));
  cmd->add_option("--forward-variant", args->forward_variants,
                  "Forward kernels also timed, each checked first: a list of auto, narrow_rows, wide_rows, "
                  "fitted_groups, narrow_rows_deep, narrow_rows_light, warp_tile_one_hot, warp_tile_one_hot_prefetch, "
                  "warp_tile_short_bags, warp_tile_short_bags_prefetch, warp_tile_short_bags_light, wide_rows_dedup, wide_rows_one_launch");
  cmd->add_flag("--forward-only", args->forward_only,
                "Time only the forward kernels (--variant and --forward-variant): no backward, step or bounds check");
  add_seed_option(cmd, args->seed, "Seed of the synthetic batch and weights");
  cmd->add_option("--out", args->out, "Write the results JSON here");
  cmd->callback([args, &outcome] { outcome.status = bench_tbe(*args); });
}

}  // namespace parity::cli
