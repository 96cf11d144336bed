// Internal: where the 16-bit variants keep the forward's saved activations inside `saved`
// (hstu_layer_saved_bytes for dtype bf16). Byte offsets, each section 256-byte aligned so the
// projections' blocks can be GEMM and TMA operands as they are.
//   n [T, D]; p as four blocks u, v [T, H d_v] and q, k [T, H d_qk] (each contiguous: the
//   attention reads q, k, v in place); a [T, H d_v]: bf16. mean1, rstd1, mean2, rstd2 [T]: fp32.
#pragma once

#include <cstdint>

#include "parity/attention/hstu_layer.hpp"

namespace parity::attention::detail {

inline std::int64_t align_section(std::int64_t bytes) { return (bytes + 255) / 256 * 256; }

struct HstuLayerSavedLayout {
  std::int64_t n = 0, u = 0, v = 0, q = 0, k = 0, a = 0;
  std::int64_t mean1 = 0, rstd1 = 0, mean2 = 0, rstd2 = 0;
  std::int64_t total_bytes = 0;
};

inline HstuLayerSavedLayout hstu_layer_saved_layout_16bit(const HstuLayerProblem& problem) {
  const std::int64_t t = problem.total_tokens;
  const std::int64_t hv = problem.attention_width();
  const std::int64_t hq = static_cast<std::int64_t>(problem.heads) * problem.dim_qk;
  HstuLayerSavedLayout layout;
  std::int64_t offset = 0;
  const auto take = [&offset](std::int64_t bytes) {
    const std::int64_t at = offset;
    offset += align_section(bytes);
    return at;
  };
  layout.n = take(t * problem.model_dim * 2);
  layout.u = take(t * hv * 2);
  layout.v = take(t * hv * 2);
  layout.q = take(t * hq * 2);
  layout.k = take(t * hq * 2);
  layout.a = take(t * hv * 2);
  layout.mean1 = take(t * 4);
  layout.rstd1 = take(t * 4);
  layout.mean2 = take(t * 4);
  layout.rstd2 = take(t * 4);
  layout.total_bytes = offset;
  return layout;
}

}  // namespace parity::attention::detail
