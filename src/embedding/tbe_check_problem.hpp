// The built-in problem of tbe check and its comparisons with the fp64 reference, shared by the CPU
// library (tbe_check.cpp) and parity_gpu (backends/cuda/embedding/tbe_check_gpu.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/embedding/tbe.hpp"
#include "parity/embedding/tbe_check.hpp"
#include "parity/embedding/tbe_synthetic.hpp"
#include "reference/tbe.hpp"

namespace parity::embedding {

struct TbeCheckProblem {
  TbeProblem problem;
  SyntheticBatch batch;
  ref::TbeRefBatch ref_batch;
  std::vector<std::uint8_t> weights, indices, offsets;  // fp32 weights, int32 indices/offsets
  std::vector<double> weights_ref;                       // the same weights in fp64
  std::vector<float> grad;
  OptimizerParams optimizer;
};

Result<TbeCheckProblem> make_tbe_check_problem(std::uint64_t seed);
TbeCheckRow compare_tbe_forward(const std::string& path, const TbeCheckProblem& c, const std::vector<float>& got);
TbeCheckRow compare_tbe_update(const std::string& path, const TbeCheckProblem& c, const std::vector<float>& got_weights);

}  // namespace parity::embedding
