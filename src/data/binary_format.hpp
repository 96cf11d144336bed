// The binary dataset layout (docs/data.md): <dir>/manifest.json, and per split <dir>/<split>/
// dense.f32 [N, num_dense], labels.u8 [N], sparse_<t>.i32|.i64 [N, L_t], raw little-endian with no
// header. The manifest is written last and atomically: a directory without one is incomplete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/data/dataset.hpp"

namespace parity::data {

inline constexpr int kDatasetFormatVersion = 1;

// int32 ids while every row fits, else int64.
int index_bytes_for(std::int64_t num_rows);
// Bytes one sample takes over all of a split's files.
std::int64_t bytes_per_sample(const DatasetSchema& schema);
std::string dense_path(const std::string& dir, const std::string& split);
std::string labels_path(const std::string& dir, const std::string& split);
std::string sparse_path(const std::string& dir, const std::string& split, int table,
                        std::int64_t num_rows);
Status check_split_name(const std::string& split);

Status write_manifest(const std::string& dir, const DatasetInfo& info);

// Writes a split's files at sample positions (pwrite, so threads may write disjoint ranges).
class SplitWriter {
 public:
  static Result<SplitWriter> create(const std::string& dir, const std::string& split,
                                    const DatasetSchema& schema);
  SplitWriter(SplitWriter&& other) noexcept;
  SplitWriter& operator=(SplitWriter&&) = delete;
  SplitWriter(const SplitWriter&) = delete;
  ~SplitWriter();
  // Samples [first_sample, first_sample + count): dense [count, num_dense], labels [count],
  // ids_per_table[t] [count, L_t] (narrowed to the file's index width).
  Status write(std::int64_t first_sample, std::int64_t count, const float* dense,
               const std::uint8_t* labels,
               const std::vector<const std::int64_t*>& ids_per_table) const;
  // Flushes to disk and closes; the files must hold exactly num_samples samples.
  Status finish(std::int64_t num_samples);

 private:
  SplitWriter() = default;
  DatasetSchema schema_;
  std::vector<std::string> paths_;  // dense, labels, sparse_0..T-1
  std::vector<int> fds_;
};

// A read-only memory map of a whole file (empty files map nothing).
class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path, std::int64_t expected_bytes);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();
  const std::uint8_t* data() const { return data_; }

 private:
  MappedFile() = default;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_bytes_ = 0;
};

}  // namespace parity::data
