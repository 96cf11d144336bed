// Checkpoint container: see the header for the layout. Writing goes to <path>.tmp, is fsynced,
// renamed over <path> and the directory fsynced, so the name always points at a complete file.
// Reading checks, in order: size against the header, magic, header CRC, version, file size, the
// table CRC, then each blob's CRC; every error names the file.
#include "parity/train/checkpoint_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

namespace parity::train {
namespace {

constexpr char kMagic[8] = {'P', 'R', 'T', 'Y', 'C', 'K', 'P', 'T'};
constexpr std::size_t kMaxBlobNameBytes = 4096;
constexpr std::uint64_t kBlobAlignmentBytes = 64;
constexpr std::size_t kCrcChunkBytes = std::size_t{1} << 30;  // zlib's crc32 takes a 32-bit length

std::uint32_t crc32_of(const void* data, std::size_t size_bytes, std::uint32_t crc = 0) {
  const auto* bytes = static_cast<const Bytef*>(data);
  while (size_bytes > 0) {
    const std::size_t chunk = std::min(size_bytes, kCrcChunkBytes);
    crc = static_cast<std::uint32_t>(::crc32(crc, bytes, static_cast<uInt>(chunk)));
    bytes += chunk;
    size_bytes -= chunk;
  }
  return crc;
}

template <typename T>
void put(std::vector<std::uint8_t>* out, T value) {
  const std::size_t at = out->size();
  out->resize(at + sizeof(T));
  std::memcpy(out->data() + at, &value, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
}

template <typename T>
T get(const std::uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof(T));
  return value;
}

std::uint64_t align_up(std::uint64_t value) {
  return (value + kBlobAlignmentBytes - 1) / kBlobAlignmentBytes * kBlobAlignmentBytes;
}

std::string errno_text() { return std::strerror(errno); }

Status write_all(int fd, const void* data, std::size_t size_bytes, const std::string& path) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  while (size_bytes > 0) {
    const ssize_t written = ::write(fd, bytes, std::min<std::size_t>(size_bytes, kCrcChunkBytes));
    if (written < 0) {
      if (errno == EINTR) continue;
      return io_error("checkpoint ", path, ": write failed: ", errno_text());
    }
    bytes += written;
    size_bytes -= static_cast<std::size_t>(written);
  }
  return Status::ok();
}

Status read_all(int fd, void* data, std::size_t size_bytes, const std::string& path) {
  auto* bytes = static_cast<std::uint8_t*>(data);
  while (size_bytes > 0) {
    const ssize_t got = ::read(fd, bytes, std::min<std::size_t>(size_bytes, kCrcChunkBytes));
    if (got < 0) {
      if (errno == EINTR) continue;
      return io_error("checkpoint ", path, ": read failed: ", errno_text());
    }
    if (got == 0) return io_error("checkpoint ", path, ": file shrank while being read");
    bytes += got;
    size_bytes -= static_cast<std::size_t>(got);
  }
  return Status::ok();
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

Status validate_names(const std::vector<BlobView>& blobs, const std::string& path) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    const std::string& name = blobs[i].name;
    PARITY_CHECK_ARG(!name.empty() && name.size() <= kMaxBlobNameBytes, "checkpoint ", path,
                     ": blob ", i, " name has ", name.size(), " bytes (expected 1 to ",
                     kMaxBlobNameBytes, ")");
    PARITY_CHECK_ARG(seen.insert(name).second, "checkpoint ", path, ": blob name '", name,
                     "' appears twice");
    PARITY_CHECK_ARG(blobs[i].data != nullptr || blobs[i].size_bytes == 0, "checkpoint ", path,
                     ": blob '", name, "' has ", blobs[i].size_bytes, " bytes but no data");
  }
  return Status::ok();
}

// Header + table for `blobs`, with the data offsets they will be written at.
std::vector<std::uint8_t> encode_header_and_table(const std::vector<BlobView>& blobs,
                                                  std::vector<std::uint64_t>* data_offsets) {
  std::uint64_t table_bytes = 0;
  for (const BlobView& blob : blobs) table_bytes += 4 + blob.name.size() + 8 + 8 + 4;
  std::uint64_t offset = align_up(kCheckpointHeaderBytes + table_bytes);
  std::vector<std::uint8_t> table;
  data_offsets->clear();
  for (const BlobView& blob : blobs) {
    put<std::uint32_t>(&table, static_cast<std::uint32_t>(blob.name.size()));
    table.insert(table.end(), blob.name.begin(), blob.name.end());
    put<std::uint64_t>(&table, offset);
    put<std::uint64_t>(&table, blob.size_bytes);
    put<std::uint32_t>(&table, crc32_of(blob.data, blob.size_bytes));
    data_offsets->push_back(offset);
    offset = align_up(offset + blob.size_bytes);
  }
  const std::uint64_t file_bytes = blobs.empty() ? kCheckpointHeaderBytes + table_bytes
                                                 : data_offsets->back() + blobs.back().size_bytes;
  std::vector<std::uint8_t> out(sizeof(kMagic));
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  put<std::uint32_t>(&out, kCheckpointFileVersion);
  put<std::uint32_t>(&out, static_cast<std::uint32_t>(blobs.size()));
  put<std::uint64_t>(&out, table_bytes);
  put<std::uint64_t>(&out, file_bytes);
  put<std::uint32_t>(&out, crc32_of(table.data(), table.size()));
  put<std::uint32_t>(&out, crc32_of(out.data(), out.size()));
  out.insert(out.end(), table.begin(), table.end());
  return out;
}

