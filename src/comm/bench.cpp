// The collectives benchmark driver (nccl-tests conventions, see parity/comm/bench.hpp): for every
// collective, placement and size, fill a verifiable pattern, run once and count wrong elements
// against the serial result, then time warm-up + repetitions (barrier, call, synchronize), and
// take each repetition's slowest rank. Buffers come from the communicator, so the same driver
// runs host (local, MPI) and device (NCCL) backends.
#include "parity/comm/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "parity/bench/hbm.hpp"

namespace parity::comm {
namespace {

// Small integers: every sum over <= 32 ranks is exact in every dtype, so the check is exact.
double pattern_value(int rank, std::int64_t index) {
  return static_cast<double>((rank * 7 + index * 3) % 11) - 5.0;
}

void encode_value(DType dtype, double value, unsigned char* out) {
  switch (dtype) {
    case DType::kF32: {
      const auto v = static_cast<float>(value);
      std::memcpy(out, &v, 4);
      break;
    }
    case DType::kF64:
      std::memcpy(out, &value, 8);
      break;
    case DType::kI32: {
      const auto v = static_cast<std::int32_t>(value);
      std::memcpy(out, &v, 4);
      break;
    }
    case DType::kI64: {
      const auto v = static_cast<std::int64_t>(value);
      std::memcpy(out, &v, 8);
      break;
    }
    case DType::kBF16: {
      const auto v = float_to_bf16_bits(static_cast<float>(value));
      std::memcpy(out, &v, 2);
      break;
    }
    case DType::kF16: {
      const auto v = float_to_fp16_bits(static_cast<float>(value));
      std::memcpy(out, &v, 2);
      break;
    }
    default:
      break;
  }
}

double reduced_value(ReduceOp op, int ranks, std::int64_t index) {
  double acc = pattern_value(0, index);
  for (int r = 1; r < ranks; ++r) {
    acc = op == ReduceOp::kMax ? std::max(acc, pattern_value(r, index))
                               : acc + pattern_value(r, index);
  }
  return acc;
}

// The serial result of one call, element `i` of the receive region.
double expected_value(Collective collective, ReduceOp op, int rank, int ranks, std::int64_t count,
                      std::int64_t i) {
  switch (collective) {
    case Collective::kAllReduce:
      return reduced_value(op, ranks, i);
    case Collective::kReduceScatter:
      return reduced_value(op, ranks, rank * count + i);
    case Collective::kAllGather:
      return pattern_value(static_cast<int>(i / count), i % count);
    case Collective::kAllToAll:
      return pattern_value(static_cast<int>(i / count), rank * count + i % count);
    default:
      return pattern_value(0, i);  // broadcast from root 0
  }
}

struct Buffers {
  Communicator& comm;
  void* send = nullptr;
  void* recv = nullptr;
  void* exchange = nullptr;  // small buffer for combining per-rank times and error counts
  std::vector<unsigned char> host;
  ~Buffers() {
    comm.free_buffer(send);
    comm.free_buffer(recv);
    comm.free_buffer(exchange);
  }
};

// Where the call reads and writes for this placement (in place follows the interface's layouts).
struct CallPointers {
  void* send;
  void* recv;
  void* fill;  // where this rank's input pattern goes
};

CallPointers call_pointers(const Buffers& buffers, Collective collective, BenchPlacement placement,
                           int rank, std::int64_t count, std::size_t element_bytes) {
  auto* send = static_cast<unsigned char*>(buffers.send);
  auto* recv = static_cast<unsigned char*>(buffers.recv);
  const std::size_t rank_offset = static_cast<std::size_t>(count * rank) * element_bytes;
  if (placement == BenchPlacement::kOutOfPlace) return {send, recv, send};
  switch (collective) {
    case Collective::kAllGather:
      return {recv + rank_offset, recv, recv + rank_offset};
    case Collective::kReduceScatter:
      return {send, send + rank_offset, send};
    default:
      return {send, send, send};  // all_reduce, broadcast
  }
}

Status issue(Communicator& comm, Collective collective, const CallPointers& p, std::int64_t count,
             const CommBenchOptions& options) {
  switch (collective) {
    case Collective::kAllReduce:
      return comm.all_reduce(p.send, p.recv, count, options.dtype, options.op);
    case Collective::kReduceScatter:
      return comm.reduce_scatter(p.send, p.recv, count, options.dtype, options.op);
    case Collective::kAllGather:
      return comm.all_gather(p.send, p.recv, count, options.dtype);
    case Collective::kAllToAll:
      return comm.all_to_all(p.send, p.recv, count, options.dtype);
    case Collective::kBroadcast:
      return comm.broadcast(p.send, count, options.dtype, 0);
    default:
      break;
  }
  return invalid_argument("collective: ", collective_name(collective), " is not benchmarked");
}

// Fills the pattern, runs once, and returns the number of wrong elements on this rank.
Result<std::int64_t> check_once(Buffers& buffers, Collective collective,
                                const CallPointers& pointers, std::int64_t count,
                                const CommBenchOptions& options) {
  Communicator& comm = buffers.comm;
  const std::size_t element_bytes = dtype_size_bytes(options.dtype);
  const CollectiveProblem problem{collective, options.dtype, options.op, count, 0, nullptr};
  const std::int64_t send_elements = problem.send_elements(comm.size());
  const std::int64_t recv_elements = problem.recv_elements(comm.size());
  for (std::int64_t i = 0; i < send_elements; ++i) {
    encode_value(options.dtype, pattern_value(comm.rank(), i),
                 buffers.host.data() + static_cast<std::size_t>(i) * element_bytes);
  }
  PARITY_RETURN_IF_ERROR(
      comm.copy_from_host(pointers.fill, buffers.host.data(),
                          send_elements * static_cast<std::int64_t>(element_bytes)));
  PARITY_RETURN_IF_ERROR(issue(comm, collective, pointers, count, options));
  PARITY_RETURN_IF_ERROR(comm.synchronize(nullptr));
  PARITY_RETURN_IF_ERROR(
      comm.copy_to_host(buffers.host.data(), pointers.recv,
                        recv_elements * static_cast<std::int64_t>(element_bytes)));
  std::int64_t wrong = 0;
  unsigned char want[8];
  for (std::int64_t i = 0; i < recv_elements; ++i) {
    encode_value(options.dtype,
                 expected_value(collective, options.op, comm.rank(), comm.size(), count, i), want);
    if (std::memcmp(want, buffers.host.data() + static_cast<std::size_t>(i) * element_bytes,
                    element_bytes) != 0) {
      ++wrong;
    }
  }
  return wrong;
}

// Element-wise max (times) or sum (error counts) over ranks of a small host vector.
Status combine(Buffers& buffers, std::vector<double>& values, ReduceOp op) {
  const auto bytes = static_cast<std::int64_t>(values.size() * sizeof(double));
  PARITY_RETURN_IF_ERROR(buffers.comm.copy_from_host(buffers.exchange, values.data(), bytes));
  PARITY_RETURN_IF_ERROR(buffers.comm.all_reduce(buffers.exchange, buffers.exchange,
                                                 static_cast<std::int64_t>(values.size()),
                                                 DType::kF64, op));
  PARITY_RETURN_IF_ERROR(buffers.comm.synchronize(nullptr));
  return buffers.comm.copy_to_host(values.data(), buffers.exchange, bytes);
}

Result<CommBenchRow> measure(Buffers& buffers, Collective collective, BenchPlacement placement,
                             std::int64_t bytes, const CommBenchOptions& options,
                             std::int64_t previous_bytes) {
  Communicator& comm = buffers.comm;
  const int ranks = comm.size();
  const std::size_t element_bytes = dtype_size_bytes(options.dtype);
  const bool is_per_rank =
      collective != Collective::kAllReduce && collective != Collective::kBroadcast;
  CommBenchRow row;
  row.collective = collective;
  row.placement = placement;
  row.count = bytes / static_cast<std::int64_t>(element_bytes) / (is_per_rank ? ranks : 1);
  row.bytes = row.count * static_cast<std::int64_t>(element_bytes) * (is_per_rank ? ranks : 1);
  if (row.count == 0 || row.bytes == previous_bytes) return row;
  const CallPointers pointers =
      call_pointers(buffers, collective, placement, comm.rank(), row.count, element_bytes);
  PARITY_ASSIGN_OR_RETURN(row.wrong_elements,
                          check_once(buffers, collective, pointers, row.count, options));
  std::vector<double> wrong = {static_cast<double>(row.wrong_elements)};
  PARITY_RETURN_IF_ERROR(combine(buffers, wrong, ReduceOp::kSum));
  if (wrong[0] != 0.0) {
    return Status(StatusCode::kCommError,
                  parity::detail::concat("bench comm: ", collective_name(collective), " ",
                                         bench_placement_name(placement), " ", row.bytes,
                                         " B: ", wrong[0], " wrong elements over all ranks (",
                                         row.wrong_elements, " on rank ", comm.rank(), ")"));
  }
  for (int i = 0; i < options.warmup; ++i)
    PARITY_RETURN_IF_ERROR(issue(comm, collective, pointers, row.count, options));
  std::vector<double> times_ms;
  for (int i = 0; i < options.repetitions; ++i) {
    PARITY_RETURN_IF_ERROR(comm.barrier());
    const auto start = std::chrono::steady_clock::now();
    PARITY_RETURN_IF_ERROR(issue(comm, collective, pointers, row.count, options));
    PARITY_RETURN_IF_ERROR(comm.synchronize(nullptr));
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  PARITY_RETURN_IF_ERROR(combine(buffers, times_ms, ReduceOp::kMax));
  PARITY_ASSIGN_OR_RETURN(row.time, bench::summarize(times_ms));
  const double seconds = row.time.median_ms * 1e-3;
  row.algbw_gbps = seconds > 0.0 ? static_cast<double>(row.bytes) / seconds / 1e9 : 0.0;
  row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(collective, ranks);
  return row;
}

}  // namespace

std::string_view bench_placement_name(BenchPlacement placement) {
  return placement == BenchPlacement::kInPlace ? "in_place" : "out_of_place";
}

Status CommBenchOptions::validate() const {
  PARITY_CHECK_ARG(min_bytes >= 1, "--min-bytes: ", min_bytes, " must be >= 1");
  PARITY_CHECK_ARG(max_bytes >= min_bytes, "--max-bytes: ", max_bytes, " must be >= --min-bytes (",
                   min_bytes, ")");
  PARITY_CHECK_ARG(max_bytes <= (std::int64_t{1} << 40), "--max-bytes: ", max_bytes,
                   " exceeds 1 TiB");
  PARITY_CHECK_ARG(std::isfinite(step_factor) && step_factor > 1.0, "--step-factor: ", step_factor,
                   " must be > 1");
  PARITY_CHECK_ARG(!collectives.empty(), "--collectives: none given");
  for (Collective c : collectives) {
    PARITY_CHECK_ARG(c == Collective::kAllReduce || c == Collective::kAllGather ||
                         c == Collective::kReduceScatter || c == Collective::kAllToAll ||
                         c == Collective::kBroadcast,
                     "--collectives: ", collective_name(c),
                     " is not benchmarked (all_reduce, all_gather, "
                     "reduce_scatter, all_to_all, broadcast)");
  }
  PARITY_CHECK_ARG(!placements.empty(), "--placement: none given");
  PARITY_RETURN_IF_ERROR(check_collective_dtype(dtype).with_context("--dtype"));
  PARITY_CHECK_ARG(op == ReduceOp::kSum || op == ReduceOp::kMax, "--op: ", reduce_op_name(op),
                   " cannot be checked exactly (use sum or max)");
  PARITY_CHECK_ARG(warmup >= 0, "--warmup: ", warmup, " must be >= 0");
  PARITY_CHECK_ARG(repetitions >= 1, "--reps: ", repetitions, " must be >= 1");
  return Status::ok();
}

Result<std::vector<Collective>> parse_collective_list(std::string_view text) {
  std::vector<Collective> collectives;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    Result<Collective> collective = parse_collective(text.substr(0, comma));
    if (!collective.is_ok()) return collective.status().with_context("--collectives");
    collectives.push_back(*collective);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return collectives;
}

Result<std::vector<BenchPlacement>> parse_bench_placements(std::string_view text) {
  if (text == "both")
    return std::vector<BenchPlacement>{BenchPlacement::kOutOfPlace, BenchPlacement::kInPlace};
  if (text == "out_of_place") return std::vector<BenchPlacement>{BenchPlacement::kOutOfPlace};
  if (text == "in_place") return std::vector<BenchPlacement>{BenchPlacement::kInPlace};
  return invalid_argument("--placement: '", text, "' (expected both, out_of_place or in_place)");
}

Result<CommBenchOptions> comm_bench_options_from_settings(const CommBenchSettings& settings) {
  CommBenchOptions options;
  PARITY_ASSIGN_OR_RETURN(options.min_bytes, bench::parse_byte_count(settings.min_bytes, "--min-bytes"));
  PARITY_ASSIGN_OR_RETURN(options.max_bytes, bench::parse_byte_count(settings.max_bytes, "--max-bytes"));
  options.step_factor = settings.step_factor;
  PARITY_ASSIGN_OR_RETURN(options.collectives, parse_collective_list(settings.collectives));
  PARITY_ASSIGN_OR_RETURN(options.placements, parse_bench_placements(settings.placement));
  PARITY_ASSIGN_OR_RETURN(options.dtype, parse_dtype(settings.dtype));
  PARITY_ASSIGN_OR_RETURN(options.op, parse_reduce_op(settings.op));
  options.warmup = settings.warmup;
  options.repetitions = settings.repetitions;
  PARITY_RETURN_IF_ERROR(options.validate());
  return options;
}

std::string comm_bench_table(const CommBenchReport& report) {
  std::string text = parity::detail::concat(
      "bench comm: backend=", report.backend, " ranks=", report.ranks,
      " dtype=", dtype_name(report.options.dtype), " op=", reduce_op_name(report.options.op),
      " warmup=", report.options.warmup, " reps=", report.options.repetitions,
      " (time: median over repetitions of the slowest rank)\n");
  char line[256];
  std::snprintf(line, sizeof(line), "%-15s %-12s %12s %12s %11s %11s %10s %10s %6s\n", "collective",
                "placement", "bytes", "count", "median_us", "p90_us", "algbw_GB/s", "busbw_GB/s",
                "#wrong");
  text += line;
  for (const CommBenchRow& row : report.rows) {
    std::snprintf(
        line, sizeof(line), "%-15s %-12s %12lld %12lld %11.2f %11.2f %10.3f %10.3f %6lld\n",
        std::string(collective_name(row.collective)).c_str(),
        std::string(bench_placement_name(row.placement)).c_str(), static_cast<long long>(row.bytes),
        static_cast<long long>(row.count), row.time.median_ms * 1e3, row.time.p90_ms * 1e3,
        row.algbw_gbps, row.busbw_gbps, static_cast<long long>(row.wrong_elements));
    text += line;
  }
  return text;
}

std::vector<std::int64_t> sweep_sizes(std::int64_t min_bytes, std::int64_t max_bytes,
                                      double step_factor) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t size = min_bytes; size <= max_bytes;) {
    sizes.push_back(size);
    const auto next = static_cast<std::int64_t>(std::ceil(static_cast<double>(size) * step_factor));
    size = std::max(next, size + 1);
  }
  return sizes;
}

