// parity._core: the analytical GEMM selector (gemm::select_report, the library call behind
// `parity gemm select`), returned as plain Python values; python/parity/gemm.py wraps them.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity::python {
namespace {

struct GemmSelectRequest {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string hw, dtype, layout, epilogue;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  int alignment_bytes = 0;
  int top = 5;
  std::optional<std::string> data_dir;
  std::string calibration_file;
};

gemm::GemmProblem problem_of(const GemmSelectRequest& request) {
  gemm::GemmProblem problem;
  problem.m = request.m;
  problem.n = request.n;
  problem.k = request.k;
  problem.batch = request.batch;
  const DType dtype = value_or_raise(gemm::parse_gemm_dtype(request.dtype));
  problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
  problem.layout = value_or_raise(gemm::parse_layout(request.layout));
  problem.epilogue = value_or_raise(gemm::parse_epilogue(request.epilogue));
  problem.lda = request.lda;
  problem.ldb = request.ldb;
  problem.ldc = request.ldc;
  problem.alignment_bytes = request.alignment_bytes;
  raise_if_error(problem.validate());
  return problem;
}

nb::dict breakdown_dict(const gemm::TimeBreakdown& breakdown) {
  nb::dict out;
  out["total_us"] = breakdown.total_us;
  out["compute_us"] = breakdown.compute_us;
  out["memory_us"] = breakdown.memory_us;
  out["l2_us"] = breakdown.l2_us;
  out["launch_wave_us"] = breakdown.launch_wave_us;
  out["reduction_us"] = breakdown.reduction_us;
  out["epilogue_us"] = breakdown.epilogue_us;
  out["waves"] = breakdown.waves;
  return out;
}

nb::dict select(const GemmSelectRequest& request) {
  if (request.top < 1) raise_if_error(invalid_argument("top: ", request.top, " must be >= 1"));
  const gemm::GemmProblem problem = problem_of(request);
  gemm::ModelSource source;
  source.hw = request.hw;
  if (request.data_dir) source.data_dir = std::filesystem::path(*request.data_dir);
  source.calibration_file = request.calibration_file;
  const gemm::LoadedModel model = value_or_raise(gemm::load_model(source));
  gemm::SelectionReport report =
      value_or_raise(gemm::select_report(model, problem, static_cast<std::size_t>(request.top), true));
  nb::dict out;
  out["hw"] = report.hw;
  out["problem"] = report.problem;
  out["basis"] = report.basis;
  out["calibration"] = report.calibration;
  out["candidates"] = report.candidates;
  nb::list top;
  for (const gemm::SelectionRow& row : report.top) {
    nb::dict entry;
    entry["short_name"] = row.short_name;
    entry["config"] = row.config;
    entry["predicted_us"] = row.predicted_us;
    entry["predicted_tflops"] = row.predicted_tflops;
    entry["breakdown"] = breakdown_dict(row.breakdown);
    top.append(entry);
  }
  out["top"] = top;
  out["explanation"] = gemm::to_text(report);
  out["json"] = gemm::to_json(report);
  return out;
}

}  // namespace

void bind_gemm(nb::module_& module) {
  module.def(
      "gemm_select",
      [](std::int64_t m, std::int64_t n, std::int64_t k, const std::string& hw, const std::string& dtype,
         const std::string& layout, std::int64_t batch, const std::string& epilogue, std::int64_t lda,
         std::int64_t ldb, std::int64_t ldc, int alignment_bytes, int top, const std::optional<std::string>& data_dir,
         const std::string& calibration_file) {
        GemmSelectRequest request{m, n, k, batch, hw, dtype, layout, epilogue, lda, ldb, ldc, alignment_bytes,
                                  top, data_dir, calibration_file};
        return select(request);
      },
      nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("hw"), nb::arg("dtype"), nb::arg("layout"),
      nb::arg("batch"), nb::arg("epilogue"), nb::arg("lda"), nb::arg("ldb"), nb::arg("ldc"),
      nb::arg("alignment_bytes"), nb::arg("top"), nb::arg("data_dir").none(), nb::arg("calibration_file"),
      "The analytical selector's ranking for one GEMM on a catalogue GPU, with the model's time "
      "breakdown per candidate and the report text (`parity gemm select --explain`).");
}

}  // namespace parity::python
