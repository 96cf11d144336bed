// GPU TBE bounds check (tbe_check_gpu.cpp, bounds_check_kernels.cuh) against the reference:
// every mode and kind of bad entry, many features, shared-memory staging, tile edges, split roles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "unit/tbe_test_util.hpp"
#include "backend/tbe_gpu_test_util.hpp"

namespace parity {
namespace {

using embedding::BoundsCheckMode;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
using embedding::TbeProblem;
namespace egpu = embedding::gpu;

// ---- bounds check ----

struct BoundsRun {
  embedding::BoundsCheckReport report;
  std::vector<std::int64_t> indices, offsets;
};

// shift_elements > 0 places the indices (offsets_shift_elements: the offsets) that many elements
// past a 256-byte aligned allocation, so the kernel's 16-byte vector loads are off (the scalar
// paths are checked too).
BoundsRun gpu_bounds_check(const TbeProblem& problem, BoundsCheckMode mode, const std::vector<std::int64_t>& indices,
                           const std::vector<std::int64_t>& offsets, int shift_elements = 0,
                           int offsets_shift_elements = 0) {
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  std::vector<std::int64_t> shifted(static_cast<std::size_t>(shift_elements), 0);
  shifted.insert(shifted.end(), indices.begin(), indices.end());
  std::vector<std::int64_t> shifted_offsets(static_cast<std::size_t>(offsets_shift_elements), 0);
  shifted_offsets.insert(shifted_offsets.end(), offsets.begin(), offsets.end());
  auto d_indices = gpu::upload(embedding::pack_indices(shifted, problem.index_dtype));
  auto d_offsets = gpu::upload(embedding::pack_indices(shifted_offsets, problem.index_dtype));
  const std::size_t width = dtype_size_bytes(problem.index_dtype);
  void* indices_ptr = static_cast<std::uint8_t*>(d_indices->data()) + width * static_cast<std::size_t>(shift_elements);
  void* offsets_ptr =
      static_cast<std::uint8_t*>(d_offsets->data()) + width * static_cast<std::size_t>(offsets_shift_elements);
  const auto ws_bytes = egpu::bounds_check_workspace_bytes(problem);
  auto ws = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(ws_bytes));
  const Status launched = egpu::bounds_check(problem, *layout, mode, indices_ptr, offsets_ptr, ws->data(), ws_bytes);
  EXPECT_TRUE(launched.is_ok()) << launched.to_string();
  auto report = egpu::read_bounds_check_report(problem, mode, indices_ptr, offsets_ptr, ws->data());
  EXPECT_TRUE(report.is_ok()) << report.status().to_string();
  BoundsRun run{*report, {}, {}};
  auto raw_all = *gpu::download<std::uint8_t>(*d_indices, shifted.size() * width);
  std::vector<std::uint8_t> raw_i(raw_all.begin() + static_cast<std::ptrdiff_t>(width * shift_elements), raw_all.end());
  for (std::size_t b = 0; b < width * static_cast<std::size_t>(shift_elements); ++b) {
    EXPECT_EQ(raw_all[b], 0) << "bounds check wrote before the indices";
  }
  auto raw_o_all = *gpu::download<std::uint8_t>(*d_offsets, shifted_offsets.size() * width);
  std::vector<std::uint8_t> raw_o(raw_o_all.begin() + static_cast<std::ptrdiff_t>(width * offsets_shift_elements),
                                  raw_o_all.end());
  auto unpack = [&](const std::vector<std::uint8_t>& raw, std::size_t count) {
    std::vector<std::int64_t> v(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (width == 4) {
        std::int32_t x;
        std::memcpy(&x, raw.data() + 4 * i, 4);
        v[i] = x;
      } else {
        std::memcpy(&v[i], raw.data() + 8 * i, 8);
      }
    }
    return v;
  };
  run.indices = unpack(raw_i, indices.size());
  run.offsets = unpack(raw_o, offsets.size());
  // The context survives: a later launch still works.
  EXPECT_TRUE(gpu::synchronize().is_ok());
  return run;
}

// A clean batch of bags of varying length (mean 5) over `tables`, for the bounds-check tests.
auto bounds_check_batch(const std::vector<TableSpec>& tables, std::int64_t batch_size, std::uint64_t seed) {
  auto probe = testing::make_problem(tables, 0, 0);
  SyntheticBatchOptions options;
  options.batch_size = batch_size;
  options.pooling_factor = 5;
  options.vary_bag_sizes = true;
  options.seed = seed;
  return embedding::make_synthetic_batch(probe.layout, options);
}

// The GPU check against the reference on clean offsets and `planted` bad indices: counts, the
// first bad index (position, value, table, bag) and the indices afterwards.
void expect_bad_indices_match_reference(const TbeProblem& problem, BoundsCheckMode mode,
                                        const std::vector<std::int64_t>& indices,
                                        const std::vector<std::int64_t>& offsets, std::int64_t planted,
                                        int shift_elements = 0) {
  auto ref_indices = indices, ref_offsets = offsets;
  const auto want = ref::tbe_bounds_check(problem, mode, ref_indices, ref_offsets);
  ASSERT_EQ(want.bad_indices, planted);
  const auto got = gpu_bounds_check(problem, mode, indices, offsets, shift_elements);
  EXPECT_EQ(got.report.bad_indices, want.bad_indices);
  EXPECT_EQ(got.report.bad_offsets, 0);
  EXPECT_EQ(got.report.first_bad_position, want.first_bad_position);
  EXPECT_EQ(got.report.first_bad_value, want.first_bad_value);
  EXPECT_EQ(got.report.first_bad_table, want.first_bad_table);
  EXPECT_EQ(got.report.first_bad_bag, want.first_bad_bag);
  EXPECT_EQ(got.indices, mode == BoundsCheckMode::kFix ? ref_indices : indices);
}

TEST(GpuTbeBoundsCheck, ModesMatchTheReferenceOnEveryKindOfBadEntry) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(408);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{100, 8}, {50, 8}, {7, 8}};
  const auto clean = bounds_check_batch(tables, 700, seed);
  const auto n = static_cast<std::int64_t>(clean.indices.size());
  struct Case {
    const char* name;
    DType dtype;
    std::int64_t bad_value;  // 0 = no bad index
    int offsets_damage;      // 0 none, 1 non-monotone, 2 negative first, 3 last != N, 4 past N
  };
  const Case cases[] = {{"clean", DType::kI64, 0, 0},        {"minus one", DType::kI32, -1, 0},
                        {"E", DType::kI64, 50, 0},           {"INT32_MAX", DType::kI32, 2147483647, 0},
                        {"-2^40", DType::kI64, -(1LL << 40), 0}, {"non-monotone", DType::kI64, 0, 1},
                        {"negative first", DType::kI32, 0, 2}, {"last != N", DType::kI64, 0, 3},
                        {"past N", DType::kI64, -1, 4}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
      auto indices = clean.indices;
      auto offsets = clean.offsets;
      if (c.bad_value != 0) {
        // A few bad entries in the second feature's range (rows = 50).
        for (std::int64_t k = 0; k < 4; ++k) indices[offsets[700] + 3 + 97 * k] = c.bad_value;
      }
      if (c.offsets_damage == 1) offsets[10] = offsets[12] + 3;
      if (c.offsets_damage == 2) offsets[0] = -5;
      if (c.offsets_damage == 3) offsets.back() = n - 2;
      if (c.offsets_damage == 4) offsets[1500] = n + 100;
      auto problem = testing::make_problem(tables, 700, n, c.dtype);
      auto ref_indices = indices, ref_offsets = offsets;
      const auto want = ref::tbe_bounds_check(problem, mode, ref_indices, ref_offsets);
      const auto got = gpu_bounds_check(problem, mode, indices, offsets);
      EXPECT_EQ(got.report.bad_indices, want.bad_indices);
      EXPECT_EQ(got.report.bad_offsets, want.bad_offsets);
      EXPECT_EQ(got.report.last_offset_fixed, want.last_offset_fixed);
      EXPECT_EQ(got.report.has_bad_index, want.has_bad_index);
      if (want.has_bad_index && (mode == BoundsCheckMode::kFix || want.bad_offsets == 0)) {
        EXPECT_EQ(got.report.first_bad_position, want.first_bad_position);
        EXPECT_EQ(got.report.first_bad_value, want.first_bad_value);
        EXPECT_EQ(got.report.first_bad_table, want.first_bad_table);
        EXPECT_EQ(got.report.first_bad_bag, want.first_bad_bag);
      }
      if (mode == BoundsCheckMode::kError) {
        EXPECT_EQ(got.indices, indices) << "error mode must leave indices untouched";
        EXPECT_EQ(got.offsets, offsets) << "error mode must leave offsets untouched";
        const Status status = embedding::bounds_check_status(got.report, mode);
        EXPECT_EQ(status.is_ok(), want.is_clean());
        if (want.has_bad_index && want.bad_offsets == 0) {
          EXPECT_NE(status.message().find("table 1"), std::string::npos) << status.message();
          EXPECT_NE(status.message().find("value " + std::to_string(c.bad_value)), std::string::npos) << status.message();
        }
      } else {
        EXPECT_EQ(got.indices, ref_indices);
        EXPECT_EQ(got.offsets, ref_offsets);
      }
    }
  }
}

