// `parity tbe check`: every TBE path on a small built-in problem against the fp64 reference
// (parity/embedding/tbe_check.hpp): the OpenMP CPU path always, the GPU kernels when built with
// CUDA and a device is visible. Prints each path's max error next to its derived tolerance; exit 1
// if any exceeds it. Runs in well under a second.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/embedding/tbe_check.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#endif

namespace parity::cli {
namespace {

Status run_check(std::uint64_t seed) {
  PARITY_ASSIGN_OR_RETURN(auto report, embedding::tbe_check_cpu(seed));
#ifdef PARITY_HAS_CUDA
  if (parity::gpu::device_count() > 0) {
    PARITY_RETURN_IF_ERROR(embedding::tbe_check_gpu(seed, &report));
  } else {
    report.notes.insert(report.notes.begin(), "gpu: skipped (no CUDA device visible)");
  }
#else
  report.notes.insert(report.notes.begin(), "gpu: skipped (built without CUDA)");
#endif
  std::fputs(embedding::to_text(report).c_str(), stdout);
  if (!report.all_ok()) return internal_error("tbe check: an error exceeded its tolerance");
  return Status::ok();
}

}  // namespace

void add_tbe_commands(CLI::App& app, Outcome& outcome) {
  CLI::App& tbe = *app.add_subcommand("tbe", "Table-batched embeddings: correctness runs against the fp64 reference")
                       ->require_subcommand(1);
  auto* check = tbe.add_subcommand("check", "Run every TBE path on a small built-in problem against the fp64 reference");
  auto seed = std::make_shared<std::uint64_t>(7);
  add_seed_option(check, *seed, "Seed of the built-in problem (unsigned 64-bit)");
  check->callback([seed, &outcome] { outcome.status = run_check(*seed); });
}

}  // namespace parity::cli
