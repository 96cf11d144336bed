#include "parity/core/text_file.hpp"

#include <zlib.h>

#include <fstream>
#include <iterator>

namespace parity {
namespace {

bool ends_with_gz(const std::filesystem::path& path) {
  const std::string name = path.string();
  return name.size() >= 3 && name.compare(name.size() - 3, 3, ".gz") == 0;
}

}  // namespace

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return not_found("'", path.string(), "' does not exist");
  if (ends_with_gz(path)) {
    gzFile file = gzopen(path.c_str(), "rb");
    if (file == nullptr) return io_error("'", path.string(), "': cannot open");
    std::string text;
    char buffer[1 << 16];
    for (;;) {
      const int got = gzread(file, buffer, sizeof(buffer));
      if (got < 0) {
        int code = 0;
        const std::string message = gzerror(file, &code);
        gzclose(file);
        return io_error("'", path.string(), "': not valid gzip (", message, ")");
      }
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
    }
    // gzread stops quietly at a truncated stream: gzclose reports it.
    if (gzclose(file) != Z_OK) return io_error("'", path.string(), "': truncated or corrupt gzip stream");
    return text;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("'", path.string(), "': cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return io_error("'", path.string(), "': read failed");
  return text;
}

Status write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return io_error("cannot write '", path.string(), "'");
  out << text;
  out.close();
  return out ? Status::ok() : io_error("write to '", path.string(), "' failed");
}

}  // namespace parity