// Many features (more than two warps' worth, so the boundary scan carries across steps) and bad
// indices scattered over every block's slice: counts and the first bad entry match the reference.
TEST(GpuTbeBoundsCheck, ManyFeaturesScatteredBadIndicesMatchTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(409);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::vector<TableSpec> tables;
  for (int t = 0; t < 150; ++t) tables.push_back({static_cast<std::int64_t>(3 + 17 * t), 4});
  const auto clean = bounds_check_batch(tables, 301, seed);
  const auto n = static_cast<std::int64_t>(clean.indices.size());
  ASSERT_GT(n, 4 * 512) << "needs several blocks";
  std::mt19937_64 rng(seed);
  auto indices = clean.indices;
  std::int64_t planted = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (rng() % 97 == 0) {
      indices[i] = (rng() % 2 == 0) ? -1 - static_cast<std::int64_t>(rng() % 5) : 1000000 + static_cast<std::int64_t>(rng() % 7);
      ++planted;
    }
  }
  ASSERT_GT(planted, 10);
  for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
    expect_bad_indices_match_reference(testing::make_problem(tables, 301, n, DType::kI64), mode, indices,
                                       clean.offsets, planted);
  }
}

// Each indices block starts in the feature of its slice's first position (not feature 0) and then
// decides whole tiles by that feature's row count: bad values that are valid rows of feature 0's
// large table but not of the later, small ones (at each feature's first position and scattered)
// must still be found, on blocks of about one tile (D6's shape class: int32, few features).
TEST(GpuTbeBoundsCheck, BlocksJudgeTheirFirstTileByTheirOwnFeature) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(412);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::vector<TableSpec> tables = {{1000000, 4}};
  for (int t = 1; t < 8; ++t) tables.push_back({1000, 4});
  const auto clean = bounds_check_batch(tables, 8192, seed);
  const auto n = static_cast<std::int64_t>(clean.indices.size());
  ASSERT_GT(n, 100 * 2048) << "needs many blocks";
  std::mt19937_64 rng(seed);
  auto indices = clean.indices;
  std::int64_t planted = 0;
  for (int f = 1; f < 8; ++f) {
    const std::int64_t first = clean.offsets[static_cast<std::size_t>(f) * 8192];
    indices[first] = 5000;  // a row of table 0, past table f's 1000
    ++planted;
  }
  for (std::int64_t i = clean.offsets[8192]; i < n; ++i) {
    if (indices[i] < 1000 && rng() % 3001 == 0) {
      indices[i] = 1000 + static_cast<std::int64_t>(rng() % 900000);
      ++planted;
    }
  }
  for (DType dtype : {DType::kI32, DType::kI64}) {
    for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
      SCOPED_TRACE(std::string(dtype == DType::kI64 ? "int64" : "int32") + (mode == BoundsCheckMode::kFix ? " fix" : " error"));
      expect_bad_indices_match_reference(testing::make_problem(tables, 8192, n, dtype), mode, indices, clean.offsets,
                                         planted);
    }
  }
}

