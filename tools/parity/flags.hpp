// Flags shared by several commands, parsed strictly (include/parity/core/parse.hpp): a seed of
// "-1" or "12x" is a usage error (exit 2), never a wrapped or truncated value.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "parity/core/parse.hpp"

namespace parity::cli {

/// --seed as an unsigned 64-bit integer, the whole text or a usage error naming the flag.
inline CLI::Option* add_seed_option(CLI::App* command, std::uint64_t& seed, const std::string& help) {
  return command
      ->add_option_function<std::string>(
          "--seed",
          [&seed](const std::string& text) {
            auto value = parse_uint64(text, "--seed");
            if (!value) throw CLI::ValidationError(value.status().message());
            seed = *value;
          },
          help)
      ->default_str(std::to_string(seed));
}

}  // namespace parity::cli
