// Criteo TSV: the line parser on good and malformed lines (too few/many columns, non-hex,
// overlong fields, CRLF, empty), the streaming reader's bad-line policy, gzip input, and the
// converter matching the streaming reader batch for batch.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>

#include "common/test_support.hpp"
#include "data_test_util.hpp"
#include "parity/data/criteo.hpp"

namespace parity::data {
namespace {

DatasetSchema criteo_schema() {
  DatasetSchema schema;
  schema.num_dense = kCriteoDenseColumns;
  for (int t = 0; t < kCriteoCategoricalColumns; ++t) schema.tables.push_back({1000 + t, 1});
  schema.tables[1].num_rows = 2;  // every value hashes to id 1
  schema.tables[2].num_rows =
      (std::int64_t{1} << 32) + 7;  // larger than any 32-bit value: no modulo
  return schema;
}

// Line i of a synthetic log: label i%2, I_j = i+j (I3 empty, I4 negative), C_t hex of i*31+t (C5
// empty).
std::string make_line(int i) {
  std::string line = std::to_string(i % 2);
  for (int j = 1; j <= kCriteoDenseColumns; ++j) {
    line += '\t';
    if (j == 3) continue;
    line += j == 4 ? "-5" : std::to_string(i + j);
  }
  for (int t = 0; t < kCriteoCategoricalColumns; ++t) {
    line += '\t';
    if (t == 5) continue;
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%x", i * 31 + t);
    line += hex;
  }
  return line;
}

struct Parsed {
  float label = -1;
  float dense[kCriteoDenseColumns] = {};
  std::int64_t ids[kCriteoCategoricalColumns] = {};
  CriteoLineParser::Error error;
  bool ok = false;
};

Parsed parse(std::string_view line) {
  static const CriteoLineParser parser = *CriteoLineParser::create(criteo_schema());
  Parsed parsed;
  parsed.ok = parser.parse(line, &parsed.label, parsed.dense, parsed.ids, 1, &parsed.error);
  return parsed;
}

std::string error_text(std::string_view line) {
  return CriteoLineParser::describe(parse(line).error);
}

TEST(CriteoParserTest, GoodLine) {
  const Parsed parsed = parse(make_line(7));
  ASSERT_TRUE(parsed.ok) << CriteoLineParser::describe(parsed.error);
  EXPECT_EQ(parsed.label, 1.0f);
  EXPECT_EQ(parsed.dense[0], static_cast<float>(std::log1p(8.0)));  // I1 = 7 + 1
  EXPECT_EQ(parsed.dense[2], 0.0f);                                 // empty
  EXPECT_EQ(parsed.dense[3], 0.0f);                                 // negative clamps to 0
  EXPECT_EQ(parsed.ids[0], 1 + (7 * 31) % 999);
  EXPECT_EQ(parsed.ids[1], 1);               // a 2-row table
  EXPECT_EQ(parsed.ids[2], 1 + 7 * 31 + 2);  // no modulo
  EXPECT_EQ(parsed.ids[5], 0);               // empty -> reserved id
  // Large counts leave the log table: still log(1 + x) rounded to float.
  std::string big = make_line(0);
  big.replace(2, 1, "123456789012");
  const Parsed large = parse(big);
  ASSERT_TRUE(large.ok);
  EXPECT_EQ(large.dense[0], static_cast<float>(std::log1p(123456789012.0)));
  // Upper-case hex, 8 digits (the maximum).
  std::string upper = make_line(0);
  upper.replace(upper.rfind('\t') + 1, std::string::npos, "FFFFFFFF");
  const Parsed hex = parse(upper);
  ASSERT_TRUE(hex.ok);
  EXPECT_EQ(hex.ids[25], 1 + 0xFFFFFFFFLL % (1025 - 1));
}

TEST(CriteoParserTest, CrlfAccepted) {
  const Parsed crlf = parse(make_line(3) + "\r");
  ASSERT_TRUE(crlf.ok);
  const Parsed lf = parse(make_line(3));
  EXPECT_EQ(std::vector<std::int64_t>(crlf.ids, crlf.ids + 26),
            std::vector<std::int64_t>(lf.ids, lf.ids + 26));
}

TEST(CriteoParserTest, MalformedLines) {
  const std::string good = make_line(4);
  EXPECT_EQ(error_text(""), "empty line (found 0, expected 40)");
  EXPECT_EQ(error_text(good.substr(0, good.rfind('\t'))),
            "too few columns (found 39, expected 40)");
  EXPECT_EQ(error_text(good + "\tabc"), "too many columns (found 41, expected 40)");
  EXPECT_EQ(error_text(good + "\t\t"), "too many columns (found 42, expected 40)");
  std::string text = good;
  text[0] = '2';
  EXPECT_EQ(error_text(text), "column 1 (label): label is not 0 or 1");
  text = good;
  text.replace(text.rfind('\t') + 1, std::string::npos, "12g4");
  EXPECT_EQ(error_text(text), "column 40 (C26): categorical has a non-hex character");
  text.replace(text.rfind('\t') + 1, std::string::npos, "123456789");
  EXPECT_EQ(error_text(text), "column 40 (C26): categorical is overlong (more than 8 hex digits)");
  text = good;
  text.replace(2, 1, "1x");
  EXPECT_EQ(error_text(text), "column 2 (I1): integer has a non-digit character");
  text = good;
  text.replace(2, 1, "1234567890123456789");
  EXPECT_EQ(error_text(text), "column 2 (I1): integer is overlong (more than 18 digits)");
  text = good;
  text.replace(2, 1, "-");
  EXPECT_EQ(error_text(text), "column 2 (I1): integer has no digits");
  text = good;
  text.replace(2, 1, "1.5");
  EXPECT_EQ(error_text(text), "column 2 (I1): integer has a non-digit character");
  EXPECT_FALSE(parse(good + "\r\r").ok);  // only one CR is a line end
}

// Random damage to good lines (byte changes, cuts, inserted tabs and CRs): the parser never reads
// outside the line, and whatever it accepts is a valid sample.
TEST(CriteoParserTest, RandomlyDamagedLines) {
  const std::uint64_t seed = parity::testing::test_seed(99);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  std::mt19937_64 engine(seed);
  const std::string alphabet = "0123456789abcdefABCDEF-\t\r xg.";
  int accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string line = make_line(static_cast<int>(engine() % 1000));
    const int edits = 1 + static_cast<int>(engine() % 3);
    for (int e = 0; e < edits && !line.empty(); ++e) {
      const std::size_t at = engine() % line.size();
      switch (engine() % 4) {
        case 0:
          line[at] = alphabet[engine() % alphabet.size()];
          break;
        case 1:
          line.resize(at);
          break;
        case 2:
          line.insert(at, 1, alphabet[engine() % alphabet.size()]);
          break;
        default:
          line.erase(at, 1);
          break;
      }
    }
    // Parse from an exact-size heap copy so a read past the end would touch unowned memory.
    const std::unique_ptr<char[]> copy(new char[std::max<std::size_t>(line.size(), 1)]);
    std::memcpy(copy.get(), line.data(), line.size());
    const Parsed parsed = parse(std::string_view(copy.get(), line.size()));
    if (!parsed.ok) {
      EXPECT_FALSE(CriteoLineParser::describe(parsed.error).empty());
      continue;
    }
    ++accepted;
    EXPECT_TRUE(parsed.label == 0.0f || parsed.label == 1.0f);
    for (const float x : parsed.dense) EXPECT_TRUE(std::isfinite(x) && x >= 0) << line;
    const DatasetSchema schema = criteo_schema();
    for (int t = 0; t < kCriteoCategoricalColumns; ++t) {
      EXPECT_TRUE(parsed.ids[t] >= 0 && parsed.ids[t] < schema.tables[t].num_rows) << line;
    }
  }
  EXPECT_GT(accepted, 0);  // some edits keep a line valid (a digit for a digit)
}

TEST(CriteoParserTest, RejectsNonCriteoSchemas) {
  DatasetSchema schema = criteo_schema();
  schema.tables[0].ids_per_sample = 2;
  EXPECT_NE(CriteoLineParser::create(schema).status().message().find("one-hot"), std::string::npos);
  schema = criteo_schema();
  schema.tables[0].num_rows = 1;
  EXPECT_NE(CriteoLineParser::create(schema).status().message().find("reserved"),
            std::string::npos);
  schema = criteo_schema();
  schema.tables.pop_back();
  EXPECT_NE(CriteoLineParser::create(schema).status().message().find("25 tables, expected 26"),
            std::string::npos);
}

class CriteoFileTest : public testing::TempDirTest {
 protected:
  // Lines 1..n good except those in `bad` (1-based), which get a non-hex categorical.
  std::string write_log(const std::string& name, int n, const std::vector<int>& bad,
                        const std::string& eol = "\n") {
    std::ofstream out(path(name), std::ios::binary);
    for (int i = 1; i <= n; ++i) {
      std::string line = make_line(i);
      if (std::find(bad.begin(), bad.end(), i) != bad.end()) line += "z";
      out << line << eol;
    }
    return path(name);
  }
  std::vector<Batch> read_all(BatchReader& reader) {
    std::vector<Batch> batches;
    Batch batch;
    for (;;) {
      auto has = reader.next(&batch);
      EXPECT_TRUE(has.is_ok()) << has.status().to_string();
      if (!has.is_ok() || !*has) return batches;
      EXPECT_TRUE(validate_batch(criteo_schema(), batch).is_ok())
          << validate_batch(criteo_schema(), batch).to_string();
      batches.push_back(batch);
    }
  }
};

TEST_F(CriteoFileTest, StreamingReaderFailsFastOnTheFirstBadLine) {
  const std::string file = write_log("log.tsv", 100, {17, 40});
  auto reader = open_criteo_tsv(file, criteo_schema(), {.batch_size = 10});
  ASSERT_TRUE(reader.is_ok());
  Batch batch;
  ASSERT_TRUE(*(*reader)->next(&batch));  // lines 1-10
  auto failed = (*reader)->next(&batch);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(failed.status().message().find(
                file + ":17: column 40 (C26): categorical has a non-hex character"),
            std::string::npos)
      << failed.status().message();
  EXPECT_FALSE((*reader)->next(&batch).is_ok());  // the error sticks
}

TEST_F(CriteoFileTest, StreamingReaderSkipsAndReportsUpToMaxBadLines) {
  const std::string file = write_log("log.tsv", 100, {17, 40, 41});
  auto reader = open_criteo_tsv(file, criteo_schema(),
                                {.batch_size = 10, .drop_last = false, .max_bad_lines = 3});
  ASSERT_TRUE(reader.is_ok());
  const auto batches = read_all(**reader);
  ASSERT_EQ(batches.size(), 10u);  // 97 good lines
  EXPECT_EQ(batches.back().batch_size, 7);
  EXPECT_EQ((*reader)->bad_line_count(), 3);
  const auto bad = (*reader)->first_bad_lines();
  ASSERT_EQ(bad.size(), 3u);
  EXPECT_EQ(bad[0].line_number, 17);
  EXPECT_EQ(bad[2].line_number, 41);
  EXPECT_EQ((*reader)->position_samples(), 97);
  auto strict = open_criteo_tsv(file, criteo_schema(), {.batch_size = 10, .max_bad_lines = 2});
  Batch batch;
  Result<bool> has = true;
  while (has.is_ok() && *has) has = (*strict)->next(&batch);
  ASSERT_FALSE(has.is_ok());
  EXPECT_NE(has.status().message().find(":41: "), std::string::npos) << has.status().message();
  EXPECT_NE(has.status().message().find("the first: " + file + ":17:"), std::string::npos)
      << has.status().message();
}

TEST_F(CriteoFileTest, CrlfGzipAndNoFinalNewline) {
  const auto plain = read_all(**open_criteo_tsv(write_log("lf.tsv", 25, {}), criteo_schema(),
                                                {.batch_size = 8, .drop_last = false}));
  const auto crlf =
      read_all(**open_criteo_tsv(write_log("crlf.tsv", 25, {}, "\r\n"), criteo_schema(),
                                 {.batch_size = 8, .drop_last = false}));
  gzFile gz = gzopen(path("log.tsv.gz").c_str(), "wb");
  for (int i = 1; i <= 25; ++i) {
    const std::string line = make_line(i) + (i < 25 ? "\n" : "");  // the last line has no newline
    gzwrite(gz, line.data(), static_cast<unsigned>(line.size()));
  }
  gzclose(gz);
  const auto zipped = read_all(**open_criteo_tsv(path("log.tsv.gz"), criteo_schema(),
                                                 {.batch_size = 8, .drop_last = false}));
  ASSERT_EQ(plain.size(), 4u);
  ASSERT_EQ(crlf.size(), 4u);
  ASSERT_EQ(zipped.size(), 4u);
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(plain[i].indices, crlf[i].indices);
    EXPECT_EQ(plain[i].dense, zipped[i].dense);
    EXPECT_EQ(plain[i].labels, zipped[i].labels);
  }
}

