#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/test_support.hpp"
#include "gemm/model_hopper.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/model.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

DeviceParams device_named(const char* name) {
  auto spec = hw::find_hardware(name);
  EXPECT_TRUE(spec.is_ok()) << spec.status().to_string();
  auto device = device_params_from_spec(spec.value());
  EXPECT_TRUE(device.is_ok()) << device.status().to_string();
  return device.value();
}

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  return p;
}

class HopperModelTest : public ::testing::Test {
 protected:
  DeviceParams device_ = device_named("h200");
  GemmModel model_{device_, default_scalars(device_)};
  std::vector<Candidate> space_ = hopper_modelled_space(ProblemClass{});
};

TEST_F(HopperModelTest, DeviceParamsFromCatalogue) {
  EXPECT_EQ(device_.kind, ModelKind::kHopper);
  EXPECT_EQ(device_.num_sms, 132);
  EXPECT_GT(device_.peak_bf16_flops_per_s, 5e14);
  EXPECT_EQ(space_.size(), 256u);
}

// Equal per-tile cost: batch entries of one tile each are identical tiles, so W+1 full waves (or
// W waves plus a partial one) can never be predicted faster than W waves.
TEST_F(HopperModelTest, MoreWavesNeverFaster) {
  for (const Candidate& c : space_) {
    const PreparedCandidate prepared = model_.prepare(ProblemClass{}, c);
    const int p = prepared.hopper.usable_sms;
    double previous_us = 0.0;
    for (int waves = 1; waves <= 4; ++waves) {
      const double full_us = model_.predict_us(shape(c.tile_m, c.tile_n, 4096, waves * p), prepared);
      EXPECT_GE(full_us, previous_us) << c.short_name() << " waves=" << waves;
      const double partial_us =
          model_.predict_us(shape(c.tile_m, c.tile_n, 4096, waves * p + 1), prepared);
      EXPECT_GT(partial_us, full_us) << c.short_name() << " waves=" << waves << "+1 tile";
      previous_us = full_us;
    }
  }
}

// At one alignment class: the sizes decide the alignment (rows of K elements), and a misaligned
// problem runs other (non-TMA) kernels, so K is compared at a fixed declared alignment. Split
// candidates at K of at most two tiles (+infinity: not offered) are skipped.
TEST_F(HopperModelTest, MonotoneInK) {
  const std::uint64_t seed = testing::test_seed(7);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> size(1, 2500);
  for (const int alignment : {16, 2}) {
    const std::int64_t unit = alignment / 2;  // bf16 elements per alignment unit
    for (int trial = 0; trial < 200; ++trial) {
      const Candidate& c = space_[rng() % space_.size()];
      const std::int64_t m = unit * size(rng), n = unit * size(rng), k1 = unit * size(rng),
                         k2 = k1 + unit * size(rng);
      GemmProblem p1 = shape(m, n, k1), p2 = shape(m, n, k2);
      p1.alignment_bytes = p2.alignment_bytes = alignment;
      ASSERT_EQ(p1.alignment_class_bytes(), p2.alignment_class_bytes());
      const double t1 = model_.predict_us(p1, c);
      const double t2 = model_.predict_us(p2, c);
      // A split candidate is not offered for a K-loop of at most two tiles (ShortKLoopsAreNotSplit).
      if (std::isinf(t1) && splits_short_k_loop(static_cast<double>(k1), 1.0 / c.tile_k, c.split_k)) continue;
      EXPECT_LE(t1, t2) << c.short_name() << " m=" << m << " n=" << n << " k=" << k1 << "->" << k2
                        << " align=" << alignment;
    }
  }
}

// Split-K only pays when the output tiles leave SMs idle: with whole waves of tiles it is never
// predicted faster; with a single tile and a long K it is.
TEST_F(HopperModelTest, SplitKHelpsOnlyWhenTilesAreFewerThanSms) {
  for (const Candidate& base : space_) {
    if (base.split_k != 1) continue;
    const PreparedCandidate prepared = model_.prepare(ProblemClass{}, base);
    for (const int waves : {1, 2, 3}) {
      const GemmProblem p = shape(static_cast<std::int64_t>(base.tile_m) * prepared.hopper.usable_sms,
                                  static_cast<std::int64_t>(base.tile_n) * waves, 8192);
      const double unsplit_us = model_.predict_us(p, base);
      for (const int split : {2, 4, 8}) {
        Candidate c = base;
        c.split_k = split;
        c.reduction = ReductionScheme::kComputeType;
        EXPECT_GE(model_.predict_us(p, c), unsplit_us) << c.short_name() << " waves=" << waves;
      }
    }
    const GemmProblem one_tile = shape(base.tile_m, base.tile_n, 65536);
    Candidate split = base;
    split.split_k = 8;
    split.reduction = ReductionScheme::kComputeType;
    EXPECT_LT(model_.predict_us(one_tile, split), model_.predict_us(one_tile, base))
        << base.short_name();
  }
}

