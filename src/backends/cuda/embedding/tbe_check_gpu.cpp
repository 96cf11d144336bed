// tbe check's GPU rows (include/parity/embedding/tbe_check.hpp): the portable kernels on the
// built-in problem, compared under the same derived tolerances as the CPU path.
#include "embedding/tbe_check_problem.hpp"
#include "parity/core/gpu.hpp"
#include "parity/embedding/tbe_gpu.hpp"

namespace parity::embedding {

Status tbe_check_gpu(std::uint64_t seed, TbeCheckReport* report) {
  namespace eg = embedding::gpu;
  if (parity::gpu::device_count() == 0) return unsupported("tbe check: no GPU device visible");
  PARITY_ASSIGN_OR_RETURN(const TbeCheckProblem c, make_tbe_check_problem(seed));
  PARITY_ASSIGN_OR_RETURN(auto layout, eg::DeviceTbeLayout::create(c.problem.layout));
  PARITY_ASSIGN_OR_RETURN(auto weights, parity::gpu::upload(c.weights));
  PARITY_ASSIGN_OR_RETURN(auto indices, parity::gpu::upload(c.indices));
  PARITY_ASSIGN_OR_RETURN(auto offsets, parity::gpu::upload(c.offsets));
  PARITY_ASSIGN_OR_RETURN(auto psw, parity::gpu::upload(c.batch.per_sample_weights));
  PARITY_ASSIGN_OR_RETURN(auto grad, parity::gpu::upload(c.grad));
  const std::int64_t out_elements = c.problem.output_rows() * c.problem.output_cols();
  PARITY_ASSIGN_OR_RETURN(auto out, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(out_elements) * 4));
  const eg::DeviceBatch batch{indices.data(), offsets.data(), psw.as<float>()};
  PARITY_RETURN_IF_ERROR(eg::tbe_forward(c.problem, layout, weights.data(), batch, out.data()));
  PARITY_ASSIGN_OR_RETURN(auto host_out, parity::gpu::download<float>(out, static_cast<std::size_t>(out_elements)));
  report->rows.push_back(compare_tbe_forward("gpu", c, host_out));
  PARITY_ASSIGN_OR_RETURN(
      auto state, parity::gpu::upload(std::vector<float>(static_cast<std::size_t>(c.problem.layout.total_rows()), 0.0f)));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t ws_bytes, eg::tbe_backward_workspace_bytes(c.problem));
  PARITY_ASSIGN_OR_RETURN(auto ws, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(ws_bytes)));
  PARITY_RETURN_IF_ERROR(eg::tbe_backward_fused(c.problem, layout, c.optimizer, {weights.data(), state.as<float>(), nullptr},
                                                batch, grad.as<float>(), ws.data(), ws_bytes));
  PARITY_ASSIGN_OR_RETURN(auto host_weights, parity::gpu::download<float>(weights, c.weights_ref.size()));
  report->rows.push_back(compare_tbe_update("gpu", c, host_weights));
  // Bounds check in error mode on three planted bad indices: reported, data untouched.
  auto bad = c.batch.indices;
  for (std::size_t k : {std::size_t{5}, bad.size() / 2, bad.size() - 1}) bad[k] = -1;
  PARITY_ASSIGN_OR_RETURN(auto bad_indices, parity::gpu::upload(pack_indices(bad, DType::kI32)));
  const std::int64_t bc_bytes = eg::bounds_check_workspace_bytes(c.problem);
  PARITY_ASSIGN_OR_RETURN(auto bc_ws, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(bc_bytes)));
  PARITY_RETURN_IF_ERROR(eg::bounds_check(c.problem, layout, BoundsCheckMode::kError, bad_indices.data(), offsets.data(),
                                          bc_ws.data(), bc_bytes));
  PARITY_ASSIGN_OR_RETURN(auto bounds, eg::read_bounds_check_report(c.problem, BoundsCheckMode::kError, bad_indices.data(),
                                                                    offsets.data(), bc_ws.data()));
  if (bounds.bad_indices != 3) {
    return internal_error("tbe check: gpu bounds check found ", bounds.bad_indices, " of 3 bad indices");
  }
  report->notes.push_back("gpu bounds check (error mode, 3 planted): " +
                          bounds_check_status(bounds, BoundsCheckMode::kError).message());
  return Status::ok();
}

}  // namespace parity::embedding