TEST(GpuTbeBoundsCheck, MoreFeaturesThanSharedMemoryStagesMatchTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(411);
  SCOPED_TRACE(testing::seed_trace(seed));
  // 2100 features (> kBoundsMaxSharedBoundaries = 2048): boundaries and row counts are read from
  // global memory instead of shared memory.
  std::vector<TableSpec> tables;
  for (int t = 0; t < 2100; ++t) tables.push_back({static_cast<std::int64_t>(2 + t % 41), 4});
  const auto clean = bounds_check_batch(tables, 7, seed);
  const auto n = static_cast<std::int64_t>(clean.indices.size());
  std::mt19937_64 rng(seed);
  auto indices = clean.indices;
  std::int64_t planted = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (rng() % 53 == 0) {
      indices[i] = (rng() % 2 == 0) ? -1 : 1000;  // every table has 2..42 rows
      ++planted;
    }
  }
  ASSERT_GT(planted, 10);
  for (DType dtype : {DType::kI64, DType::kI32}) {
    for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
      SCOPED_TRACE(std::string(dtype == DType::kI64 ? "int64" : "int32") + (mode == BoundsCheckMode::kFix ? " fix" : " error"));
      expect_bad_indices_match_reference(testing::make_problem(tables, 7, n, dtype), mode, indices, clean.offsets,
                                         planted);
    }
  }
}

