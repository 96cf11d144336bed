// CPU micro-benchmarks of the data path (Google Benchmark; built on request, not run in CI):
//   cmake --build --preset cpu --target parity_data_bench && build/cpu/tests/parity_data_bench
// Criteo parsing is reported in lines/s on one core (items_per_second), from memory and from a
// file through the streaming reader; the generator and the binary reader in samples/s.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "parity/data/criteo.hpp"
#include "parity/train/metrics.hpp"

namespace {

using namespace parity::data;

DatasetSchema criteo_schema() {
  DatasetSchema schema;
  for (int t = 0; t < kCriteoCategoricalColumns; ++t) schema.tables.push_back({4'000'000, 1});
  return schema;
}

// Lines shaped like Criteo Kaggle's: small skewed counts, ~20% empty integers, 8-digit hex values
// with ~5% empty, ~230 bytes per line.
std::vector<std::string> realistic_lines(int count) {
  std::mt19937_64 engine(1);
  std::geometric_distribution<int> small_count(0.05);
  std::uniform_int_distribution<std::uint32_t> hash;
  std::uniform_real_distribution<double> unit;
  std::vector<std::string> lines;
  char hex[16];
  for (int i = 0; i < count; ++i) {
    std::string line = unit(engine) < 0.25 ? "1" : "0";
    for (int j = 0; j < kCriteoDenseColumns; ++j) {
      line += '\t';
      if (unit(engine) > 0.2)
        line += std::to_string(j == 4 ? small_count(engine) * 300 : small_count(engine));
    }
    for (int t = 0; t < kCriteoCategoricalColumns; ++t) {
      line += '\t';
      if (unit(engine) < 0.05) continue;
      std::snprintf(hex, sizeof(hex), "%08x", hash(engine));
      line += hex;
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void BM_CriteoParseLine(benchmark::State& state) {
  const CriteoLineParser parser = *CriteoLineParser::create(criteo_schema());
  const auto lines = realistic_lines(10000);
  float label = 0, dense[kCriteoDenseColumns];
  std::int64_t ids[kCriteoCategoricalColumns];
  CriteoLineParser::Error error;
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string& line = lines[i];
    benchmark::DoNotOptimize(parser.parse(line, &label, dense, ids, 1, &error));
    benchmark::ClobberMemory();
    bytes += line.size() + 1;
    i = i + 1 == lines.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_CriteoParseLine);

// The streaming reader end to end on one thread (prefetch off): read, split lines, parse, batch.
void BM_CriteoStreamFile(benchmark::State& state) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("parity_bench_" + std::to_string(::getpid()) + ".tsv");
  const int num_lines = 200000;
  {
    std::ofstream out(path, std::ios::binary);
    for (const std::string& line : realistic_lines(num_lines)) out << line << '\n';
  }
  std::int64_t lines = 0;
  for (auto _ : state) {
    auto reader = open_criteo_tsv(path, criteo_schema(),
                                  {.batch_size = 8192, .drop_last = false, .prefetch_batches = 0});
    Batch batch;
    while (*(*reader)->next(&batch)) lines += batch.batch_size;
  }
  std::filesystem::remove(path);
  state.SetItemsProcessed(lines);
}
BENCHMARK(BM_CriteoStreamFile)->Unit(benchmark::kMillisecond)->UseRealTime();

DatasetSchema tiny_like_schema() {
  DatasetSchema schema;
  schema.tables = {{10000, 1}, {20000, 2}, {5000, 1},  {1000, 3},
                   {50000, 1}, {100, 1},   {30000, 2}, {8000, 1}};
  return schema;
}

void BM_SyntheticGenerate(benchmark::State& state) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("parity_bench_syn_" + std::to_string(::getpid()));
  SyntheticOptions options;
  options.train_samples = state.range(0);
  options.eval_samples = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(generate_synthetic(tiny_like_schema(), options, dir).is_ok());
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations() * options.train_samples);
}
BENCHMARK(BM_SyntheticGenerate)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BinaryReader(benchmark::State& state) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("parity_bench_bin_" + std::to_string(::getpid()));
  SyntheticOptions options;
  options.train_samples = 1'000'000;
  (void)generate_synthetic(tiny_like_schema(), options, dir);
  std::int64_t samples = 0;
  for (auto _ : state) {
    auto reader = open_dataset(
        dir, "train", {.batch_size = 65536, .prefetch_batches = static_cast<int>(state.range(0))});
    Batch batch;
    while (*(*reader)->next(&batch)) samples += batch.batch_size;
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(samples);
}
BENCHMARK(BM_BinaryReader)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Exact AUC over an evaluation pass (Criteo's eval day has ~89M samples).
void BM_AucExact(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::mt19937_64 engine(3);
  std::normal_distribution<float> logit(0, 2);
  std::vector<float> labels(n), logits(n);
  for (std::size_t i = 0; i < n; ++i) {
    logits[i] = logit(engine);
    labels[i] = logits[i] + logit(engine) > 1.5f ? 1.0f : 0.0f;
  }
  for (auto _ : state) benchmark::DoNotOptimize(parity::train::auc_exact(labels, logits));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AucExact)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
