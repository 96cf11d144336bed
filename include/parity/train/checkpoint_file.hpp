// The checkpoint container: named byte blobs in one file, written atomically (temporary file,
// fsync, rename, fsync of the directory) so a crash at any moment leaves either the previous file
// or the new one, never a mix; every blob and the blob table carry a CRC32 (zlib) checked on load.
// Layout (little-endian; docs/data.md, "Checkpoint file"):
//   header (40 bytes): magic "PRTYCKPT", u32 version, u32 blob count, u64 table bytes,
//                      u64 file bytes, u32 table CRC32, u32 header CRC32 (of the 36 bytes before)
//   blob table: per blob u32 name length, name, u64 offset, u64 size, u32 CRC32
//   blob data at the recorded offsets (64-byte aligned)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parity/core/status.hpp"

namespace parity::train {

inline constexpr std::uint32_t kCheckpointFileVersion = 1;
inline constexpr std::size_t kCheckpointHeaderBytes = 40;

struct NamedBlob {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

/// A blob to write without copying it into a NamedBlob.
struct BlobView {
  std::string name;
  const void* data = nullptr;
  std::size_t size_bytes = 0;
};

/// The steps of write_checkpoint_file, for crash tests (a hook may stop the process there).
enum class CheckpointWritePhase : std::uint8_t {
  kTempOpened,   // <path>.tmp created, nothing written
  kBlobWritten,  // after each blob's data reached the temporary file
  kTempSynced,   // temporary file complete and fsynced, not yet renamed
  kRenamed,      // renamed over <path>, directory not yet fsynced
};

struct CheckpointWriteOptions {
  std::function<void(CheckpointWritePhase)> on_phase;  // test hook; empty in normal use
};

/// Atomic: write <path>.tmp, fsync, rename, fsync the directory. Names must be unique, non-empty,
/// at most 4096 bytes.
Status write_checkpoint_file(const std::string& path, const std::vector<NamedBlob>& blobs);
Status write_checkpoint_file(const std::string& path, const std::vector<BlobView>& blobs,
                             const CheckpointWriteOptions& options = {});

/// Clear errors naming the file: missing, truncated (expected N bytes, found M), checksum mismatch
/// in blob 'x', wrong magic/version.
Result<std::vector<NamedBlob>> read_checkpoint_file(const std::string& path);

/// The blob called `name`, or a kNotFound error listing the names present.
Result<const NamedBlob*> find_blob(const std::vector<NamedBlob>& blobs, const std::string& name);

}  // namespace parity::train
