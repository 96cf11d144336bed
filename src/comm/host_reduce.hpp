// Host-side element loops shared by the host communicators: bf16/fp16 widening to fp32 and back
// (reductions accumulate in fp32, one rounding at the end), avg's final division, and the
// rank-order fold of deterministic mode. Private to src/comm.
#pragma once

#include <cstdint>

#include "parity/comm/communicator.hpp"

namespace parity::comm::detail {

bool is_float_dtype(DType dtype);  // fp32, fp64, bf16, fp16

/// bf16/fp16 -> fp32, exactly.
void widen_to_f32(DType dtype, const void* input, float* output, std::int64_t count);
/// fp32 -> bf16/fp16, round to nearest even.
void narrow_from_f32(DType dtype, const float* input, void* output, std::int64_t count);

/// x /= divisor for every element (floats: correctly rounded division; ints: truncation toward 0).
void divide_in_place(DType dtype, void* data, std::int64_t count, int divisor);

/// output[i] = fold over b = 0..num_blocks-1 of blocks[b * block_elements + i], left to right
/// (acc = b0; acc = op(acc, b1); ...), in the dtype's own arithmetic (fp32 for fp32, fp64 for fp64,
/// wrap-around-free int64/int32 for ints). dtype in {fp32, fp64, int32, int64}.
void fold_blocks(DType dtype, ReduceOp op, const void* blocks, int num_blocks,
                 std::int64_t block_elements, void* output);

}  // namespace parity::comm::detail