// A K-loop of at most two tiles is never split (kMaxUnsplitKTiles): every split candidate of the
// space predicts +infinity at K = 2 tk, with or without TMA, and a finite time one element later;
// the unsplit candidates stay finite.
TEST_F(HopperModelTest, ShortKLoopsAreNotSplit) {
  for (const int alignment : {16, 2}) {
    for (const Candidate& c : space_) {
      GemmProblem at_two_tiles = shape(4096, 1024, 2 * c.tile_k);
      at_two_tiles.alignment_bytes = alignment;
      GemmProblem past = at_two_tiles;
      past.k += 1;
      if (c.split_k > 1) {
        EXPECT_TRUE(std::isinf(model_.predict_us(at_two_tiles, c))) << c.short_name() << " align " << alignment;
      } else {
        EXPECT_TRUE(std::isfinite(model_.predict_us(at_two_tiles, c))) << c.short_name() << " align " << alignment;
      }
      EXPECT_TRUE(std::isfinite(model_.predict_us(past, c))) << c.short_name() << " align " << alignment;
    }
  }
}

// Cooperative schedules (cuBLASLt custom options 4..7) expose one epilogue per tile: with W whole
// waves the difference to the same tile as a ping-pong option is exactly W epilogues, so its
// relative cost falls as K grows; kernels without TMA have no such schedule split.
TEST_F(HopperModelTest, CooperativeVariantsExposeOneEpiloguePerWave) {
  ModelScalars s = default_scalars(device_);
  s.epilogue_us = 0.5;
  s.feed_intensity = 1e-9;  // no operand-feed difference: the epilogue alone separates them
  // Compute-bound: with memory a million times faster the 4-norm of compute and L2 -> SM time is
  // the compute time, and the K-loop leaves no slack for the epilogue to hide in.
  DeviceParams fast_memory = device_;
  fast_memory.hbm_bytes_per_s *= 1e6;
  const GemmModel model(fast_memory, s);
  Candidate ping_pong;
  ping_pong.tile_m = ping_pong.tile_n = 128;
  ping_pong.cluster_n = 2;
  Candidate cooperative = ping_pong;
  cooperative.variant = 4;
  const int sms = model.prepare(ProblemClass{}, ping_pong).hopper.usable_sms;
  constexpr int kWaves = 6;
  double previous_excess = 1e300;
  for (const std::int64_t k : {512, 2048, 8192}) {
    const GemmProblem p = shape(128 * sms, 128 * kWaves, k);
    const double t0 = model.predict_us(p, ping_pong), t4 = model.predict_us(p, cooperative);
    EXPECT_NEAR(t4 - t0, kWaves * s.epilogue_us, 1e-9 * t4) << "k=" << k;
    EXPECT_LT(t4 / t0 - 1.0, previous_excess) << "k=" << k;
    previous_excess = t4 / t0 - 1.0;
  }
  GemmProblem misaligned = shape(128 * sms, 128 * kWaves, 512);
  misaligned.alignment_bytes = 8;
  EXPECT_EQ(model.predict_us(misaligned, cooperative), model.predict_us(misaligned, ping_pong));
}

