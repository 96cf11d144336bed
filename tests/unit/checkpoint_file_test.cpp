// The checkpoint container: round trip, every truncation, every blob's bit flip, a missing file,
// and a child process killed at each step of a write (the previous file must survive intact).
#include "parity/train/checkpoint_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "common/test_support.hpp"

namespace parity::train {
namespace {

namespace fs = std::filesystem;

class CheckpointFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("parity_ckpt_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::vector<NamedBlob> sample_blobs(std::uint8_t salt) {
    std::vector<NamedBlob> blobs = {{"weights", {}}, {"empty", {}}, {"rng", {}}};
    for (int i = 0; i < 300; ++i) blobs[0].bytes.push_back(static_cast<std::uint8_t>(i * 7 + salt));
    for (int i = 0; i < 9; ++i) blobs[2].bytes.push_back(static_cast<std::uint8_t>(i + salt));
    return blobs;
  }
  static std::vector<std::uint8_t> read_bytes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write_bytes(const std::string& file, const std::vector<std::uint8_t>& bytes) {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  static void expect_same(const std::vector<NamedBlob>& got,
                          const std::vector<NamedBlob>& expected) {
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].name, expected[i].name);
      EXPECT_EQ(got[i].bytes, expected[i].bytes) << "blob " << got[i].name;
    }
  }

  fs::path dir_;
};

TEST_F(CheckpointFileTest, RoundTrip) {
  const auto blobs = sample_blobs(1);
  ASSERT_TRUE(write_checkpoint_file(path("a.ckpt"), blobs).is_ok());
  EXPECT_FALSE(fs::exists(path("a.ckpt.tmp")));
  auto read = read_checkpoint_file(path("a.ckpt"));
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  expect_same(*read, blobs);
  auto rng = find_blob(*read, "rng");
  ASSERT_TRUE(rng.is_ok());
  EXPECT_EQ((*rng)->bytes.size(), 9u);
  auto missing = find_blob(*read, "optimizer");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("weights, empty, rng"), std::string::npos);
  // No blobs at all is a valid (empty) checkpoint.
  ASSERT_TRUE(write_checkpoint_file(path("none.ckpt"), std::vector<NamedBlob>{}).is_ok());
  auto none = read_checkpoint_file(path("none.ckpt"));
  ASSERT_TRUE(none.is_ok()) << none.status().to_string();
  EXPECT_TRUE(none->empty());
}

TEST_F(CheckpointFileTest, RejectsBadNames) {
  std::vector<NamedBlob> blobs = {{"a", {1}}, {"a", {2}}};
  Status status = write_checkpoint_file(path("dup.ckpt"), blobs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("'a' appears twice"), std::string::npos);
  status = write_checkpoint_file(path("empty.ckpt"), std::vector<NamedBlob>{{"", {}}});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(path("dup.ckpt")));
}

TEST_F(CheckpointFileTest, MissingFileNamesIt) {
  auto read = read_checkpoint_file(path("nope.ckpt"));
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find(path("nope.ckpt")), std::string::npos);
  EXPECT_NE(read.status().message().find("does not exist"), std::string::npos);
}

TEST_F(CheckpointFileTest, EveryTruncationIsAnError) {
  ASSERT_TRUE(write_checkpoint_file(path("full.ckpt"), sample_blobs(3)).is_ok());
  const auto bytes = read_bytes(path("full.ckpt"));
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    write_bytes(path("cut.ckpt"), std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + length));
    auto read = read_checkpoint_file(path("cut.ckpt"));
    ASSERT_FALSE(read.is_ok()) << "length " << length;
    const std::string& message = read.status().message();
    EXPECT_NE(message.find(path("cut.ckpt")), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    if (length >= kCheckpointHeaderBytes) {
      EXPECT_NE(message.find("expected " + std::to_string(bytes.size()) + " bytes, found " +
                             std::to_string(length)),
                std::string::npos)
          << message;
    }
  }
}

TEST_F(CheckpointFileTest, BitFlipInEachBlobNamesTheBlob) {
  const auto blobs = sample_blobs(5);
  ASSERT_TRUE(write_checkpoint_file(path("ok.ckpt"), blobs).is_ok());
  const auto bytes = read_bytes(path("ok.ckpt"));
  // Blob data sit at the end of the file in order: find each blob's bytes by content.
  for (const NamedBlob& blob : blobs) {
    if (blob.bytes.empty()) continue;
    const auto at = std::search(bytes.begin() + kCheckpointHeaderBytes, bytes.end(),
                                blob.bytes.begin(), blob.bytes.end());
    ASSERT_NE(at, bytes.end());
    for (const std::size_t within :
         {std::size_t{0}, blob.bytes.size() / 2, blob.bytes.size() - 1}) {
      auto flipped = bytes;
      flipped[static_cast<std::size_t>(at - bytes.begin()) + within] ^= 0x10;
      write_bytes(path("flip.ckpt"), flipped);
      auto read = read_checkpoint_file(path("flip.ckpt"));
      ASSERT_FALSE(read.is_ok());
      EXPECT_NE(read.status().message().find("checksum mismatch in blob '" + blob.name + "'"),
                std::string::npos)
          << read.status().message();
      EXPECT_NE(read.status().message().find(path("flip.ckpt")), std::string::npos);
    }
  }
}

