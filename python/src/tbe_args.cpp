#include "tbe_args.hpp"

#include <string>

namespace parity::python {

Result<embedding::TbeLayout> make_tbe_layout(const std::vector<std::int64_t>& table_rows,
                                             const std::vector<std::int64_t>& table_dims,
                                             const std::vector<std::int64_t>& table_of_feature) {
  PARITY_CHECK_ARG(table_rows.size() == table_dims.size(), "table_dims: ", table_dims.size(),
                   " entries, expected one per table (", table_rows.size(), ")");
  std::vector<embedding::TableSpec> tables;
  tables.reserve(table_rows.size());
  for (std::size_t t = 0; t < table_rows.size(); ++t) {
    PARITY_CHECK_ARG(table_dims[t] >= 0 && table_dims[t] <= embedding::kMaxEmbeddingDim, "table_dims[", t,
                     "]=", table_dims[t], "; expected a multiple of ", embedding::kEmbeddingDimMultiple, " in [",
                     embedding::kEmbeddingDimMultiple, ", ", embedding::kMaxEmbeddingDim, "]");
    tables.push_back({table_rows[t], static_cast<int>(table_dims[t])});
  }
  std::vector<int> features;
  features.reserve(table_of_feature.size());
  for (std::size_t f = 0; f < table_of_feature.size(); ++f) {
    PARITY_CHECK_ARG(table_of_feature[f] >= 0 && table_of_feature[f] < static_cast<std::int64_t>(tables.size()),
                     "table_of_feature[", f, "]=", table_of_feature[f], "; expected a table in [0, ",
                     tables.size(), ")");
    features.push_back(static_cast<int>(table_of_feature[f]));
  }
  return embedding::TbeLayout::create(std::move(tables), std::move(features));
}

Status check_elements(std::string_view name, std::int64_t actual, std::int64_t expected) {
  PARITY_CHECK_ARG(actual == expected, name, ": ", actual, " elements, expected ", expected);
  return Status::ok();
}

Result<embedding::TbeProblem> make_tbe_problem(const embedding::TbeLayout& layout, const TbeCallShape& shape,
                                               std::string_view pooling) {
  const std::int64_t features = layout.num_features();
  PARITY_CHECK_ARG(features >= 1, "layout: no features");
  PARITY_CHECK_ARG(shape.num_offsets >= 1 && (shape.num_offsets - 1) % features == 0, "offsets: ",
                   shape.num_offsets, " elements, expected num_features*batch_size+1 with num_features=",
                   features);
  PARITY_CHECK_ARG(shape.offsets_dtype == shape.index_dtype, "offsets: dtype ", dtype_name(shape.offsets_dtype),
                   ", expected the indices' dtype ", dtype_name(shape.index_dtype));
  embedding::TbeProblem problem;
  problem.layout = layout;
  problem.batch_size = (shape.num_offsets - 1) / features;
  problem.num_indices = shape.num_indices;
  problem.index_dtype = shape.index_dtype;
  problem.weight_dtype = shape.weight_dtype;
  problem.output_dtype = shape.output_dtype;
  PARITY_ASSIGN_OR_RETURN(problem.pooling, embedding::parse_pooling_mode(std::string(pooling)));
  problem.has_per_sample_weights = shape.has_per_sample_weights;
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(check_elements("weights", shape.weight_elements, layout.total_weight_elements()));
  if (shape.has_per_sample_weights) {
    PARITY_RETURN_IF_ERROR(
        check_elements("per_sample_weights", shape.per_sample_weight_elements, shape.num_indices));
  }
  return problem;
}

Result<embedding::WeightDecayMode> parse_weight_decay_mode(std::string_view text) {
  if (text == "none") return embedding::WeightDecayMode::kNone;
  if (text == "l2") return embedding::WeightDecayMode::kL2;
  if (text == "decoupled") return embedding::WeightDecayMode::kDecoupled;
  return invalid_argument("weight_decay_mode: '", text, "'; expected none, l2 or decoupled");
}

Result<embedding::OptimizerParams> make_optimizer(const OptimizerFields& fields) {
  embedding::OptimizerParams params;
  PARITY_ASSIGN_OR_RETURN(params.kind, embedding::parse_optimizer_kind(std::string(fields.kind)));
  params.learning_rate = static_cast<float>(fields.learning_rate);
  params.eps = static_cast<float>(fields.eps);
  params.weight_decay = static_cast<float>(fields.weight_decay);
  PARITY_ASSIGN_OR_RETURN(params.weight_decay_mode, parse_weight_decay_mode(fields.weight_decay_mode));
  params.max_norm = static_cast<float>(fields.max_norm);
  params.beta1 = static_cast<float>(fields.beta1);
  params.beta2 = static_cast<float>(fields.beta2);
  params.step = fields.step;
  PARITY_RETURN_IF_ERROR(params.validate());
  return params;
}

}  // namespace parity::python
