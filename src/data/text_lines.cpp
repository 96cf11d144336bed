#include "text_lines.hpp"

#include <cstring>
#include <filesystem>

#include "parity/data/criteo.hpp"

namespace parity::data {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{4} << 20;  // far above kCriteoMaxLineBytes
constexpr unsigned kZlibBufferBytes = 1u << 20;

}  // namespace

Result<std::unique_ptr<TextLineSource>> TextLineSource::open(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    return not_found("input file ", path, ": does not exist");
  if (std::filesystem::is_directory(path, error))
    return invalid_argument("input file ", path, ": is a directory");
  std::unique_ptr<TextLineSource> source(new TextLineSource());
  source->path_ = path;
  source->file_ = gzopen(path.c_str(), "rb");
  if (source->file_ == nullptr)
    return io_error("input file ", path, ": cannot open: ", std::strerror(errno));
  gzbuffer(source->file_, kZlibBufferBytes);
  source->buffer_.resize(kBufferBytes);
  return source;
}

TextLineSource::~TextLineSource() {
  if (file_ != nullptr) gzclose(file_);
}

Status TextLineSource::refill() {
  if (begin_ > 0) {  // keep the partial line at the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  const int got =
      gzread(file_, buffer_.data() + end_, static_cast<unsigned>(buffer_.size() - end_));
  if (got < 0) {
    int code = 0;
    const char* message = gzerror(file_, &code);
    return io_error("input file ", path_, ": read failed after line ", line_number_, ": ", message);
  }
  if (got == 0) is_eof_ = true;
  end_ += static_cast<std::size_t>(got);
  return Status::ok();
}

Status TextLineSource::skip_rest_of_line() {
  for (;;) {
    const void* newline = std::memchr(buffer_.data() + begin_, '\n', end_ - begin_);
    if (newline != nullptr) {
      begin_ = static_cast<std::size_t>(static_cast<const char*>(newline) - buffer_.data()) + 1;
      return Status::ok();
    }
    begin_ = end_;
    if (is_eof_) return Status::ok();
    PARITY_RETURN_IF_ERROR(refill());
  }
}

Result<bool> TextLineSource::next(std::string_view* line, bool* is_overlong) {
  *is_overlong = false;
  for (;;) {
    const std::size_t available = end_ - begin_;
    const auto* start = buffer_.data() + begin_;
    const void* newline =
        std::memchr(start, '\n', std::min<std::size_t>(available, kCriteoMaxLineBytes + 1));
    if (newline != nullptr) {
      const auto length = static_cast<std::size_t>(static_cast<const char*>(newline) - start);
      *line = std::string_view(start, length);
      begin_ += length + 1;
      ++line_number_;
      return true;
    }
    if (available > static_cast<std::size_t>(kCriteoMaxLineBytes)) {
      // Not parsed: the caller reports it; the rest of it is dropped.
      *line = std::string_view();
      *is_overlong = true;
      ++line_number_;
      begin_ += kCriteoMaxLineBytes;
      PARITY_RETURN_IF_ERROR(skip_rest_of_line());
      return true;
    }
    if (is_eof_) {
      if (available == 0) return false;
      *line = std::string_view(start, available);  // a last line without '\n'
      begin_ = end_;
      ++line_number_;
      return true;
    }
    PARITY_RETURN_IF_ERROR(refill());
  }
}

Status BadLineTracker::add(const std::string& path, std::int64_t line_number,
                           const std::string& reason) {
  ++count_;
  if (first_.size() < kKeptLines)
    first_.push_back({line_number, path + ":" + std::to_string(line_number) + ": " + reason});
  if (count_ > max_bad_lines_) {
    return invalid_argument(path, ":", line_number, ": ", reason, " (", count_, " bad line",
                            count_ == 1 ? "" : "s", ", more than max_bad_lines ", max_bad_lines_,
                            "; the first: ", first_.front().reason, ")");
  }
  return Status::ok();
}

}  // namespace parity::data