TEST(GpuTbeBoundsCheck, SeveralTilesPerBlockAlignedAndMisalignedMatchTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(410);
  SCOPED_TRACE(testing::seed_trace(seed));
  // ~1.6M indices: more than the resident blocks x one tile, so each block walks several
  // double-buffered tiles; an odd count leaves a partial 16-byte vector at the end.
  const std::vector<TableSpec> tables = {{1000, 4}, {37, 4}, {250000, 4}};
  auto clean = bounds_check_batch(tables, 107001, seed);
  auto n = static_cast<std::int64_t>(clean.indices.size());
  if (n % 2 == 0) {  // make N odd: one more index in the last bag
    clean.indices.push_back(0);
    clean.offsets.back() = ++n;
  }
  ASSERT_GT(n, 1000000);
  std::mt19937_64 rng(seed);
  auto indices = clean.indices;
  std::int64_t planted = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (rng() % 4099 == 0 || i == n - 1) {
      indices[i] = (rng() % 2 == 0) ? -1 : 2147483647;
      ++planted;
    }
  }
  for (DType dtype : {DType::kI64, DType::kI32}) {
    for (int shift : {0, 1}) {
      for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
        SCOPED_TRACE(std::string(dtype == DType::kI64 ? "int64" : "int32") + " shift " + std::to_string(shift) +
                     (mode == BoundsCheckMode::kFix ? " fix" : " error"));
        expect_bad_indices_match_reference(testing::make_problem(tables, 107001, n, dtype), mode, indices,
                                           clean.offsets, planted, shift);
      }
    }
  }
}

// Error mode splits its blocks between the offsets and the indices: a bad offset deep in a large
// batch is found by an offsets block, every block fills its whole slot (a workspace reused after a
// failing check reports a clean batch clean), and an all-empty batch (N = 0) checks cleanly.
TEST(GpuTbeBoundsCheck, SplitRolesFindDeepBadOffsetsFillEverySlotAndTakeEmptyBatches) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(412);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{1000, 4}, {50000, 4}};
  const std::int64_t batch_size = 400001;
  const auto clean = bounds_check_batch(tables, batch_size, seed);
  const auto n = static_cast<std::int64_t>(clean.indices.size());
  auto damaged_offsets = clean.offsets;
  damaged_offsets[600000] = damaged_offsets[600002] + 3;  // non-monotone, second feature
  auto damaged_indices = clean.indices;
  damaged_indices[static_cast<std::size_t>(n - 7)] = -3;
  auto problem = testing::make_problem(tables, batch_size, n, DType::kI64);
  auto ref_indices = damaged_indices, ref_offsets = damaged_offsets;
  const auto want = ref::tbe_bounds_check(problem, BoundsCheckMode::kError, ref_indices, ref_offsets);
  ASSERT_GT(want.bad_offsets, 0);
  const auto got = gpu_bounds_check(problem, BoundsCheckMode::kError, damaged_indices, damaged_offsets);
  EXPECT_EQ(got.report.bad_offsets, want.bad_offsets);
  EXPECT_EQ(got.report.first_bad_offset_position, want.first_bad_offset_position);
  EXPECT_EQ(got.report.first_bad_offset_value, want.first_bad_offset_value);
  EXPECT_EQ(got.report.bad_indices, want.bad_indices);

  // One workspace: a failing check, then the clean batch.
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  const auto ws_bytes = egpu::bounds_check_workspace_bytes(problem);
  auto ws = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(ws_bytes));
  auto d_bad_i = gpu::upload(damaged_indices);
  auto d_bad_o = gpu::upload(damaged_offsets);
  auto d_clean_i = gpu::upload(clean.indices);
  auto d_clean_o = gpu::upload(clean.offsets);
  ASSERT_TRUE(egpu::bounds_check(problem, *layout, BoundsCheckMode::kError, d_bad_i->data(), d_bad_o->data(),
                                 ws->data(), ws_bytes).is_ok());
  auto failing = egpu::read_bounds_check_report(problem, BoundsCheckMode::kError, d_bad_i->data(), d_bad_o->data(),
                                                ws->data());
  ASSERT_TRUE(failing.is_ok());
  EXPECT_GT(failing->bad_offsets + failing->bad_indices, 0);
  ASSERT_TRUE(egpu::bounds_check(problem, *layout, BoundsCheckMode::kError, d_clean_i->data(), d_clean_o->data(),
                                 ws->data(), ws_bytes).is_ok());
  auto passing = egpu::read_bounds_check_report(problem, BoundsCheckMode::kError, d_clean_i->data(),
                                                d_clean_o->data(), ws->data());
  ASSERT_TRUE(passing.is_ok());
  EXPECT_EQ(passing->bad_indices, 0);
  EXPECT_EQ(passing->bad_offsets, 0);
  EXPECT_FALSE(passing->has_bad_index);
  EXPECT_FALSE(passing->has_bad_offset);
  EXPECT_FALSE(passing->last_offset_fixed);

  // Every bag empty.
  const std::vector<std::int64_t> empty_offsets(2 * 5 + 1, 0);
  auto empty_problem = testing::make_problem(tables, 5, 0, DType::kI32);
  for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
    const auto empty = gpu_bounds_check(empty_problem, mode, {}, empty_offsets);
    EXPECT_EQ(empty.report.bad_indices, 0);
    EXPECT_EQ(empty.report.bad_offsets, 0);
    EXPECT_FALSE(empty.report.last_offset_fixed);
    EXPECT_EQ(empty.offsets, empty_offsets);
  }
}