Status fsync_directory_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = std::filesystem::path(".");
  FileDescriptor fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0)
    return io_error("checkpoint ", path, ": cannot open directory ", dir, ": ", errno_text());
  if (::fsync(fd.get()) != 0)
    return io_error("checkpoint ", path, ": fsync of directory failed: ", errno_text());
  return Status::ok();
}

void notify(const CheckpointWriteOptions& options, CheckpointWritePhase phase) {
  if (options.on_phase) options.on_phase(phase);
}

Status write_temp_file(const std::string& tmp_path, const std::string& path,
                       const std::vector<BlobView>& blobs, const CheckpointWriteOptions& options) {
  FileDescriptor fd(::open(tmp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    return io_error("checkpoint ", path, ": cannot create ", tmp_path, ": ", errno_text());
  notify(options, CheckpointWritePhase::kTempOpened);
  std::vector<std::uint64_t> data_offsets;
  const std::vector<std::uint8_t> head = encode_header_and_table(blobs, &data_offsets);
  PARITY_RETURN_IF_ERROR(write_all(fd.get(), head.data(), head.size(), path));
  std::uint64_t position = head.size();
  static const std::uint8_t kZeros[kBlobAlignmentBytes] = {};
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    PARITY_RETURN_IF_ERROR(write_all(fd.get(), kZeros, data_offsets[i] - position, path));
    PARITY_RETURN_IF_ERROR(write_all(fd.get(), blobs[i].data, blobs[i].size_bytes, path));
    position = data_offsets[i] + blobs[i].size_bytes;
    notify(options, CheckpointWritePhase::kBlobWritten);
  }
  if (::fsync(fd.get()) != 0)
    return io_error("checkpoint ", path, ": fsync failed: ", errno_text());
  if (::close(fd.release()) != 0)
    return io_error("checkpoint ", path, ": close failed: ", errno_text());
  notify(options, CheckpointWritePhase::kTempSynced);
  return Status::ok();
}

}  // namespace

Status write_checkpoint_file(const std::string& path, const std::vector<BlobView>& blobs,
                             const CheckpointWriteOptions& options) {
  PARITY_CHECK_ARG(!path.empty(), "checkpoint path is empty");
  PARITY_RETURN_IF_ERROR(validate_names(blobs, path));
  const std::string tmp_path = path + ".tmp";
  const Status written = write_temp_file(tmp_path, path, blobs, options);
  if (!written.is_ok()) {
    ::unlink(tmp_path.c_str());
    return written;
  }
  if (::rename(tmp_path.c_str(), path.c_str()) != 0) {
    const Status failed =
        io_error("checkpoint ", path, ": rename from ", tmp_path, " failed: ", errno_text());
    ::unlink(tmp_path.c_str());
    return failed;
  }
  notify(options, CheckpointWritePhase::kRenamed);
  return fsync_directory_of(path);
}

Status write_checkpoint_file(const std::string& path, const std::vector<NamedBlob>& blobs) {
  std::vector<BlobView> views;
  views.reserve(blobs.size());
  for (const NamedBlob& blob : blobs)
    views.push_back({blob.name, blob.bytes.data(), blob.bytes.size()});
  return write_checkpoint_file(path, views);
}