// The TMA producer keeps loading the next tile while a cooperative tile's epilogue runs: in a
// memory-bound K-loop the epilogue hides in the tensor cores' idle time, so the cooperative option
// costs less than one epilogue per wave more than the ping-pong one (and nothing at all when the
// K-loop's slack exceeds the epilogue), while a compute-bound grid pays it in full (test above).
TEST_F(HopperModelTest, CooperativeEpilogueHidesInAMemoryBoundKLoop) {
  ModelScalars s = default_scalars(device_);
  s.feed_intensity = 1e-9;
  s.dram_efficiency = 0.3;  // memory-bound
  Candidate ping_pong;
  ping_pong.tile_m = ping_pong.tile_n = 128;
  Candidate cooperative = ping_pong;
  cooperative.variant = 4;
  const int sms = GemmModel(device_, s).prepare(ProblemClass{}, ping_pong).hopper.usable_sms;
  constexpr int kWaves = 6;
  const GemmProblem p = shape(128 * sms, 128 * kWaves, 4096);
  s.epilogue_us = 0.5;
  const GemmModel small_epilogue(device_, s);
  EXPECT_NEAR(small_epilogue.predict_us(p, cooperative), small_epilogue.predict_us(p, ping_pong),
              1e-9 * small_epilogue.predict_us(p, ping_pong));
  s.epilogue_us = 1e4;  // longer than any K-loop: exposed beyond the memory stream
  const GemmModel huge_epilogue(device_, s);
  const double excess =
      huge_epilogue.predict_us(p, cooperative) - huge_epilogue.predict_us(p, ping_pong);
  EXPECT_GT(excess, 0.0);
  EXPECT_LT(excess, kWaves * s.epilogue_us);
}

// A tile column of 168 bf16 outputs is 336 bytes, not a whole number of 32-byte sectors: the
// partial sectors at tile boundaries are read and written whole, so a store-bound grid of 168-row
// tiles moves more bytes per output than one of 160- or 176-row tiles; fp32 split-K partials
// (672 bytes per column) are whole sectors and pay nothing extra.
TEST_F(HopperModelTest, OutputColumnsOfPartialSectorsCostWholeSectors) {
  const GemmProblem p = shape(168 * 160 * 11, 256, 32);  // every tile height divides M
  const auto per_output = [&](int tile_m, int split_k) {
    Candidate c;
    c.tile_m = tile_m;
    c.tile_n = 128;
    c.split_k = split_k;
    return model_.predict_us(p, c);
  };
  EXPECT_GT(per_output(168, 1), 1.15 * per_output(176, 1));
  EXPECT_GT(per_output(168, 1), 1.15 * per_output(160, 1));
  const GemmProblem long_k = shape(168 * 16, 128, 65536);
  Candidate split168, split176;
  split168.tile_m = 168;
  split176.tile_m = 176;
  split168.tile_n = split176.tile_n = 128;
  split168.split_k = split176.split_k = 8;
  const double t168 = model_.predict_us(long_k, split168), t176 = model_.predict_us(long_k, split176);
  EXPECT_LT(t168, 1.05 * t176);
}

// A cooperative schedule splits a tile's rows over two warpgroups, each reading the whole B slice:
// at equal epilogue cost it runs its K-loop slower than a ping-pong schedule of the same tile.
TEST_F(HopperModelTest, CooperativeWarpgroupsFeedBTwice) {
  ModelScalars s = default_scalars(device_);
  s.epilogue_us = 0.01;
  s.l2_bandwidth_ratio = 8.0;  // compute-bound: the K-loop runs at the tensor rate
  const GemmModel model(device_, s);
  Candidate ping_pong;
  ping_pong.tile_m = ping_pong.tile_n = 128;
  Candidate cooperative = ping_pong;
  cooperative.variant = 5;
  const GemmProblem p = shape(16384, 16384, 16384);
  const double intensity_ratio = (128.0 * 128.0 / 384.0 / (128.0 * 128.0 / 384.0 + s.feed_intensity)) /
                                 (64.0 / (64.0 + s.feed_intensity));
  const double t0 = model.predict_us(p, ping_pong), t5 = model.predict_us(p, cooperative);
  EXPECT_GT(t5, t0 * 1.02);
  // Compute-bound: the time ratio approaches the rate ratio.
  EXPECT_NEAR(t0 / t5, intensity_ratio, 0.02);
}