// Decreasing offsets planted at a warp's first entry, inside a warp, in a tile's second entry, in
// the last entries and at random are counted and the first reported as the reference does, in
// both widths, with the offsets array aligned and not, and the fix mode repairs the offsets as the
// reference.
TEST(GpuTbeBoundsCheck, DecreasingOffsetsAnywhereMatchTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(414);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{1000, 4}, {5000, 4}};
  const std::int64_t batch_size = 200003;  // 400007 offsets: several tiles per block, an odd count
  const auto clean = bounds_check_batch(tables, batch_size, seed);
  const auto entries = static_cast<std::int64_t>(clean.offsets.size());
  std::mt19937_64 rng(seed);
  // Each set: the positions made lower than their predecessor.
  const std::vector<std::vector<std::int64_t>> plantings = {
      {4096},                      // a block's first thread
      {4104},                      // inside a warp
      {4099, 1},                   // the second entry too
      {entries - 2, entries - 5},  // the last entries
      {}};                         // random, below
  for (std::size_t set = 0; set < plantings.size(); ++set) {
    std::vector<std::int64_t> positions = plantings[set];
    if (positions.empty()) {
      for (int k = 0; k < 40; ++k) positions.push_back(1 + static_cast<std::int64_t>(rng() % (entries - 2)));
    }
    auto damaged = clean.offsets;
    for (const std::int64_t p : positions) {
      damaged[static_cast<std::size_t>(p)] = damaged[static_cast<std::size_t>(p - 1)] - 1 - static_cast<std::int64_t>(rng() % 3);
    }
    for (DType dtype : {DType::kI32, DType::kI64}) {
      const auto problem = testing::make_problem(tables, batch_size, static_cast<std::int64_t>(clean.indices.size()), dtype);
      for (int offsets_shift : {0, 1}) {
        for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
          SCOPED_TRACE("set " + std::to_string(set) + (dtype == DType::kI64 ? " int64" : " int32") + " shift " +
                       std::to_string(offsets_shift) + (mode == BoundsCheckMode::kFix ? " fix" : " error"));
          auto ref_indices = clean.indices, ref_offsets = damaged;
          const auto want = ref::tbe_bounds_check(problem, mode, ref_indices, ref_offsets);
          ASSERT_GT(want.bad_offsets, 0);
          const auto got = gpu_bounds_check(problem, mode, clean.indices, damaged, 0, offsets_shift);
          EXPECT_EQ(got.report.bad_offsets, want.bad_offsets);
          EXPECT_EQ(got.report.first_bad_offset_position, want.first_bad_offset_position);
          EXPECT_EQ(got.report.first_bad_offset_value, want.first_bad_offset_value);
          if (mode == BoundsCheckMode::kFix) {
            EXPECT_EQ(got.offsets, ref_offsets);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace parity
