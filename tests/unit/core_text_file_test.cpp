// read_text_file: plain and gzip files read the same; missing, corrupt and truncated gzip files are
// errors naming the file.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "parity/core/text_file.hpp"

namespace parity {
namespace {

std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() / "parity_text_file_test";
  std::filesystem::create_directories(dir);
  return dir;
}

void write_gzip(const std::filesystem::path& path, const std::string& text) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

TEST(TextFile, PlainAndGzipReadTheSame) {
  const auto dir = temp_dir();
  std::string text;
  for (int i = 0; i < 100000; ++i) text += std::to_string(i) + ",";  // > one 64 KiB read
  ASSERT_TRUE(write_text_file(dir / "a.txt", text).is_ok());
  write_gzip(dir / "a.txt.gz", text);
  auto plain = read_text_file(dir / "a.txt");
  auto gz = read_text_file(dir / "a.txt.gz");
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  ASSERT_TRUE(gz.is_ok()) << gz.status().to_string();
  EXPECT_EQ(*plain, text);
  EXPECT_EQ(*gz, text);
}

TEST(TextFile, MissingCorruptAndTruncatedAreErrorsNamingTheFile) {
  const auto dir = temp_dir();
  auto missing = read_text_file(dir / "absent.json.gz");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("absent.json.gz"), std::string::npos);
  std::string text(200000, 'x');
  write_gzip(dir / "whole.gz", text);
  std::ifstream in(dir / "whole.gz", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  {
    std::ofstream cut(dir / "cut.gz", std::ios::binary);
    cut << bytes.substr(0, bytes.size() / 2);
  }
  auto truncated = read_text_file(dir / "cut.gz");
  ASSERT_FALSE(truncated.is_ok());
  EXPECT_NE(truncated.status().message().find("cut.gz"), std::string::npos);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5a);
  bytes[bytes.size() / 2 + 1] = static_cast<char>(bytes[bytes.size() / 2 + 1] ^ 0x5a);
  {
    std::ofstream bad(dir / "bad.gz", std::ios::binary);
    bad << bytes;
  }
  EXPECT_FALSE(read_text_file(dir / "bad.gz").is_ok());
}

}  // namespace
}  // namespace parity
