// Manifest (JSON through nlohmann, never in a public header), split writer and memory maps.
#include "binary_format.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

namespace parity::data {
namespace {

std::string errno_text() { return std::strerror(errno); }

Status pwrite_all(int fd, const void* data, std::size_t size_bytes, std::int64_t offset,
                  const std::string& path) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  while (size_bytes > 0) {
    const ssize_t written = ::pwrite(fd, bytes, size_bytes, static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      return io_error("dataset file ", path, ": write failed: ", errno_text());
    }
    bytes += written;
    offset += written;
    size_bytes -= static_cast<std::size_t>(written);
  }
  return Status::ok();
}

// NaN (e.g. the AUC of a one-class eval split) is written as null and read back as NaN.
nlohmann::json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json();
}
double number_or_nan(const nlohmann::json& manifest, const char* key) {
  const auto found = manifest.find(key);
  if (found == manifest.end() || found->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return found->get<double>();
}

}  // namespace

int index_bytes_for(std::int64_t num_rows) {
  return num_rows <= std::numeric_limits<std::int32_t>::max() ? 4 : 8;
}

std::string dense_path(const std::string& dir, const std::string& split) {
  return dir + "/" + split + "/dense.f32";
}
std::string labels_path(const std::string& dir, const std::string& split) {
  return dir + "/" + split + "/labels.u8";
}
std::string sparse_path(const std::string& dir, const std::string& split, int table,
                        std::int64_t num_rows) {
  return dir + "/" + split + "/sparse_" + std::to_string(table) +
         (index_bytes_for(num_rows) == 4 ? ".i32" : ".i64");
}

Status check_split_name(const std::string& split) {
  PARITY_CHECK_ARG(split == "train" || split == "eval", "split: '", split,
                   "' is not one of train, eval");
  return Status::ok();
}

Status write_manifest(const std::string& dir, const DatasetInfo& info) {
  nlohmann::json tables = nlohmann::json::array();
  for (const TableSchema& table : info.schema.tables) {
    tables.push_back({{"num_rows", table.num_rows},
                      {"ids_per_sample", table.ids_per_sample},
                      {"index_dtype", index_bytes_for(table.num_rows) == 4 ? "int32" : "int64"}});
  }
  nlohmann::json details = nlohmann::json::object();
  for (const auto& [key, value] : info.details) details[key] = value;
  const nlohmann::json manifest = {{"format", "parity-dataset"},
                                   {"version", kDatasetFormatVersion},
                                   {"source", info.source},
                                   {"seed", info.seed},
                                   {"num_dense", info.schema.num_dense},
                                   {"dense_dtype", "float32"},
                                   {"label_dtype", "uint8"},
                                   {"tables", tables},
                                   {"splits",
                                    {{"train", {{"num_samples", info.train_samples}}},
                                     {"eval", {{"num_samples", info.eval_samples}}}}},
                                   {"planted_auc", finite_or_null(info.planted_auc)},
                                   {"positive_rate", finite_or_null(info.positive_rate)},
                                   {"details", details}};
  const std::string path = dir + "/manifest.json";
  const std::string tmp_path = path + ".tmp";
  {
    std::ofstream out(tmp_path, std::ios::trunc);
    out << manifest.dump(2) << "\n";
    if (!out) return io_error("dataset ", dir, ": cannot write ", tmp_path);
  }
  if (std::rename(tmp_path.c_str(), path.c_str()) != 0) {
    return io_error("dataset ", dir, ": cannot rename ", tmp_path, ": ", errno_text());
  }
  return Status::ok();
}

