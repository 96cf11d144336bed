// Robust summary of repeated timings: median, p10/p90, min/max, mean and the sample count.
// Percentiles interpolate linearly between order statistics (position p*(n-1), the convention of
// numpy and torch.quantile, which triton.testing.do_bench uses), so an even count's median is the
// mean of the two middle samples.
#pragma once

#include <vector>

#include "parity/core/status.hpp"

namespace parity::bench {

struct SampleStats {
  double median_ms = 0.0;
  double p10_ms = 0.0;
  double p90_ms = 0.0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  double mean_ms = 0.0;
  int count = 0;
};

/// Summarizes per-repetition times. Rejects an empty sample and negative or non-finite times
/// (kInvalidArgument naming the offending index).
Result<SampleStats> summarize(std::vector<double> samples_ms);

/// The q-quantile (0 <= q <= 1) of already sorted samples, linear interpolation; sorted must be
/// non-empty (the caller checks).
double sorted_quantile(const std::vector<double>& sorted, double q);

}  // namespace parity::bench