TEST_F(CriteoFileTest, EmptyFileAndOverlongLine) {
  { std::ofstream out(path("empty.tsv")); }
  auto reader =
      open_criteo_tsv(path("empty.tsv"), criteo_schema(), {.batch_size = 4, .drop_last = false});
  ASSERT_TRUE(reader.is_ok());
  Batch batch;
  auto has = (*reader)->next(&batch);
  ASSERT_TRUE(has.is_ok());
  EXPECT_FALSE(*has);
  auto converted = convert_criteo(path("empty.tsv"), criteo_schema(), path("ds"));
  EXPECT_NE(converted.status().message().find("no samples (0 lines"), std::string::npos)
      << converted.status().message();
  {
    std::ofstream out(path("long.tsv"));
    out << make_line(1) << "\n"
        << std::string(kCriteoMaxLineBytes + 10, '1') << "\n"
        << make_line(2) << "\n";
  }
  auto skipping =
      open_criteo_tsv(path("long.tsv"), criteo_schema(), {.batch_size = 2, .max_bad_lines = 1});
  ASSERT_TRUE(*(*skipping)->next(&batch));
  EXPECT_EQ((*skipping)->first_bad_lines().at(0).line_number, 2);
  EXPECT_NE((*skipping)->first_bad_lines()[0].reason.find("longer than 65536 bytes"),
            std::string::npos);
  EXPECT_EQ(
      open_criteo_tsv(path("missing.tsv"), criteo_schema(), {.batch_size = 2}).status().code(),
      StatusCode::kNotFound);
}

