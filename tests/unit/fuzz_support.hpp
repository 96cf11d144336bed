// Seeded mutation fuzzing for the input readers (a GoogleTest loop; no libFuzzer needed).
// A Mutator turns one valid input into a broken or subtly wrong one: byte flips, truncation,
// inserted and deleted bytes, and for JSON structural changes (deleted keys, values of another
// type, numbers replaced by huge, negative, fractional or non-finite text); for CSV, fields
// replaced by near-numbers ("64x", "1e3", "64.5", "nan"), dropped fields, duplicated and deleted
// lines. fuzz_reader runs a parser over many mutants and reports the first one that throws or
// fails without a message, or that the reader accepts with an invariant broken.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/test_support.hpp"

namespace parity::testing {

// The CI budget: every reader sees at least this many mutated inputs.
inline constexpr int kMutatedInputsPerReader = 100000;

class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : engine_(seed) {}

  std::size_t below(std::size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(engine_);
  }

  // One to three byte-level edits: flip, overwrite, insert, delete a run, or truncate.
  std::string mutate_bytes(std::string text) {
    const std::size_t edits = 1 + below(3);
    for (std::size_t e = 0; e < edits; ++e) {
      if (text.empty()) {
        text.push_back(static_cast<char>(below(256)));
        continue;
      }
      const std::size_t at = below(text.size());
      switch (below(5)) {
        case 0:
          text[at] = static_cast<char>(text[at] ^ (1 << below(8)));
          break;
        case 1:
          text[at] = kInterestingBytes[below(kInterestingBytes.size())];
          break;
        case 2:
          text.insert(at, 1, kInterestingBytes[below(kInterestingBytes.size())]);
          break;
        case 3:
          text.erase(at, 1 + below(8));
          break;
        default:
          text.resize(at);
          break;
      }
    }
    return text;
  }

