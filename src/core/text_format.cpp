#include "core/text_format.hpp"

#include <cstdarg>
#include <cstdio>

namespace parity {

std::string format_text(const char* pattern, ...) {
  char buffer[4096];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(buffer, sizeof(buffer), pattern, args);
  va_end(args);
  return buffer;
}

}  // namespace parity