namespace {

Result<DatasetInfo> parse_manifest(const nlohmann::json& manifest, const std::string& path) {
  PARITY_CHECK_ARG(manifest.value("format", "") == "parity-dataset", "dataset manifest ", path,
                   ": format is not 'parity-dataset'");
  const int version = manifest.at("version").get<int>();
  PARITY_CHECK_ARG(version == kDatasetFormatVersion, "dataset manifest ", path, ": version ",
                   version, " (this build reads version ", kDatasetFormatVersion, ")");
  PARITY_CHECK_ARG(manifest.at("dense_dtype").get<std::string>() == "float32" &&
                       manifest.at("label_dtype").get<std::string>() == "uint8",
                   "dataset manifest ", path,
                   ": dense_dtype must be float32 and label_dtype uint8");
  DatasetInfo info;
  info.schema.num_dense = manifest.at("num_dense").get<int>();
  for (const auto& table : manifest.at("tables")) {
    info.schema.tables.push_back(
        {table.at("num_rows").get<std::int64_t>(), table.at("ids_per_sample").get<int>()});
    const std::string dtype = table.at("index_dtype").get<std::string>();
    PARITY_CHECK_ARG(
        dtype == (index_bytes_for(info.schema.tables.back().num_rows) == 4 ? "int32" : "int64"),
        "dataset manifest ", path, ": table ", info.schema.tables.size() - 1, " index_dtype ",
        dtype, " does not match its num_rows");
  }
  const Status schema_status = info.schema.validate();
  if (!schema_status.is_ok()) return schema_status.with_context("dataset manifest " + path);
  info.train_samples = manifest.at("splits").at("train").at("num_samples").get<std::int64_t>();
  info.eval_samples = manifest.at("splits").at("eval").at("num_samples").get<std::int64_t>();
  PARITY_CHECK_ARG(info.train_samples >= 0 && info.eval_samples >= 0, "dataset manifest ", path,
                   ": negative sample count");
  info.source = manifest.at("source").get<std::string>();
  info.seed = manifest.at("seed").get<std::uint64_t>();
  info.planted_auc = number_or_nan(manifest, "planted_auc");
  info.positive_rate = number_or_nan(manifest, "positive_rate");
  const nlohmann::json details = manifest.value("details", nlohmann::json::object());
  for (const auto& [key, value] : details.items()) {
    if (value.is_number()) info.details.emplace_back(key, value.get<double>());
  }
  return info;
}

}  // namespace

Result<DatasetInfo> read_dataset_info(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(dir))
      return not_found("dataset ", dir, ": directory does not exist");
    return not_found("dataset ", dir,
                     ": no manifest.json (not a dataset, or its writing did not finish)");
  }
  try {
    const nlohmann::json manifest = nlohmann::json::parse(in);
    return parse_manifest(manifest, path);
  } catch (const std::exception& error) {
    return invalid_argument("dataset manifest ", path, ": ", error.what());
  }
}

Result<SplitWriter> SplitWriter::create(const std::string& dir, const std::string& split,
                                        const DatasetSchema& schema) {
  PARITY_RETURN_IF_ERROR(schema.validate());
  PARITY_RETURN_IF_ERROR(check_split_name(split));
  std::error_code error;
  std::filesystem::create_directories(dir + "/" + split, error);
  if (error)
    return io_error("dataset ", dir, ": cannot create ", dir, "/", split, ": ", error.message());
  // A dataset written here before may have had more tables: its extra sparse files would linger.
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/" + split, error)) {
    const std::string name = entry.path().filename().string();
    const bool is_sparse_file =
        name.rfind("sparse_", 0) == 0 && (name.ends_with(".i32") || name.ends_with(".i64"));
    if (is_sparse_file) std::filesystem::remove(entry.path(), error);
  }
  SplitWriter writer;
  writer.schema_ = schema;
  writer.paths_ = {dense_path(dir, split), labels_path(dir, split)};
  for (std::size_t t = 0; t < schema.tables.size(); ++t) {
    writer.paths_.push_back(
        sparse_path(dir, split, static_cast<int>(t), schema.tables[t].num_rows));
  }
  for (const std::string& path : writer.paths_) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return io_error("dataset file ", path, ": cannot create: ", errno_text());
    writer.fds_.push_back(fd);
  }
  return writer;
}

SplitWriter::SplitWriter(SplitWriter&& other) noexcept
    : schema_(std::move(other.schema_)),
      paths_(std::move(other.paths_)),
      fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

SplitWriter::~SplitWriter() {
  for (const int fd : fds_) ::close(fd);
}