// Ping-pong hides a tile's epilogue behind the other warpgroup's K-loop: only its excess over one
// K-loop is charged, per wave. Long K-loops hide it entirely; one-iteration K-loops do not.
TEST_F(HopperModelTest, PingPongExposesOnlyTheEpilogueBeyondOneKLoop) {
  ModelScalars short_epilogue = default_scalars(device_), long_epilogue = short_epilogue;
  short_epilogue.epilogue_us = 0.01;
  long_epilogue.epilogue_us = 5.0;
  const GemmModel fast(device_, short_epilogue), slow(device_, long_epilogue);
  Candidate ping_pong;
  ping_pong.tile_m = ping_pong.tile_n = 64;
  const int sms = fast.prepare(ProblemClass{}, ping_pong).hopper.usable_sms;
  constexpr int kWaves = 8;
  const GemmProblem deep = shape(64 * sms, 64 * kWaves, 65536);
  EXPECT_EQ(slow.predict_us(deep, ping_pong), fast.predict_us(deep, ping_pong));
  const GemmProblem shallow = shape(64 * sms, 64 * kWaves, 64);
  const double excess = slow.predict_us(shallow, ping_pong) - fast.predict_us(shallow, ping_pong);
  EXPECT_GT(excess, kWaves * 4.0);
  EXPECT_LE(excess, kWaves * 5.0);
  // Without TMA (no warp-specialised epilogue overlap modelled) nothing changes.
  GemmProblem misaligned = shallow;
  misaligned.alignment_bytes = 8;
  EXPECT_EQ(slow.predict_us(misaligned, ping_pong), fast.predict_us(misaligned, ping_pong));
}

// A memory-bound pipeline pays for its bytes once: n max(memory, compute) + min(memory, compute),
// and the last wave's store is not charged again when the K-loop already paid it as bandwidth. A
// short-K grid of large tiles (few waves, a quarter of the output in the last one) then moves the
// same bytes in about the same time as one of smaller tiles.
TEST_F(HopperModelTest, MemoryBoundGridsPayTheirBytesOnce) {
  ModelScalars s = default_scalars(device_);
  s.tile_overhead_us = 0.01;
  s.epilogue_us = 0.01;
  s.launch_us = 1.0;
  s.bw_saturation = 0.1;
  s.l2_bandwidth_ratio = 8.0;
  const GemmModel model(device_, s);
  const GemmProblem p = shape(131072, 128, 64);
  const double bytes = 2.0 * (131072.0 * 64 + 64.0 * 128 + 131072.0 * 128);
  const double bytes_us = bytes / (device_.hbm_bytes_per_s * s.dram_efficiency) * 1e6;
  for (const int tile_m : {128, 256}) {
    Candidate c;
    c.tile_m = tile_m;
    c.tile_n = 128;
    c.cluster_m = 2;  // along M, which has an even number of tiles (no padded cluster)
    const double ratio = (model.predict_us(p, c) - s.launch_us) / bytes_us;
    EXPECT_GT(ratio, 0.95) << "tile_m=" << tile_m;
    EXPECT_LT(ratio, 1.15) << "tile_m=" << tile_m;
  }
}

// Operands far larger than the L2 are re-read from DRAM for every window of concurrent tiles:
// whole tile rows of A and tile columns of B per K-iteration. With fast tensor cores and L2, slow
// DRAM then sets the time (a window counted in matrix rows instead of tile rows would not).
TEST_F(HopperModelTest, DramWindowCountsWholeTileRowsAndColumns) {
  ModelScalars s = default_scalars(device_);
  s.mma_efficiency = 1.0;
  s.feed_intensity = 1e-9;
  s.l2_bandwidth_ratio = 1000.0;
  s.dram_efficiency = 0.3;
  const GemmModel model(device_, s);
  Candidate small;
  small.tile_m = small.tile_n = 64;
  const GemmProblem p = shape(16384, 16384, 16384);
  const double compute_us = p.flop_count() / device_.peak_bf16_flops_per_s * 1e6;
  EXPECT_GT(model.predict_us(p, small), 1.5 * compute_us);
}

// Below 16-byte alignment there is no TMA: no multicast and no cluster factor (a cluster shape
// changes nothing), the legacy rate, and half of it at 2 bytes (no cp.async).
TEST_F(HopperModelTest, KernelsWithoutTmaIgnoreClustersAndRunAtTheLegacyRate) {
  ModelScalars s = default_scalars(device_);
  s.single_cta_efficiency = 0.9;
  s.cluster4_efficiency = 0.85;
  const GemmModel model(device_, s);
  Candidate single;
  single.tile_m = single.tile_n = 128;
  Candidate pair = single, quad = single;
  pair.cluster_m = 2;
  quad.cluster_m = quad.cluster_n = 2;
  const auto at = [](int alignment) {
    GemmProblem p = shape(8192, 8192, 8192);
    p.alignment_bytes = alignment;
    return p;
  };
  for (const int alignment : {2, 4, 8}) {
    EXPECT_EQ(model.predict_us(at(alignment), pair), model.predict_us(at(alignment), single));
    EXPECT_EQ(model.predict_us(at(alignment), quad), model.predict_us(at(alignment), single));
    EXPECT_GT(model.predict_us(at(alignment), single), model.predict_us(at(16), single));
  }
  EXPECT_NE(model.predict_us(at(16), pair), model.predict_us(at(16), single));
  // Compute bound: 2-byte rows run at half the 4-byte rate, 8-byte rows like 4-byte ones.
  const double t2 = model.predict_us(at(2), single), t4 = model.predict_us(at(4), single);
  EXPECT_GT(t2, 1.8 * t4);
  EXPECT_EQ(model.predict_us(at(8), single), t4);
}