namespace {

struct TableEntry {
  std::string name;
  std::uint64_t offset = 0;
  std::uint64_t size_bytes = 0;
  std::uint32_t crc = 0;
};

Result<std::vector<TableEntry>> decode_table(const std::vector<std::uint8_t>& table,
                                             std::uint32_t num_blobs, std::uint64_t file_bytes,
                                             const std::string& path) {
  std::vector<TableEntry> entries;
  std::size_t at = 0;
  const auto corrupt = [&](const std::string& what) {
    return io_error("checkpoint ", path, ": corrupt blob table (", what, ")");
  };
  for (std::uint32_t i = 0; i < num_blobs; ++i) {
    if (at + 4 > table.size()) return corrupt("entry " + std::to_string(i) + " past the table end");
    const auto name_bytes = get<std::uint32_t>(table.data() + at);
    at += 4;
    if (name_bytes > kMaxBlobNameBytes || at + name_bytes + 20 > table.size()) {
      return corrupt("entry " + std::to_string(i) + " past the table end");
    }
    TableEntry entry;
    entry.name.assign(reinterpret_cast<const char*>(table.data() + at), name_bytes);
    at += name_bytes;
    entry.offset = get<std::uint64_t>(table.data() + at);
    entry.size_bytes = get<std::uint64_t>(table.data() + at + 8);
    entry.crc = get<std::uint32_t>(table.data() + at + 16);
    at += 20;
    if (entry.offset > file_bytes || entry.size_bytes > file_bytes - entry.offset) {
      return corrupt("blob '" + entry.name + "' lies past the end of the file");
    }
    entries.push_back(std::move(entry));
  }
  if (at != table.size())
    return corrupt("table has " + std::to_string(table.size() - at) + " trailing bytes");
  return entries;
}

}  // namespace

Result<std::vector<NamedBlob>> read_checkpoint_file(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return not_found("checkpoint ", path, ": file does not exist");
    return io_error("checkpoint ", path, ": cannot open: ", errno_text());
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0)
    return io_error("checkpoint ", path, ": stat failed: ", errno_text());
  const auto actual_bytes = static_cast<std::uint64_t>(info.st_size);
  if (actual_bytes < kCheckpointHeaderBytes) {
    return io_error("checkpoint ", path, ": truncated: expected at least ", kCheckpointHeaderBytes,
                    " bytes (the header), found ", actual_bytes);
  }
  std::uint8_t header[kCheckpointHeaderBytes];
  PARITY_RETURN_IF_ERROR(read_all(fd.get(), header, sizeof(header), path));
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return io_error("checkpoint ", path, ": wrong magic (not a Parity checkpoint file)");
  }
  if (get<std::uint32_t>(header + 36) != crc32_of(header, 36)) {
    return io_error("checkpoint ", path, ": checksum mismatch in the header");
  }
  const auto version = get<std::uint32_t>(header + 8);
  if (version != kCheckpointFileVersion) {
    return io_error("checkpoint ", path, ": wrong version ", version, " (this build reads version ",
                    kCheckpointFileVersion, ")");
  }
  const auto num_blobs = get<std::uint32_t>(header + 12);
  const auto table_bytes = get<std::uint64_t>(header + 16);
  const auto file_bytes = get<std::uint64_t>(header + 24);
  if (actual_bytes != file_bytes) {
    return io_error("checkpoint ", path, ": ",
                    actual_bytes < file_bytes ? "truncated" : "size mismatch", ": expected ",
                    file_bytes, " bytes, found ", actual_bytes);
  }
  if (table_bytes > file_bytes - kCheckpointHeaderBytes) {
    return io_error("checkpoint ", path, ": corrupt header (table of ", table_bytes,
                    " bytes in a file of ", file_bytes, ")");
  }
  std::vector<std::uint8_t> table(table_bytes);
  PARITY_RETURN_IF_ERROR(read_all(fd.get(), table.data(), table.size(), path));
  if (get<std::uint32_t>(header + 32) != crc32_of(table.data(), table.size())) {
    return io_error("checkpoint ", path, ": checksum mismatch in the blob table");
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<TableEntry> entries,
                          decode_table(table, num_blobs, file_bytes, path));
  std::vector<NamedBlob> blobs;
  blobs.reserve(entries.size());
  for (const TableEntry& entry : entries) {
    NamedBlob blob{entry.name, std::vector<std::uint8_t>(entry.size_bytes)};
    if (::lseek(fd.get(), static_cast<off_t>(entry.offset), SEEK_SET) < 0) {
      return io_error("checkpoint ", path, ": seek failed: ", errno_text());
    }
    PARITY_RETURN_IF_ERROR(read_all(fd.get(), blob.bytes.data(), blob.bytes.size(), path));
    if (crc32_of(blob.bytes.data(), blob.bytes.size()) != entry.crc) {
      return io_error("checkpoint ", path, ": checksum mismatch in blob '", entry.name, "'");
    }
    blobs.push_back(std::move(blob));
  }
  return blobs;
}

Result<const NamedBlob*> find_blob(const std::vector<NamedBlob>& blobs, const std::string& name) {
  std::string present;
  for (const NamedBlob& blob : blobs) {
    if (blob.name == name) return &blob;
    present += (present.empty() ? "" : ", ") + blob.name;
  }
  return not_found("checkpoint blob '", name,
                   "' not found (present: ", present.empty() ? "none" : present, ")");
}

}  // namespace parity::train