TEST_F(CheckpointFileTest, EveryBitFlipOutsideTheDataIsCaught) {
  ASSERT_TRUE(write_checkpoint_file(path("ok.ckpt"), sample_blobs(9)).is_ok());
  const auto bytes = read_bytes(path("ok.ckpt"));
  // Header and table: every single-bit flip must fail (magic, CRCs, sizes); padding is not covered.
  std::size_t table_end = kCheckpointHeaderBytes;
  std::memcpy(&table_end, bytes.data() + 16, 8);
  table_end += kCheckpointHeaderBytes;
  for (std::size_t at = 0; at < table_end; ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      auto flipped = bytes;
      flipped[at] ^= static_cast<std::uint8_t>(1u << bit);
      write_bytes(path("flip.ckpt"), flipped);
      EXPECT_FALSE(read_checkpoint_file(path("flip.ckpt")).is_ok())
          << "byte " << at << " bit " << bit;
    }
  }
  auto wrong_magic = bytes;
  wrong_magic[0] = 'X';
  write_bytes(path("magic.ckpt"), wrong_magic);
  EXPECT_NE(read_checkpoint_file(path("magic.ckpt")).status().message().find("wrong magic"),
            std::string::npos);
}

// A child writes a new checkpoint over an existing one and is killed at a given step; the file at
// the path must then be the old one or the new one, complete and valid.
TEST_F(CheckpointFileTest, KilledWriterLeavesAValidFile) {
  const auto old_blobs = sample_blobs(11);
  const auto new_blobs = sample_blobs(12);
  const std::vector<std::pair<CheckpointWritePhase, int>> kill_points = {
      {CheckpointWritePhase::kTempOpened, 1},
      {CheckpointWritePhase::kBlobWritten, 1},
      {CheckpointWritePhase::kBlobWritten, 2},
      {CheckpointWritePhase::kTempSynced, 1},
      {CheckpointWritePhase::kRenamed, 1}};
  for (const auto& [phase, occurrence] : kill_points) {
    ASSERT_TRUE(write_checkpoint_file(path("run.ckpt"), old_blobs).is_ok());
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::vector<BlobView> views;
      for (const NamedBlob& blob : new_blobs)
        views.push_back({blob.name, blob.bytes.data(), blob.bytes.size()});
      int seen = 0;
      CheckpointWriteOptions options;
      options.on_phase = [&, kill_phase = phase, kill_at = occurrence](CheckpointWritePhase now) {
        if (now == kill_phase && ++seen == kill_at) ::raise(SIGKILL);
      };
      (void)write_checkpoint_file(path("run.ckpt"), views, options);
      ::_exit(0);  // not reached: every kill point is visited
    }
    int wait_status = 0;
    ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
        << "phase " << static_cast<int>(phase);
    auto read = read_checkpoint_file(path("run.ckpt"));
    ASSERT_TRUE(read.is_ok()) << read.status().to_string();
    if (phase == CheckpointWritePhase::kRenamed) {
      expect_same(*read, new_blobs);
    } else {
      expect_same(*read, old_blobs);
    }
    // The next save works over a stale temporary file.
    ASSERT_TRUE(write_checkpoint_file(path("run.ckpt"), new_blobs).is_ok());
    expect_same(*read_checkpoint_file(path("run.ckpt")), new_blobs);
  }
}

// Without hooks: a child saves a 4 MB checkpoint over and over and is killed at a random moment;
// the file must always read back as one complete save.
TEST_F(CheckpointFileTest, KilledAtRandomMomentsLeavesAValidFile) {
  const std::uint64_t seed = ::parity::testing::test_seed(21);
  SCOPED_TRACE(::parity::testing::seed_trace(seed));
  std::mt19937_64 engine(seed);
  const auto blobs_for = [](std::uint32_t generation) {
    std::vector<NamedBlob> blobs = {{"generation", std::vector<std::uint8_t>(4)}, {"weights", {}}};
    std::memcpy(blobs[0].bytes.data(), &generation, 4);
    blobs[1].bytes.assign(std::size_t{4} << 20, static_cast<std::uint8_t>(generation));
    return blobs;
  };
  ASSERT_TRUE(write_checkpoint_file(path("loop.ckpt"), blobs_for(0)).is_ok());
  for (int round = 0; round < 4; ++round) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (std::uint32_t generation = 1;; ++generation)
        (void)write_checkpoint_file(path("loop.ckpt"), blobs_for(generation));
    }
    ::usleep(static_cast<useconds_t>(20000 + engine() % 200000));
    ::kill(child, SIGKILL);
    int wait_status = 0;
    ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
    auto read = read_checkpoint_file(path("loop.ckpt"));
    ASSERT_TRUE(read.is_ok()) << read.status().to_string();
    std::uint32_t generation = 0;
    std::memcpy(&generation, (*read)[0].bytes.data(), 4);
    expect_same(*read, blobs_for(generation));
  }
}

}  // namespace
}  // namespace parity::train