  // Replaces one run of digits (with its sign, fraction and exponent) by an awkward number text.
  std::string replace_number_text(std::string text) {
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const bool digit = text[i] >= '0' && text[i] <= '9';
      const bool after_digit = i > 0 && ((text[i - 1] >= '0' && text[i - 1] <= '9') ||
                                         text[i - 1] == '.' || text[i - 1] == '-');
      if (digit && !after_digit) starts.push_back(i);
    }
    if (starts.empty()) return mutate_bytes(std::move(text));
    std::size_t begin = starts[below(starts.size())];
    if (begin > 0 && text[begin - 1] == '-') --begin;
    std::size_t end = begin + 1;
    while (end < text.size() &&
           std::string_view("0123456789.eE+-").find(text[end]) != std::string_view::npos) {
      ++end;
    }
    text.replace(begin, end - begin, kAwkwardNumbers[below(kAwkwardNumbers.size())]);
    return text;
  }

  // A structural change of a JSON document: a deleted key or element, or a value replaced by
  // one of another type or an extreme number.
  nlohmann::json mutate_json_tree(nlohmann::json document) {
    std::vector<nlohmann::json*> nodes;
    collect(document, nodes);
    nlohmann::json* node = nodes[below(nodes.size())];
    if ((node->is_object() || node->is_array()) && !node->empty() && below(2) == 0) {
      if (node->is_object()) {
        auto it = node->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(below(node->size())));
        node->erase(it.key());
      } else {
        node->erase(below(node->size()));
      }
      return document;
    }
    *node = awkward_value();
    return document;
  }

  // The mix the JSON fuzz tests use: structural (40%), number text (20%), bytes (30%), both (10%).
  std::string mutate_json(const nlohmann::json& valid, const std::string& valid_text) {
    const std::size_t choice = below(10);
    if (choice < 4) return mutate_json_tree(valid).dump();
    if (choice < 6) return replace_number_text(valid_text);
    if (choice < 9) return mutate_bytes(valid_text);
    return mutate_bytes(mutate_json_tree(valid).dump());
  }

  // CSV: a field replaced by a near-number, a field dropped or added, a line duplicated,
  // deleted or swapped, or byte edits.
  std::string mutate_csv(const std::string& text) {
    std::vector<std::string> lines;
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t newline = text.find('\n', start);
      const std::size_t stop = newline == std::string::npos ? text.size() : newline;
      lines.push_back(text.substr(start, stop - start));
      start = stop + 1;
    }
    if (lines.empty() || below(4) == 0) return mutate_bytes(text);
    std::string& line = lines[below(lines.size())];
    switch (below(6)) {
      case 0:
      case 1:
      case 2: {
        std::vector<std::size_t> commas{0};
        for (std::size_t i = 0; i < line.size(); ++i) {
          if (line[i] == ',') commas.push_back(i + 1);
        }
        const std::size_t begin = commas[below(commas.size())];
        const std::size_t comma = line.find(',', begin);
        const std::size_t end = comma == std::string::npos ? line.size() : comma;
        line.replace(begin, end - begin, kAwkwardFields[below(kAwkwardFields.size())]);
        break;
      }
      case 3: {
        const std::size_t comma = line.rfind(',');
        if (comma == std::string::npos) {
          line += ",1";
        } else {
          line.erase(comma);
        }
        break;
      }
      case 4:
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(below(lines.size())), line);
        break;
      default:
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(below(lines.size())));
        break;
    }
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
  }

 private:
  static void collect(nlohmann::json& node, std::vector<nlohmann::json*>& nodes) {
    nodes.push_back(&node);
    if (node.is_structured()) {
      for (auto& child : node) collect(child, nodes);
    }
  }

  nlohmann::json awkward_value() {
    switch (below(16)) {
      case 0:
        return nullptr;
      case 1:
        return true;
      case 2:
        return "";
      case 3:
        return "64x";
      case 4:
        return 0;
      case 5:
        return -1;
      case 6:
        return 64.5;
      case 7:
        return 1e308;
      case 8:
        return -1e308;
      case 9:
        return 9223372036854775807LL;
      case 10:
        return 18446744073709551615ULL;
      case 11:
        return 4.9e-324;
      case 12:
        return nlohmann::json::array();
      case 13:
        return nlohmann::json::object();
      case 14:
        return nlohmann::json::array({1, "x"});
      default:
        return 1099511627776LL * 1048576LL;  // 2^60
    }
  }

  static constexpr std::array<char, 16> kInterestingBytes{
      '\0', '\n', '\r', ',', '"', '{', '}', '[', ']', ':', '-', '.', 'e', 'x', '9', '\xff'};
  static constexpr std::array<const char*, 16> kAwkwardNumbers{"1e999",
                                                               "-1e999",
                                                               "NaN",
                                                               "-Infinity",
                                                               "1e3",
                                                               "64.5",
                                                               "-1",
                                                               "0",
                                                               "-0",
                                                               "1e-400",
                                                               "99999999999999999999999",
                                                               "18446744073709551616",
                                                               "9223372036854775807",
                                                               "0x40",
                                                               "4398046511104",
                                                               "4611686018427387904"};
  static constexpr std::array<const char*, 20> kAwkwardFields{"64x",
                                                              "1e3",
                                                              "64.5",
                                                              "",
                                                              " ",
                                                              "-1",
                                                              "0",
                                                              "nan",
                                                              "inf",
                                                              "-inf",
                                                              "0x40",
                                                              "+64",
                                                              "9223372036854775807",
                                                              "9223372036854775808",
                                                              "99999999999999999999",
                                                              "4398046511104",
                                                              "4611686018427387904",
                                                              "1e308",
                                                              "1e-320",
                                                              "abc"};

  std::mt19937_64 engine_;
};

// What a reader did with one mutant: accepted it, rejected it with a message, or misbehaved
// (`problem` says how: an exception, an empty message, an accepted value breaking an invariant).
struct FuzzVerdict {
  bool is_accepted = false;
  std::string problem;
};