// Kernels without TMA (cp.async on 4- and 8-byte rows, register loads on 2-byte rows) feed every
// operand element through the load units: their per-flop K-loop time falls with the tile's
// intensity I = tm tn / (tm + tn) as (I + 32) / I (normalised at 128x128), well beyond the TMA
// kernels' feed term.
TEST_F(HopperModelTest, LegacyKernelsFeedLargerTilesFaster) {
  const GemmModel model(device_, default_scalars(device_));
  const auto per_flop_us = [&](int alignment, int tm, int tn) {
    ProblemClass key;
    key.alignment_bytes = alignment;
    Candidate c;
    c.tile_m = tm;
    c.tile_n = tn;
    const PreparedCandidate p = model.prepare(key, c);
    return p.hopper.compute_us_per_iter / (2.0 * tm * tn * c.tile_k);
  };
  const auto feed = [](double tm, double tn) {
    const double intensity = tm * tn / (tm + tn);
    return intensity / (intensity + 32.0);
  };
  for (const int alignment : {2, 4, 8}) {
    // The generic I / (I + feed_intensity) term moves the ratio by < 2%; the feed factor by ~9%.
    const double big = per_flop_us(alignment, 256, 128) / per_flop_us(alignment, 128, 128);
    const double narrow = per_flop_us(alignment, 256, 64) / per_flop_us(alignment, 128, 128);
    EXPECT_LT(big, feed(128, 128) / feed(256, 128) * 1.0 + 1e-12);
    EXPECT_LT(big, 0.93);
    EXPECT_GT(narrow, 1.1);
    EXPECT_EQ(per_flop_us(alignment, 128, 256), per_flop_us(alignment, 256, 128));
  }
  // TMA kernels: only the generic feed term, a few percent.
  const double tma = per_flop_us(16, 256, 128) / per_flop_us(16, 128, 128);
  EXPECT_GT(tma, 0.93);
}

TEST_F(HopperModelTest, PredictionsStayBelowThePeaks) {
  const GemmProblem p = shape(8192, 8192, 8192);
  for (const Candidate& c : space_) {
    const double us = model_.predict_us(p, c);
    ASSERT_TRUE(std::isfinite(us)) << c.short_name();
    const double tflops = p.flop_count() / (us * 1e-6) / 1e12;
    EXPECT_LT(tflops, device_.peak_bf16_flops_per_s / 1e12) << c.short_name();
    // A memory-light shape: the model must not fall below 20% of peak for any tile of the space.
    EXPECT_GT(tflops, 0.2 * device_.peak_bf16_flops_per_s / 1e12) << c.short_name();
  }
}

TEST_F(HopperModelTest, BatchAndOneByOnePredictionsAgree) {
  const GemmProblem p = shape(3000, 700, 5000);
  std::vector<PreparedCandidate> prepared;
  for (const Candidate& c : space_) prepared.push_back(model_.prepare(problem_class(p), c));
  std::vector<double> all(prepared.size());
  model_.predict_all_us(p, prepared.data(), prepared.size(), all.data());
  for (std::size_t i = 0; i < space_.size(); ++i) {
    EXPECT_DOUBLE_EQ(all[i], model_.predict_us(p, space_[i])) << space_[i].short_name();
  }
}

