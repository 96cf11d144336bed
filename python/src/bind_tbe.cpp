// parity._core: TBE on host arrays through the op (embedding::tbe_forward / tbe_backward_fused with
// a CPU ExecutionContext) and the CPU bounds check. Arrays are checked (dtype, element count,
// C-contiguous) before a pointer reaches the library; the GIL is released while the op runs.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"
#include "parity/embedding/tbe_cpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "tbe_args.hpp"

namespace parity::python {
namespace {

using embedding::TbeLayout;
using embedding::TbeProblem;

DType dtype_or_raise(const HostArray& array, const char* name, bool as_bf16 = false) {
  Result<DType> dtype = array_dtype(array, as_bf16);
  if (!dtype.is_ok()) raise_if_error(dtype.status().with_context(name));
  return *dtype;
}

// The problem of one call from its arrays; `output_dtype` is the output's (or the weights' for
// calls without an output).
TbeProblem problem_of(const TbeLayout& layout, const HostArray& weights, bool weights_bf16, const HostArray& indices,
                      const HostArray& offsets, const std::optional<HostArray>& per_sample_weights,
                      const std::string& pooling, DType output_dtype) {
  TbeCallShape shape;
  shape.num_indices = static_cast<std::int64_t>(indices.size());
  shape.num_offsets = static_cast<std::int64_t>(offsets.size());
  shape.index_dtype = dtype_or_raise(indices, "indices");
  shape.offsets_dtype = dtype_or_raise(offsets, "offsets");
  shape.weight_dtype = dtype_or_raise(weights, "weights", weights_bf16);
  shape.output_dtype = output_dtype;
  shape.weight_elements = static_cast<std::int64_t>(weights.size());
  shape.has_per_sample_weights = per_sample_weights.has_value();
  if (per_sample_weights) {
    shape.per_sample_weight_elements = static_cast<std::int64_t>(per_sample_weights->size());
    if (dtype_or_raise(*per_sample_weights, "per_sample_weights") != DType::kF32) {
      raise_if_error(invalid_argument("per_sample_weights: expected float32"));
    }
  }
  return value_or_raise(make_tbe_problem(layout, shape, pooling));
}

embedding::TbeBatchView batch_of(const HostArray& indices, const HostArray& offsets,
                                  const std::optional<HostArray>& per_sample_weights) {
  return {indices.data(), offsets.data(),
          per_sample_weights ? static_cast<const float*>(per_sample_weights->data()) : nullptr};
}

void forward(const TbeLayout& layout, const HostArray& weights, bool weights_bf16, const HostArray& indices,
             const HostArray& offsets, const std::optional<HostArray>& per_sample_weights, const std::string& pooling,
             const HostArray& output, bool output_bf16) {
  const DType output_dtype = dtype_or_raise(output, "output", output_bf16);
  const TbeProblem problem =
      problem_of(layout, weights, weights_bf16, indices, offsets, per_sample_weights, pooling, output_dtype);
  raise_if_error(check_elements("output", static_cast<std::int64_t>(output.size()),
                                problem.output_rows() * problem.output_cols()));
  embedding::TbeForwardArgs args{weights.data(), batch_of(indices, offsets, per_sample_weights), output.data()};
  Status status;
  {
    nb::gil_scoped_release release;
    status = embedding::tbe_forward(problem, args, ExecutionContext{});
  }
  raise_if_error(status);
}

void backward_fused(const TbeLayout& layout, const HostArray& weights, bool weights_bf16, const HostArray& state1,
                    const HostArray& state2, const HostArray& indices, const HostArray& offsets,
                    const std::optional<HostArray>& per_sample_weights, const HostArray& grad_output,
                    const std::string& pooling, const std::string& optimizer, double learning_rate, double eps,
                    double weight_decay, const std::string& weight_decay_mode, double max_norm, double beta1,
                    double beta2, std::int64_t step) {
  const TbeProblem problem =
      problem_of(layout, weights, weights_bf16, indices, offsets, per_sample_weights, pooling, DType::kF32);
  const embedding::OptimizerParams params = value_or_raise(make_optimizer(
      {optimizer, learning_rate, eps, weight_decay, weight_decay_mode, max_norm, beta1, beta2, step}));
  require_array(grad_output, "grad_output", DType::kF32, problem.output_rows() * problem.output_cols());
  require_array(state1, "state1", DType::kF32, embedding::optimizer_state1_elements(layout, params.kind));
  require_array(state2, "state2", DType::kF32, embedding::optimizer_state2_elements(layout, params.kind));
  embedding::TbeBackwardArgs args{params,
                                  weights.data(),
                                  static_cast<float*>(state1.data()),
                                  static_cast<float*>(state2.data()),
                                  batch_of(indices, offsets, per_sample_weights),
                                  static_cast<const float*>(grad_output.data())};
  Status status;
  {
    nb::gil_scoped_release release;
    status = embedding::tbe_backward_fused(problem, args, ExecutionContext{});
  }
  raise_if_error(status);
}

nb::dict bounds_check(const TbeLayout& layout, const HostArray& indices, const HostArray& offsets,
                      const std::string& mode_text) {
  const embedding::BoundsCheckMode mode = value_or_raise(embedding::parse_bounds_check_mode(mode_text));
  TbeCallShape shape;
  shape.num_indices = static_cast<std::int64_t>(indices.size());
  shape.num_offsets = static_cast<std::int64_t>(offsets.size());
  shape.index_dtype = dtype_or_raise(indices, "indices");
  shape.offsets_dtype = dtype_or_raise(offsets, "offsets");
  shape.weight_elements = layout.total_weight_elements();  // no weights in this call
  const TbeProblem problem = value_or_raise(make_tbe_problem(layout, shape, "sum"));
  Result<embedding::BoundsCheckReport> report = internal_error("bounds check did not run");
  {
    nb::gil_scoped_release release;
    report = embedding::cpu::tbe_bounds_check(problem, mode, indices.data(), offsets.data());
  }
  const embedding::BoundsCheckReport checked = value_or_raise(std::move(report));
  raise_if_error(embedding::bounds_check_status(checked, mode));
  nb::dict out;
  out["bad_indices"] = checked.bad_indices;
  out["bad_offsets"] = checked.bad_offsets;
  out["last_offset_fixed"] = checked.last_offset_fixed;
  out["first_bad_feature"] = checked.first_bad_feature;
  out["first_bad_table"] = checked.first_bad_table;
  out["first_bad_bag"] = checked.first_bad_bag;
  out["first_bad_position"] = checked.first_bad_position;
  out["first_bad_value"] = checked.first_bad_value;
  out["first_bad_offset_position"] = checked.first_bad_offset_position;
  out["first_bad_offset_value"] = checked.first_bad_offset_value;
  out["description"] = checked.describe();
  return out;
}

void bind_layout(nb::module_& module) {
  nb::class_<TbeLayout>(module, "TbeLayout", "Where every table lives in the packed weights (TbeLayout).")
      .def_static(
          "create",
          [](const std::vector<std::int64_t>& table_rows, const std::vector<std::int64_t>& table_dims,
             const std::vector<std::int64_t>& table_of_feature) {
            return value_or_raise(make_tbe_layout(table_rows, table_dims, table_of_feature));
          },
          nb::arg("table_rows"), nb::arg("table_dims"), nb::arg("table_of_feature"))
      .def_prop_ro("num_tables", &TbeLayout::num_tables)
      .def_prop_ro("num_features", &TbeLayout::num_features)
      .def_prop_ro("table_of_feature", &TbeLayout::table_of_feature)
      .def_prop_ro("weights_offsets", &TbeLayout::weights_offsets)
      .def_prop_ro("row_bases", &TbeLayout::row_bases)
      .def_prop_ro("output_column_offsets", &TbeLayout::output_column_offsets)
      .def_prop_ro("total_rows", &TbeLayout::total_rows)
      .def_prop_ro("total_weight_elements", &TbeLayout::total_weight_elements)
      .def_prop_ro("total_output_dim", &TbeLayout::total_output_dim)
      .def_prop_ro("max_dim", &TbeLayout::max_dim);
}

}  // namespace

void bind_tbe(nb::module_& module) {
  bind_layout(module);
  module.def("tbe_forward", &forward, nb::arg("layout"), nb::arg("weights"), nb::arg("weights_bf16"),
             nb::arg("indices"), nb::arg("offsets"), nb::arg("per_sample_weights").none(), nb::arg("pooling"),
             nb::arg("output"), nb::arg("output_bf16"),
             "Pooled lookup into `output` (output_rows x output_cols) through the TBE op on the CPU.");
  module.def("tbe_backward_fused", &backward_fused, nb::arg("layout"), nb::arg("weights"), nb::arg("weights_bf16"),
             nb::arg("state1"), nb::arg("state2"), nb::arg("indices"), nb::arg("offsets"),
             nb::arg("per_sample_weights").none(), nb::arg("grad_output"), nb::arg("pooling"), nb::arg("optimizer"),
             nb::arg("learning_rate"), nb::arg("eps"), nb::arg("weight_decay"), nb::arg("weight_decay_mode"),
             nb::arg("max_norm"), nb::arg("beta1"), nb::arg("beta2"), nb::arg("step"),
             "Backward fused with the optimiser: updates weights and state in place, one update per unique row.");
  module.def("tbe_bounds_check", &bounds_check, nb::arg("layout"), nb::arg("indices"), nb::arg("offsets"),
             nb::arg("mode"),
             "Checks (fix mode: repairs in place) indices and offsets; error mode raises ValueError naming "
             "the first bad entry.");
  module.def(
      "tbe_state_elements",
      [](const TbeLayout& layout, const std::string& optimizer) {
        const auto kind = value_or_raise(embedding::parse_optimizer_kind(optimizer));
        return std::pair{embedding::optimizer_state1_elements(layout, kind),
                         embedding::optimizer_state2_elements(layout, kind)};
      },
      nb::arg("layout"), nb::arg("optimizer"), "Elements of the two fp32 optimiser state buffers.");
}

}  // namespace parity::python
