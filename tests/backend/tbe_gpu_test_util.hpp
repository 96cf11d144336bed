// Shared by the GPU TBE tests (tbe_gpu_forward*_test.cpp, tbe_gpu_test.cpp): a synthetic batch on
// the device, and the forward against the fp64 reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "reference/tbe.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity::testing {

struct DeviceInputs {
  gpu::DeviceBuffer indices, offsets, weights_psw;
  embedding::gpu::DeviceBatch view() const {
    return {indices.data(), offsets.data(), weights_psw.size_bytes() > 0 ? weights_psw.as<float>() : nullptr};
  }
};

inline DeviceInputs upload_batch(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch) {
  DeviceInputs d;
  d.indices = gpu::upload(embedding::pack_indices(batch.indices, problem.index_dtype)).value();
  d.offsets = gpu::upload(embedding::pack_indices(batch.offsets, problem.index_dtype)).value();
  if (!batch.per_sample_weights.empty()) d.weights_psw = gpu::upload(batch.per_sample_weights).value();
  return d;
}

// Runs `run(weights, batch, output)` (device pointers) with a NaN guard band after the output;
// checks the band and returns the output bytes.
template <typename Run>
std::vector<std::uint8_t> guarded_gpu_forward(const embedding::TbeProblem& problem,
                                              const std::vector<std::uint8_t>& weights,
                                              const embedding::SyntheticBatch& batch, Run run) {
  auto d_weights = gpu::upload(weights);
  auto inputs = upload_batch(problem, batch);
  const std::size_t out_bytes =
      static_cast<std::size_t>(problem.output_rows() * problem.output_cols()) * dtype_size_bytes(problem.output_dtype);
  constexpr std::size_t kGuardBytes = 4096;
  auto out = gpu::DeviceBuffer::allocate(out_bytes + kGuardBytes);
  EXPECT_TRUE(out->fill_bytes(0xff).is_ok());  // 0xff.. is NaN in every float dtype
  const Status status = run(d_weights->data(), inputs.view(), out->data());
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  auto host = gpu::download<std::uint8_t>(*out, out_bytes + kGuardBytes);
  EXPECT_TRUE(host.is_ok());
  for (std::size_t i = out_bytes; i < out_bytes + kGuardBytes; ++i) {
    if ((*host)[i] != 0xff) {
      ADD_FAILURE() << "guard band after the output overwritten at byte " << i - out_bytes;
      break;
    }
  }
  host->resize(out_bytes);
  return *host;
}

// The kernel-level forward (tbe_gpu.hpp) with `options`.
inline std::vector<std::uint8_t> gpu_forward(const embedding::TbeProblem& problem,
                                             const std::vector<std::uint8_t>& weights,
                                             const embedding::SyntheticBatch& batch,
                                             const embedding::gpu::ForwardOptions& options = {}) {
  auto layout = embedding::gpu::DeviceTbeLayout::create(problem.layout);
  EXPECT_TRUE(layout.is_ok());
  return guarded_gpu_forward(problem, weights, batch,
                             [&](const void* w, const embedding::gpu::DeviceBatch& b, void* out) {
                               return embedding::gpu::tbe_forward(problem, *layout, w, b, out, options);
                             });
}

// A forward forced by `options` onto `problem` (B = 2, one index: bag 0 reads row 3 of a table
// of >= 4 rows) and its status: for the refusal tests.
inline Status forced_forward_status(const embedding::TbeProblem& problem, const embedding::gpu::ForwardOptions& options) {
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, 5);
  embedding::SyntheticBatch batch;
  batch.indices = {3};
  batch.offsets.assign(static_cast<std::size_t>(problem.num_bags()) + 1, 1);
  batch.offsets[0] = 0;
  auto layout = embedding::gpu::DeviceTbeLayout::create(problem.layout);
  auto d_weights = gpu::upload(weights);
  auto out = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(problem.output_rows() * problem.output_cols()) *
                                         dtype_size_bytes(problem.output_dtype));
  auto inputs = upload_batch(problem, batch);
  return embedding::gpu::tbe_forward(problem, *layout, d_weights->data(), inputs.view(), out->data(), options);
}

// The forced kernel refuses `problem` with kUnsupported and a reason that names `needle`.
inline void expect_forced_refusal(const embedding::TbeProblem& problem, const embedding::gpu::ForwardOptions& options,
                                  const std::string& needle) {
  const Status status = forced_forward_status(problem, options);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find(needle), std::string::npos) << status.message();
}

