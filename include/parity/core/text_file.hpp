// Whole-file text reads: a path ending in ".gz" is decompressed in-process (zlib), so recorded
// runs keep their raw outputs compressed and every reader replays them without unpacking.
#pragma once

#include <filesystem>
#include <string>

#include "parity/core/status.hpp"

namespace parity {

/// The file's bytes; gzip-decompressed when the name ends in ".gz". kNotFound naming the file when
/// it does not exist (an input error); kIoError when it cannot be read or is not valid gzip.
Result<std::string> read_text_file(const std::filesystem::path& path);

/// Writes `text` to `path` (truncating); kIoError naming the file on failure.
Status write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace parity