double bus_bandwidth_factor(Collective collective, int ranks) {
  const double n = ranks;
  switch (collective) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kAllToAllv:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

int ring_steps(Collective collective, int ranks) {
  return collective == Collective::kAllReduce ? 2 * (ranks - 1) : ranks - 1;
}

Result<CommBenchReport> run_comm_bench(Communicator& comm, const CommBenchOptions& options) {
  PARITY_RETURN_IF_ERROR(options.validate());
  CommBenchReport report{std::string(comm.backend_name()), comm.size(), options, {}};
  Buffers buffers{comm, nullptr, nullptr, nullptr, {}};
  // The largest send or receive region of any collective at max_bytes is max_bytes itself.
  PARITY_ASSIGN_OR_RETURN(buffers.send, comm.allocate_buffer(options.max_bytes));
  PARITY_ASSIGN_OR_RETURN(buffers.recv, comm.allocate_buffer(options.max_bytes));
  PARITY_ASSIGN_OR_RETURN(
      buffers.exchange,
      comm.allocate_buffer(static_cast<std::int64_t>(options.repetitions * sizeof(double))));
  buffers.host.resize(static_cast<std::size_t>(options.max_bytes));
  for (Collective collective : options.collectives) {
    for (BenchPlacement placement : options.placements) {
      // all_to_all has no in-place form; broadcast has only one (its buffer).
      if (collective == Collective::kAllToAll && placement == BenchPlacement::kInPlace) continue;
      if (collective == Collective::kBroadcast && placement == BenchPlacement::kOutOfPlace)
        continue;
      std::int64_t previous_bytes = 0;  // sizes that round to the same count are measured once
      for (std::int64_t bytes :
           sweep_sizes(options.min_bytes, options.max_bytes, options.step_factor)) {
        PARITY_ASSIGN_OR_RETURN(CommBenchRow row, measure(buffers, collective, placement, bytes,
                                                          options, previous_bytes));
        if (row.count > 0 && row.bytes != previous_bytes) report.rows.push_back(row);
        previous_bytes = std::max(previous_bytes, row.bytes);
      }
    }
  }
  return report;
}

}  // namespace parity::comm
