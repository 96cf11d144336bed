#include <cmath>

#include "parity/data/dataset.hpp"

namespace parity::data {

Status DatasetSchema::validate() const {
  PARITY_CHECK_ARG(num_dense >= 0 && num_dense <= kMaxDenseFeatures, "schema: num_dense ",
                   num_dense, " is out of range [0, ", kMaxDenseFeatures, "]");
  PARITY_CHECK_ARG(!tables.empty(), "schema: no tables (expected at least 1)");
  for (std::size_t t = 0; t < tables.size(); ++t) {
    PARITY_CHECK_ARG(tables[t].num_rows >= 1, "schema: table ", t, " num_rows ", tables[t].num_rows,
                     " is out of range [1, ...]");
    PARITY_CHECK_ARG(tables[t].ids_per_sample >= 1 && tables[t].ids_per_sample <= kMaxIdsPerSample,
                     "schema: table ", t, " ids_per_sample ", tables[t].ids_per_sample,
                     " is out of range [1, ", kMaxIdsPerSample, "]");
  }
  return Status::ok();
}

std::int64_t DatasetSchema::ids_per_sample_total() const {
  std::int64_t total = 0;
  for (const TableSchema& table : tables) total += table.ids_per_sample;
  return total;
}

Status validate_batch(const DatasetSchema& schema, const Batch& batch) {
  const std::int64_t batch_size = batch.batch_size;
  const auto num_tables = static_cast<std::int64_t>(schema.tables.size());
  PARITY_CHECK_ARG(batch_size >= 0, "batch: batch_size ", batch_size, " is negative");
  PARITY_CHECK_ARG(static_cast<std::int64_t>(batch.dense.size()) == batch_size * schema.num_dense,
                   "batch: dense has ", batch.dense.size(), " values, expected ",
                   batch_size * schema.num_dense);
  PARITY_CHECK_ARG(static_cast<std::int64_t>(batch.labels.size()) == batch_size,
                   "batch: labels has ", batch.labels.size(), " values, expected ", batch_size);
  PARITY_CHECK_ARG(static_cast<std::int64_t>(batch.offsets.size()) == num_tables * batch_size + 1,
                   "batch: offsets has ", batch.offsets.size(), " entries, expected ",
                   num_tables * batch_size + 1);
  PARITY_CHECK_ARG(
      static_cast<std::int64_t>(batch.indices.size()) == batch_size * schema.ids_per_sample_total(),
      "batch: indices has ", batch.indices.size(), " entries, expected ",
      batch_size * schema.ids_per_sample_total());
  std::int64_t expected_offset = 0;
  for (std::int64_t t = 0; t < num_tables; ++t) {
    const TableSchema& table = schema.tables[t];
    for (std::int64_t b = 0; b < batch_size; ++b) {
      const std::int64_t bag = t * batch_size + b;
      PARITY_CHECK_ARG(batch.offsets[bag] == expected_offset, "batch: offsets[", bag,
                       "]=", batch.offsets[bag], ", expected ", expected_offset);
      for (int k = 0; k < table.ids_per_sample; ++k) {
        const std::int64_t id = batch.indices[expected_offset + k];
        PARITY_CHECK_ARG(id >= 0 && id < table.num_rows, "batch: table ", t, " sample ", b, " id ",
                         id, " is out of range [0, ", table.num_rows, ")");
      }
      expected_offset += table.ids_per_sample;
    }
  }
  PARITY_CHECK_ARG(batch.offsets.back() == expected_offset,
                   "batch: offsets[last]=", batch.offsets.back(), ", expected ", expected_offset);
  for (std::int64_t b = 0; b < batch_size; ++b) {
    PARITY_CHECK_ARG(batch.labels[b] == 0.0f || batch.labels[b] == 1.0f, "batch: labels[", b,
                     "]=", batch.labels[b], " is not 0 or 1");
  }
  for (std::size_t i = 0; i < batch.dense.size(); ++i) {
    PARITY_CHECK_ARG(std::isfinite(batch.dense[i]), "batch: dense[", i, "] is not finite");
  }
  return Status::ok();
}

}  // namespace parity::data