TEST_F(CriteoFileTest, ConvertMatchesStreamingAndSeeks) {
  const std::string train = write_log("train.tsv", 150, {5});
  const std::string eval = write_log("eval.tsv", 30, {});
  auto report =
      convert_criteo(train, criteo_schema(), path("ds"), {.eval_tsv = eval, .max_bad_lines = 1});
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->lines, 180);
  EXPECT_EQ(report->train_samples, 149);
  EXPECT_EQ(report->eval_samples, 30);
  EXPECT_EQ(report->bad_lines, 1);
  EXPECT_NE(report->first_bad_lines.at(0).reason.find("train.tsv:5:"), std::string::npos);
  EXPECT_EQ(report->positives,
            74 + 15);  // label i % 2: lines 1..150 less the bad (positive) line 5, and 1..30
  auto info = read_dataset_info(path("ds"));
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->source, "criteo");
  EXPECT_DOUBLE_EQ(info->positive_rate, 89.0 / 179.0);
  EXPECT_TRUE(std::isnan(info->planted_auc));
  auto binary = open_dataset(path("ds"), "train", {.batch_size = 16, .drop_last = false});
  auto streaming = open_criteo_tsv(train, criteo_schema(),
                                   {.batch_size = 16, .drop_last = false, .max_bad_lines = 1});
  const auto from_binary = read_all(**binary);
  const auto from_text = read_all(**streaming);
  ASSERT_EQ(from_binary.size(), from_text.size());
  for (std::size_t i = 0; i < from_text.size(); ++i) {
    EXPECT_EQ(from_binary[i].dense, from_text[i].dense);
    EXPECT_EQ(from_binary[i].indices, from_text[i].indices);
    EXPECT_EQ(from_binary[i].offsets, from_text[i].offsets);
    EXPECT_EQ(from_binary[i].labels, from_text[i].labels);
  }
  // Seeking the TSV reader re-reads to the position, skipping the bad line again.
  Batch batch;
  ASSERT_TRUE((*streaming)->seek_samples(32).is_ok());
  ASSERT_TRUE(*(*streaming)->next(&batch));
  EXPECT_EQ(batch.dense, from_text[2].dense);
  EXPECT_NE((*streaming)->seek_samples(1000).message().find("past the end"), std::string::npos);
}

}  // namespace
}  // namespace parity::data
