// `parity tbe check` as a library call: every TBE path on a small built-in problem (mixed dims
// 4..2048, weighted bags of varying size, empty bags, duplicates) against the fp64 reference, each
// error next to a tolerance derived from unit roundoffs and reduction lengths (derivations in
// src/embedding/tbe_check.cpp). The CPU paths run in the CPU library; the GPU kernels in parity_gpu.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/core/status.hpp"

namespace parity::embedding {

struct TbeCheckRow {
  std::string path, op;
  double max_err = 0;    // |got - ref| at the element with the largest error / tolerance ratio
  double tolerance = 0;  // that element's derived bound
  bool ok() const { return max_err <= tolerance; }
};

struct TbeCheckReport {
  std::string problem;             // one line describing the built-in problem
  std::vector<TbeCheckRow> rows;
  std::vector<std::string> notes;  // bounds-check results, skipped paths
  bool all_ok() const;
};

/// The CPU (OpenMP) forward and fused backward + row-wise Adagrad, and the CPU bounds check in fix
/// mode on a planted bad index.
Result<TbeCheckReport> tbe_check_cpu(std::uint64_t seed);
/// Appends the GPU kernels' rows and the GPU bounds check (error mode, three planted) to `report`
/// (parity_gpu; kUnsupported without a device).
Status tbe_check_gpu(std::uint64_t seed, TbeCheckReport* report);

/// The table the CLI prints.
std::string to_text(const TbeCheckReport& report);

}  // namespace parity::embedding
