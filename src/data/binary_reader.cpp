// BatchReader over a split of the binary layout: the files are memory-mapped; producing a batch
// copies the dense rows, widens labels to float and ids to int64, and writes the fixed-L offsets.
#include <algorithm>

#include "binary_format.hpp"
#include "prefetching_reader.hpp"

namespace parity::data {
namespace {

class BinarySplitReader final : public PrefetchingReader {
 public:
  BinarySplitReader(const ReaderOptions& options, DatasetSchema schema, std::int64_t num_samples,
                    std::vector<MappedFile> files, std::vector<std::string> paths)
      : PrefetchingReader(options),
        schema_(std::move(schema)),
        num_samples_(num_samples),
        files_(std::move(files)),
        paths_(std::move(paths)) {
    start();
  }
  ~BinarySplitReader() override { stop(); }

  std::int64_t num_samples() const override { return num_samples_; }
  const DatasetSchema& schema() const override { return schema_; }

 protected:
  Result<bool> produce(Batch* batch) override;
  Status restart_at(std::int64_t position) override {
    cursor_ = position;
    return Status::ok();
  }

 private:
  DatasetSchema schema_;
  std::int64_t num_samples_;
  std::vector<MappedFile> files_;   // dense, labels, sparse_0..T-1
  std::vector<std::string> paths_;  // of files_, for errors
  std::int64_t cursor_ = 0;         // next sample to produce (producer thread only)
};

Result<bool> BinarySplitReader::produce(Batch* batch) {
  const std::int64_t full = options().batch_size;
  const std::int64_t batch_size = std::min(full, num_samples_ - cursor_);
  if (batch_size <= 0 || (options().drop_last && batch_size < full)) return false;
  const std::int64_t num_dense = schema_.num_dense;
  const auto num_tables = static_cast<std::int64_t>(schema_.tables.size());
  batch->batch_size = batch_size;
  batch->dense.resize(static_cast<std::size_t>(batch_size * num_dense));
  const auto* dense = reinterpret_cast<const float*>(files_[0].data());
  std::copy_n(dense + cursor_ * num_dense, batch_size * num_dense, batch->dense.begin());
  batch->labels.resize(static_cast<std::size_t>(batch_size));
  const std::uint8_t* labels = files_[1].data() + cursor_;
  for (std::int64_t b = 0; b < batch_size; ++b) {
    if (labels[b] > 1) {
      return invalid_argument("dataset file ", paths_[1], ": sample ", cursor_ + b, " has label ",
                              int{labels[b]}, " (expected 0 or 1)");
    }
    batch->labels[b] = static_cast<float>(labels[b]);
  }
  batch->indices.resize(static_cast<std::size_t>(batch_size * schema_.ids_per_sample_total()));
  batch->offsets.resize(static_cast<std::size_t>(num_tables * batch_size + 1));
  std::int64_t at = 0;
  for (std::int64_t t = 0; t < num_tables; ++t) {
    const std::int64_t ids_per_sample = schema_.tables[t].ids_per_sample;
    const std::int64_t count = batch_size * ids_per_sample;
    std::int64_t* out = batch->indices.data() + at;
    if (index_bytes_for(schema_.tables[t].num_rows) == 4) {
      const auto* ids =
          reinterpret_cast<const std::int32_t*>(files_[2 + t].data()) + cursor_ * ids_per_sample;
      std::copy_n(ids, count, out);
    } else {
      const auto* ids =
          reinterpret_cast<const std::int64_t*>(files_[2 + t].data()) + cursor_ * ids_per_sample;
      std::copy_n(ids, count, out);
    }
    // A damaged file must not reach the embedding lookup as an out-of-range row.
    const std::int64_t num_rows = schema_.tables[t].num_rows;
    for (std::int64_t i = 0; i < count; ++i) {
      if (out[i] < 0 || out[i] >= num_rows) {
        return invalid_argument("dataset file ", paths_[2 + t], ": sample ",
                                cursor_ + i / ids_per_sample, " id ", out[i],
                                " is out of range [0, ", num_rows, ")");
      }
    }
    for (std::int64_t b = 0; b < batch_size; ++b)
      batch->offsets[t * batch_size + b] = at + b * ids_per_sample;
    at += count;
  }
  batch->offsets.back() = at;
  cursor_ += batch_size;
  return true;
}

}  // namespace

Result<std::unique_ptr<BatchReader>> open_dataset(const std::string& dir, const std::string& split,
                                                  const ReaderOptions& options) {
  PARITY_RETURN_IF_ERROR(check_split_name(split));
  PARITY_CHECK_ARG(options.batch_size >= 1, "batch_size: ", options.batch_size,
                   " is out of range [1, ...]");
  PARITY_CHECK_ARG(options.prefetch_batches >= 0, "prefetch_batches: ", options.prefetch_batches,
                   " is negative");
  PARITY_ASSIGN_OR_RETURN(DatasetInfo info, read_dataset_info(dir));
  const std::int64_t num_samples = split == "train" ? info.train_samples : info.eval_samples;
  std::vector<std::string> paths = {dense_path(dir, split), labels_path(dir, split)};
  std::vector<std::int64_t> sizes_bytes = {num_samples * 4 * info.schema.num_dense, num_samples};
  for (std::size_t t = 0; t < info.schema.tables.size(); ++t) {
    const TableSchema& table = info.schema.tables[t];
    paths.push_back(sparse_path(dir, split, static_cast<int>(t), table.num_rows));
    sizes_bytes.push_back(num_samples * table.ids_per_sample * index_bytes_for(table.num_rows));
  }
  std::vector<MappedFile> files;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(paths[i], sizes_bytes[i]));
    files.push_back(std::move(file));
  }
  return std::unique_ptr<BatchReader>(std::make_unique<BinarySplitReader>(
      options, std::move(info.schema), num_samples, std::move(files), std::move(paths)));
}

}  // namespace parity::data