struct FuzzTally {
  int inputs = 0;
  int accepted = 0;
  int rejected = 0;
};

// Feeds `count` mutants from `mutate` to `judge`; stops at the first misbehaving input and
// records a failure naming the seed, the mutant's index and the input itself.
inline FuzzTally fuzz_reader(std::uint64_t seed, int count,
                             const std::function<std::string(Mutator&)>& mutate,
                             const std::function<FuzzVerdict(const std::string&)>& judge) {
  Mutator mutator(seed);
  FuzzTally tally;
  for (int i = 0; i < count; ++i) {
    const std::string input = mutate(mutator);
    FuzzVerdict verdict;
    try {
      verdict = judge(input);
    } catch (const std::exception& e) {
      verdict.problem = std::string("exception escaped: ") + e.what();
    } catch (...) {
      verdict.problem = "a non-standard exception escaped";
    }
    ++tally.inputs;
    if (!verdict.problem.empty()) {
      constexpr std::size_t kShownChars = 3000;
      ADD_FAILURE() << seed_trace(seed) << ", mutant " << i << ": " << verdict.problem
                    << "\n--- input (" << input.size() << " bytes) ---\n"
                    << input.substr(0, kShownChars);
      return tally;
    }
    ++(verdict.is_accepted ? tally.accepted : tally.rejected);
  }
  return tally;
}

// The verdict for a reader's Result: accepted (then `check_value` may name a broken invariant)
// or rejected with a non-empty message.
template <typename T, typename Check>
FuzzVerdict verdict_of(const Result<T>& result, Check&& check_value) {
  FuzzVerdict verdict;
  if (result.is_ok()) {
    verdict.is_accepted = true;
    verdict.problem = check_value(result.value());
    if (!verdict.problem.empty()) verdict.problem = "accepted, but " + verdict.problem;
  } else if (result.status().message().empty()) {
    verdict.problem = "rejected with an empty message";
  }
  return verdict;
}

// A fuzz run is meaningful only if the mutants reach both outcomes: some mutations (a changed
// provenance note, a digit of a latency) keep an input valid, most break it.
inline void expect_both_outcomes(const FuzzTally& tally, int count) {
  EXPECT_EQ(tally.inputs, count);
  EXPECT_GT(tally.accepted, count / 100)
      << "almost every mutant was rejected: is the seed input valid?";
  EXPECT_GT(tally.rejected, count / 10)
      << "almost every mutant was accepted: is the reader strict?";
}

// The whole test for one reader: checks that `valid` is accepted (else the mutants mean nothing),
// then runs kMutatedInputsPerReader mutants of it and checks both outcomes were reached.
// PARITY_TEST_SEED replaces `seed`.
inline void fuzz_from_valid(std::uint64_t seed, const std::string& valid,
                            const std::function<std::string(Mutator&)>& mutate,
                            const std::function<FuzzVerdict(const std::string&)>& judge) {
  const std::uint64_t replay_seed = test_seed(seed);
  SCOPED_TRACE(seed_trace(replay_seed));
  const FuzzVerdict baseline = judge(valid);
  ASSERT_TRUE(baseline.is_accepted && baseline.problem.empty())
      << "the seed input is not valid: " << baseline.problem;
  const FuzzTally tally = fuzz_reader(replay_seed, kMutatedInputsPerReader, mutate, judge);
  expect_both_outcomes(tally, kMutatedInputsPerReader);
}

// fuzz_from_valid over JSON: structural mutations of `valid` (mutate_json).
inline void fuzz_json(std::uint64_t seed, const nlohmann::json& valid,
                      const std::function<FuzzVerdict(const std::string&)>& judge) {
  const std::string valid_text = valid.dump();
  fuzz_from_valid(
      seed, valid_text, [&](Mutator& mutator) { return mutator.mutate_json(valid, valid_text); },
      judge);
}

}  // namespace parity::testing
