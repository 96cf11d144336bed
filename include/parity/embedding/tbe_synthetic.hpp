// Seeded synthetic TBE batches for tests, `parity tbe check` and `parity bench tbe`: uniform or
// Zipf-skewed indices (hot rows scattered over the table), fixed or varying bag sizes, empty bags,
// optional per-sample weights, and packing to the problem's dtypes.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/embedding/tbe.hpp"

namespace parity::embedding {

struct SyntheticBatchOptions {
  std::int64_t batch_size = 1;
  int pooling_factor = 1;         // L: mean bag size
  bool vary_bag_sizes = false;    // sizes uniform in [0, 2L] instead of exactly L
  double empty_bag_fraction = 0;  // this fraction of bags is forced empty
  double zipf_alpha = 0;          // 0 = uniform rows
  std::int64_t hot_rows = 0;      // > 0: every index drawn from rows [0, hot_rows) of its table
  bool weighted = false;
  std::uint64_t seed = 1;
};

struct SyntheticBatch {
  std::vector<std::int64_t> indices;
  std::vector<std::int64_t> offsets;  // F*B+1, feature-major
  std::vector<float> per_sample_weights;
};

SyntheticBatch make_synthetic_batch(const TbeLayout& layout, const SyntheticBatchOptions& options);

/// Bytes of `values` as int32 or int64 (the problem's index dtype).
std::vector<std::uint8_t> pack_indices(const std::vector<std::int64_t>& values, DType index_dtype);
/// All weights of the layout, normal(0, 1) scaled by 1/sqrt(D), in `dtype`; `as_double` gets the
/// stored values (after rounding) for the fp64 reference when non-null.
std::vector<std::uint8_t> make_weights(const TbeLayout& layout, DType dtype, std::uint64_t seed,
                                       std::vector<double>* as_double = nullptr);
/// Stored element i of a weights/output buffer of `dtype` as double.
double load_as_double(const std::vector<std::uint8_t>& bytes, DType dtype, std::int64_t i);
/// Per-feature index counts and unique-row counts (for the byte models).
void count_per_feature(const TbeProblem& problem, const SyntheticBatch& batch,
                       std::vector<std::int64_t>* indices_per_feature,
                       std::vector<std::int64_t>* unique_rows_per_feature);

}  // namespace parity::embedding