TEST(OrigamiModelTest, WaveQuantisationAndXcdMapping) {
  for (const char* name : {"mi300x", "mi350x"}) {
    const DeviceParams device = device_named(name);
    EXPECT_EQ(device.kind, ModelKind::kOrigami) << name;
    EXPECT_EQ(device.num_l2_domains, 8) << name;
    const GemmModel model(device, default_scalars(device));
    Candidate c;
    c.tile_m = 256;
    c.tile_n = 256;
    c.tile_k = 64;
    c.mi_m = c.mi_n = 16;
    c.mi_k = device.mi_k_16;
    c.group_size = 4;
    c.xcd_mapping = XcdMapping::kContiguous;
    // One more tile than CUs: a second timestep of the same tile cost. (K = 4000 is not whole
    // 128-byte rows, so Origami's non-temporal short circuit does not reject these skinny shapes.)
    const GemmProblem full = shape(256, 256LL * device.num_sms, 4000);
    const GemmProblem one_more = shape(256, 256LL * (device.num_sms + 1), 4000);
    EXPECT_GT(model.predict_us(one_more, c), 1.5 * model.predict_us(full, c)) << name;
    // Round-robin dealing spreads an XCD's tiles: never more L2 hits than the contiguous remap.
    Candidate round_robin = c;
    round_robin.xcd_mapping = XcdMapping::kRoundRobin;
    for (const auto& p : {shape(8192, 8192, 8192), shape(4096, 16384, 2048), shape(30000, 512, 4096)}) {
      EXPECT_GE(model.predict_us(p, round_robin), model.predict_us(p, c)) << name;
    }
    // Tiles that do not fit in LDS are infeasible.
    Candidate huge = c;
    huge.tile_m = huge.tile_n = 512;
    huge.tile_k = 512;
    EXPECT_TRUE(std::isinf(model.predict_us(shape(4096, 4096, 4096), huge))) << name;
  }
}

TEST(OrigamiModelTest, StreamKIsChargedWholeTimestepsLikeDataParallel) {
  const DeviceParams device = device_named("mi300x");
  const GemmModel model(device, default_scalars(device));
  Candidate dp;
  dp.tile_m = dp.tile_n = 256;
  dp.tile_k = 64;
  dp.mi_m = dp.mi_n = 16;
  dp.mi_k = device.mi_k_16;
  dp.xcd_mapping = XcdMapping::kContiguous;
  Candidate sk = dp;
  sk.decomposition = Decomposition::kStreamK;
  // 1.25 waves of tiles: Origami counts whole timesteps of max(grid, tiles) for both (its
  // compute_launch_parameters: fractional stream-K assignment is approximated as whole waves).
  const GemmProblem p = shape(256LL * 380, 256, 8100);
  const auto sk_terms = model.impl().explain(p, model.prepare(problem_class(p), sk));
  const auto dp_terms = model.impl().explain(p, model.prepare(problem_class(p), dp));
  EXPECT_EQ(sk_terms.waves, 2.0);
  EXPECT_EQ(dp_terms.waves, 2.0);
  EXPECT_TRUE(std::isfinite(sk_terms.total_us));
}

TEST(GemmScalars, ArrayRoundTripAndBounds) {
  ModelScalars s;
  s.launch_us = 3.25;
  s.cluster_efficiency = 0.95;
  EXPECT_EQ(scalars_to_array(scalars_from_array(scalars_to_array(s))), scalars_to_array(s));
  const auto defaults = scalars_to_array(ModelScalars{});
  for (int i = 0; i < kNumModelScalars; ++i) {
    const auto bounds = scalar_bounds(i);
    EXPECT_LE(bounds[0], defaults[static_cast<std::size_t>(i)]) << scalar_name(i);
    EXPECT_GE(bounds[1], defaults[static_cast<std::size_t>(i)]) << scalar_name(i);
  }
}

