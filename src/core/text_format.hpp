// printf-style formatting into a std::string: reports (bench drivers, trainer, data summaries)
// build their printed tables with it and return the text (the CLI prints it; a binding may log it).
#pragma once

#include <string>

namespace parity {

/// Formats like std::printf; lines longer than 4 KiB are cut.
std::string format_text(const char* pattern, ...) __attribute__((format(printf, 1, 2)));

}  // namespace parity