std::int64_t bytes_per_sample(const DatasetSchema& schema) {
  std::int64_t bytes = 4 * std::int64_t{schema.num_dense} + 1;
  for (const TableSchema& table : schema.tables)
    bytes += index_bytes_for(table.num_rows) * table.ids_per_sample;
  return bytes;
}

Status SplitWriter::write(std::int64_t first_sample, std::int64_t count, const float* dense,
                          const std::uint8_t* labels,
                          const std::vector<const std::int64_t*>& ids_per_table) const {
  PARITY_CHECK_ARG(ids_per_table.size() == schema_.tables.size(),
                   "SplitWriter::write: ", ids_per_table.size(), " id arrays for ",
                   schema_.tables.size(), " tables");
  const std::int64_t dense_row_bytes = 4 * std::int64_t{schema_.num_dense};
  PARITY_RETURN_IF_ERROR(pwrite_all(fds_[0], dense,
                                    static_cast<std::size_t>(count * dense_row_bytes),
                                    first_sample * dense_row_bytes, paths_[0]));
  PARITY_RETURN_IF_ERROR(
      pwrite_all(fds_[1], labels, static_cast<std::size_t>(count), first_sample, paths_[1]));
  std::vector<std::int32_t> narrowed;
  for (std::size_t t = 0; t < schema_.tables.size(); ++t) {
    const std::int64_t ids = count * schema_.tables[t].ids_per_sample;
    const std::int64_t first_id = first_sample * schema_.tables[t].ids_per_sample;
    if (index_bytes_for(schema_.tables[t].num_rows) == 8) {
      PARITY_RETURN_IF_ERROR(pwrite_all(fds_[2 + t], ids_per_table[t],
                                        static_cast<std::size_t>(ids) * 8, first_id * 8,
                                        paths_[2 + t]));
      continue;
    }
    narrowed.assign(ids_per_table[t], ids_per_table[t] + ids);  // every id < num_rows <= INT32_MAX
    PARITY_RETURN_IF_ERROR(pwrite_all(fds_[2 + t], narrowed.data(),
                                      static_cast<std::size_t>(ids) * 4, first_id * 4,
                                      paths_[2 + t]));
  }
  return Status::ok();
}

Status SplitWriter::finish(std::int64_t num_samples) {
  for (std::size_t i = 0; i < fds_.size(); ++i) {
    std::int64_t row_bytes = 1;
    if (i == 0) row_bytes = 4 * std::int64_t{schema_.num_dense};
    if (i >= 2)
      row_bytes =
          index_bytes_for(schema_.tables[i - 2].num_rows) * schema_.tables[i - 2].ids_per_sample;
    if (::ftruncate(fds_[i], static_cast<off_t>(num_samples * row_bytes)) != 0 ||
        ::fsync(fds_[i]) != 0) {
      return io_error("dataset file ", paths_[i], ": cannot finish: ", errno_text());
    }
    ::close(fds_[i]);
  }
  fds_.clear();
  return Status::ok();
}

Result<MappedFile> MappedFile::open(const std::string& path, std::int64_t expected_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found("dataset file ", path, ": does not exist");
    return io_error("dataset file ", path, ": cannot open: ", errno_text());
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    ::close(fd);
    return io_error("dataset file ", path, ": stat failed: ", errno_text());
  }
  if (info.st_size != expected_bytes) {
    ::close(fd);
    return io_error("dataset file ", path, ": has ", info.st_size, " bytes, expected ",
                    expected_bytes, " (from manifest.json)");
  }
  MappedFile file;
  file.size_bytes_ = static_cast<std::size_t>(expected_bytes);
  if (file.size_bytes_ > 0) {
    void* data = ::mmap(nullptr, file.size_bytes_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      ::close(fd);
      return io_error("dataset file ", path, ": mmap failed: ", errno_text());
    }
    ::madvise(data, file.size_bytes_, MADV_SEQUENTIAL);
    file.data_ = static_cast<const std::uint8_t*>(data);
  }
  ::close(fd);  // the mapping keeps the file open
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_bytes_(std::exchange(other.size_bytes_, 0)) {}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_bytes_);
}

}  // namespace parity::data