// predict_top_us: every value is <= the exact prediction (a lower bound where pruned) and the
// keep smallest values are exact, so the selector's top-k and near-tie group never change.
TEST_F(HopperModelTest, PrunedPredictionsAreLowerBoundsAndTheTopIsExact) {
  ModelScalars s = default_scalars(device_);
  s.tail_boost = 0.3;  // the bound divides by the largest boost; exercise a large one
  s.single_cta_efficiency = 0.9;
  s.cluster4_efficiency = 0.85;
  const GemmModel model(device_, s);
  // Half the trials prepare the space for TMA kernels, half for 2-byte rows (no TMA).
  ProblemClass legacy;
  legacy.alignment_bytes = 2;
  std::vector<PreparedCandidate> prepared, prepared_tma, prepared_legacy;
  for (const auto& c : space_) prepared_tma.push_back(model.prepare(ProblemClass{}, c));
  for (const auto& c : space_) prepared_legacy.push_back(model.prepare(legacy, c));
  const std::uint64_t seed = testing::test_seed(23);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  std::vector<double> exact(space_.size()), pruned(space_.size());
  constexpr std::size_t kKeep = 3;
  for (int trial = 0; trial < 400; ++trial) {
    prepared = trial % 2 == 0 ? prepared_tma : prepared_legacy;
    const GemmProblem p = shape(static_cast<std::int64_t>(std::exp(log_size(rng))),
                                static_cast<std::int64_t>(std::exp(log_size(rng))),
                                static_cast<std::int64_t>(std::exp(log_size(rng))));
    model.predict_all_us(p, prepared.data(), prepared.size(), exact.data());
    double cutoff = 0.0;
    const std::size_t computed = model.predict_top_us(p, prepared.data(), prepared.size(), kKeep,
                                                      0.01, pruned.data(), &cutoff);
    EXPECT_GE(computed, kKeep);
    // Exact values are bit-identical; bounds may only be lower (no tolerance needed: the bound
    // drops non-negative terms of the same expression).
    for (std::size_t i = 0; i < exact.size(); ++i) {
      ASSERT_LE(pruned[i], exact[i]) << p.describe() << " candidate " << i;
    }
    std::vector<double> sorted = exact;
    std::sort(sorted.begin(), sorted.end());
    const double limit = std::max(sorted[kKeep - 1], sorted[0] * 1.01);
    EXPECT_EQ(cutoff, limit) << p.describe();
    for (std::size_t i = 0; i < exact.size(); ++i) {
      if (exact[i] <= limit) EXPECT_EQ(pruned[i], exact[i]) << p.describe() << " candidate " << i;
      else EXPECT_GT(pruned[i], limit) << p.describe() << " candidate " << i;
    }
  }
}

// Cluster shape (measured on H200, docs/gemm.md): a 4-CTA cluster runs below a pair, a single CTA
// below a pair; and a cluster launches whole, so a grid one tile past a cluster multiple pays for
// the padded cluster.
TEST_F(HopperModelTest, ClusterShapeEfficienciesAndClusterPadding) {
  ModelScalars s = default_scalars(device_);
  s.single_cta_efficiency = 0.9;
  s.cluster_efficiency = 1.0;
  s.cluster4_efficiency = 0.85;
  const GemmModel model(device_, s);
  Candidate single, pair, quad;
  single.tile_m = pair.tile_m = quad.tile_m = 128;
  single.tile_n = pair.tile_n = quad.tile_n = 128;
  pair.cluster_m = 2;
  quad.cluster_m = quad.cluster_n = 2;
  const GemmProblem big = shape(8192, 8192, 8192);  // compute bound, many waves
  EXPECT_LT(model.predict_us(big, pair), model.predict_us(big, single));
  EXPECT_LT(model.predict_us(big, pair), model.predict_us(big, quad));
  // 3 tiles along M with a 2x1 cluster launch as 4: the same time as 4 tiles.
  const GemmProblem three = shape(3 * 128, 128 * 40, 4096), four = shape(4 * 128, 128 * 40, 4096);
  EXPECT_DOUBLE_EQ(model.predict_us(three, pair), model.predict_us(four, pair));
  EXPECT_LT(model.predict_us(three, single), model.predict_us(four, single));
}

// Compute and L2 -> SM time combine as a 4-norm: of one tile's two 2-CTA clusters, the one that
// multicasts the larger operand (fewer L2 -> SM bytes per K-iteration) is predicted faster even on
// a compute-bound shape, by less than 10% (measured 3-12% for 176x128, docs/gemm.md).
TEST_F(HopperModelTest, ClusterMovingFewerL2BytesIsFasterWhenComputeBound) {
  const GemmModel model(device_, default_scalars(device_));
  Candidate along_m;
  along_m.tile_m = 176;
  along_m.tile_n = 128;
  along_m.cluster_m = 2;  // B multicast: 176 + 64 rows read per CTA and K-step
  Candidate along_n = along_m;
  along_n.cluster_m = 1;
  along_n.cluster_n = 2;  // A multicast: 88 + 128 rows
  const GemmProblem p = shape(8192, 8192, 8192);
  const double t_m = model.predict_us(p, along_m), t_n = model.predict_us(p, along_n);
  EXPECT_LT(t_n, t_m);
  EXPECT_GT(t_n, 0.9 * t_m);
}

}  // namespace
}  // namespace parity::gemm

