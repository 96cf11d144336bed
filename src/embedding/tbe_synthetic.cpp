// Synthetic TBE batches (see tbe_synthetic.hpp).
#include "parity/embedding/tbe_synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "parity/core/rng.hpp"

namespace parity::embedding {

SyntheticBatch make_synthetic_batch(const TbeLayout& layout, const SyntheticBatchOptions& options) {
  Rng rng(options.seed);
  SyntheticBatch batch;
  batch.offsets.push_back(0);
  for (int f = 0; f < layout.num_features(); ++f) {
    const std::int64_t rows = layout.feature_rows(f);
    // Scatter Zipf ranks over the table with a multiplicative hash, so hot rows are not adjacent.
    const std::int64_t multiplier = rows % 1000003 == 0 ? 1 : 1000003;
    for (std::int64_t b = 0; b < options.batch_size; ++b) {
      std::int64_t length = options.pooling_factor;
      if (options.vary_bag_sizes) length = rng.uniform_int(0, 2 * static_cast<std::int64_t>(options.pooling_factor));
      if (options.empty_bag_fraction > 0 && rng.uniform() < options.empty_bag_fraction) length = 0;
      for (std::int64_t k = 0; k < length; ++k) {
        std::int64_t row;
        if (options.hot_rows > 0) {
          row = rng.uniform_int(0, std::min(options.hot_rows, rows) - 1);
        } else if (options.zipf_alpha > 0) {
          const std::int64_t rank = rng.zipf_index(rows, options.zipf_alpha);
          // (rank * multiplier) mod rows without overflow: rank < rows <= 2^50, split the multiplier.
          const std::int64_t high = (rank * (multiplier >> 10)) % rows;
          row = ((high << 10) % rows + rank * (multiplier & 1023) + f) % rows;
        } else {
          row = rng.uniform_int(0, rows - 1);
        }
        batch.indices.push_back(row);
        if (options.weighted) batch.per_sample_weights.push_back(static_cast<float>(rng.uniform(0.5, 1.5)));
      }
      batch.offsets.push_back(static_cast<std::int64_t>(batch.indices.size()));
    }
  }
  return batch;
}

std::vector<std::uint8_t> pack_indices(const std::vector<std::int64_t>& values, DType index_dtype) {
  std::vector<std::uint8_t> bytes(values.size() * dtype_size_bytes(index_dtype));
  if (index_dtype == DType::kI32) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<std::int32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  } else if (!values.empty()) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
  }
  return bytes;
}

double load_as_double(const std::vector<std::uint8_t>& bytes, DType dtype, std::int64_t i) {
  if (dtype == DType::kF32) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * i, 2);
  return dtype == DType::kF16 ? fp16_bits_to_float(bits) : bf16_bits_to_float(bits);
}

std::vector<std::uint8_t> make_weights(const TbeLayout& layout, DType dtype, std::uint64_t seed,
                                       std::vector<double>* as_double) {
  Rng rng(seed);
  const std::int64_t total = layout.total_weight_elements();
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(total) * dtype_size_bytes(dtype));
  if (as_double != nullptr) as_double->resize(static_cast<std::size_t>(total));
  for (int t = 0; t < layout.num_tables(); ++t) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(layout.tables()[t].dim));
    const std::int64_t begin = layout.weights_offset(t);
    const std::int64_t end = layout.weights_offset(t + 1);
    for (std::int64_t i = begin; i < end; ++i) {
      const auto v = static_cast<float>(rng.normal() * scale);
      if (dtype == DType::kF32) {
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      } else {
        const std::uint16_t bits = dtype == DType::kF16 ? float_to_fp16_bits(v) : float_to_bf16_bits(v);
        std::memcpy(bytes.data() + 2 * i, &bits, 2);
      }
      if (as_double != nullptr) (*as_double)[i] = load_as_double(bytes, dtype, i);
    }
  }
  return bytes;
}

void count_per_feature(const TbeProblem& problem, const SyntheticBatch& batch,
                       std::vector<std::int64_t>* indices_per_feature,
                       std::vector<std::int64_t>* unique_rows_per_feature) {
  const int num_features = problem.layout.num_features();
  indices_per_feature->assign(num_features, 0);
  unique_rows_per_feature->assign(num_features, 0);
  for (int f = 0; f < num_features; ++f) {
    const std::int64_t begin = batch.offsets[f * problem.batch_size];
    const std::int64_t end = batch.offsets[(f + 1) * problem.batch_size];
    std::unordered_set<std::int64_t> unique(batch.indices.begin() + begin, batch.indices.begin() + end);
    (*indices_per_feature)[f] = end - begin;
    (*unique_rows_per_feature)[f] = static_cast<std::int64_t>(unique.size());
  }
}

}  // namespace parity::embedding