// `got` against the fp64 reference: the derived forward tolerance per element, 5 failures shown.
inline void expect_matches_reference(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch,
                                     const std::vector<double>& weights_ref, const std::vector<std::uint8_t>& got) {
  const auto ref_batch = to_ref_batch(batch);
  const auto want = ref::tbe_forward(problem, weights_ref, ref_batch);
  const auto abs_want = abs_forward(problem, weights_ref, ref_batch);
  const std::int64_t max_bag = max_bag_length(batch.offsets);
  int failures = 0;
  for (std::size_t i = 0; i < want.size() && failures < 5; ++i) {
    const double g = embedding::load_as_double(got, problem.output_dtype, static_cast<std::int64_t>(i));
    const double tol = forward_tolerance(want[i], abs_want[i], max_bag, problem.output_dtype);
    if (!(std::abs(g - want[i]) <= tol)) {
      ADD_FAILURE() << "output[" << i << "]=" << g << " want " << want[i] << " tol " << tol;
      ++failures;
    }
  }
}

inline void expect_forward_matches(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch,
                                   std::uint64_t seed, const embedding::gpu::ForwardOptions& options = {}) {
  std::vector<double> weights_ref;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &weights_ref);
  expect_matches_reference(problem, batch, weights_ref, gpu_forward(problem, weights, batch, options));
}

// One case of the forced-kernel sweeps (tbe_gpu_forward_candidates_test.cpp and the tiles off
// 16-byte boundaries): a batch of 61 (partial tiles and groups) of bags of `pooling_factor`, 10%
// empty past 0; sum, mean or weighted sum, bf16 or fp32 output and int32 or int64 indices rotated
// by case_number; the kernel `options` forces against the fp64 reference.
inline void expect_forward_case_matches(const std::vector<embedding::TableSpec>& tables, DType weight_dtype,
                                        int pooling_factor, int case_number, std::uint64_t seed,
                                        const embedding::gpu::ForwardOptions& options, const std::string& name) {
  const int mode = case_number % 3;  // sum, mean, weighted sum
  const embedding::PoolingMode pooling = mode == 1 ? embedding::PoolingMode::kMean : embedding::PoolingMode::kSum;
  const bool weighted = mode == 2;
  embedding::SyntheticBatchOptions batch_options;
  batch_options.batch_size = 61;
  batch_options.pooling_factor = pooling_factor;
  batch_options.empty_bag_fraction = pooling_factor > 0 ? 0.1 : 0.0;
  batch_options.weighted = weighted;
  batch_options.seed = seed + static_cast<std::uint64_t>(case_number);
  auto probe = make_problem(tables, 0, 0);
  const auto batch = embedding::make_synthetic_batch(probe.layout, batch_options);
  const DType out_dtype = case_number % 2 == 0 ? DType::kBF16 : DType::kF32;
  const DType index_dtype = case_number % 5 < 2 ? DType::kI32 : DType::kI64;
  auto problem = make_problem(tables, batch_options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                              index_dtype, weight_dtype, out_dtype, pooling, weighted);
  std::string dims;
  for (const auto& table : tables) {
    if (!dims.empty()) dims += ',';
    dims += std::to_string(table.dim);
  }
  SCOPED_TRACE(name + " D=" + dims + " " + std::string(dtype_name(weight_dtype)) + " L=" +
               std::to_string(pooling_factor) + " " + embedding::pooling_mode_name(pooling) +
               (weighted ? " weighted" : "") + " out " + std::string(dtype_name(out_dtype)) + " " +
               std::string(dtype_name(index_dtype)));
  expect_forward_matches(problem, batch, batch_options.seed, options);
}

// Layouts of one weight dtype, for expect_forward_layouts_match.
struct ForwardLayouts {
  DType weight_dtype;
  std::vector<std::vector<embedding::TableSpec>> layouts;
};

// Every layout of `cases` at bag lengths 0 (all empty), 1, 2 and 7 through
// expect_forward_case_matches (the modes, output and index dtypes rotate with the case number).
inline void expect_forward_layouts_match(const std::vector<ForwardLayouts>& cases, std::uint64_t seed,
                                         const embedding::gpu::ForwardOptions& options, const std::string& name) {
  int case_number = 0;
  for (const auto& c : cases) {
    for (const auto& tables : c.layouts) {
      for (int pooling_factor : {0, 1, 2, 7}) {
        expect_forward_case_matches(tables, c.weight_dtype, pooling_factor, ++case_number, seed, options, name);
      }
    }
  }
}

// The same through the op (embedding::tbe_forward with `context`: the trainers' call).
inline void expect_op_forward_matches(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch,
                                      std::uint64_t seed, const ExecutionContext& context) {
  std::vector<double> weights_ref;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &weights_ref);
  const auto got = guarded_gpu_forward(
      problem, weights, batch, [&](const void* w, const embedding::gpu::DeviceBatch& b, void* out) {
        embedding::TbeForwardArgs args;
        args.weights = w;
        args.batch = embedding::TbeBatchView{b.indices, b.offsets, b.per_sample_weights};
        args.output = out;
        return embedding::tbe_forward(problem, args, context);
      });
  expect_matches_reference(problem, batch, weights_ref, got);
}

}  // namespace parity::testing
