// What both bindings (the nanobind module and the torch ops) need to turn call arguments into a TBE
// problem: the batch size from the offsets' length, the optimiser from its fields, and the checks
// that each buffer holds what the problem says. Library types only, no Python or torch types.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"
#include "parity/embedding/tbe.hpp"

namespace parity::python {

/// The sizes and dtypes of one call's buffers, as the caller passed them.
struct TbeCallShape {
  std::int64_t num_indices = 0;
  std::int64_t num_offsets = 0;
  DType index_dtype = DType::kI64;
  DType offsets_dtype = DType::kI64;
  DType weight_dtype = DType::kF32;
  DType output_dtype = DType::kF32;
  std::int64_t weight_elements = 0;
  bool has_per_sample_weights = false;
  std::int64_t per_sample_weight_elements = 0;
};

/// A layout from per-table rows and dims (`table_of_feature` empty: one feature per table).
Result<embedding::TbeLayout> make_tbe_layout(const std::vector<std::int64_t>& table_rows,
                                             const std::vector<std::int64_t>& table_dims,
                                             const std::vector<std::int64_t>& table_of_feature);

/// The problem of one call: batch_size = (num_offsets - 1) / num_features, which must divide
/// exactly; offsets and indices share a dtype; the weights hold the layout's elements; the
/// per-sample weights (if any) one float per index. Messages name the argument and the value.
Result<embedding::TbeProblem> make_tbe_problem(const embedding::TbeLayout& layout, const TbeCallShape& shape,
                                               std::string_view pooling);

Result<embedding::WeightDecayMode> parse_weight_decay_mode(std::string_view text);  // none, l2, decoupled

struct OptimizerFields {
  std::string_view kind = "sgd";
  double learning_rate = 0.01;
  double eps = 1e-8;
  double weight_decay = 0.0;
  std::string_view weight_decay_mode = "none";
  double max_norm = 0.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  std::int64_t step = 1;
};
Result<embedding::OptimizerParams> make_optimizer(const OptimizerFields& fields);

/// kInvalidArgument "name: N elements, expected M" unless equal.
Status check_elements(std::string_view name, std::int64_t actual, std::int64_t expected);

}  // namespace parity::python
