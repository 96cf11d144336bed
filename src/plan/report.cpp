// Plan reports: the plan/model consistency check, plan differences, the readable table and the
// Pareto-front SVG.
#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "parity/plan/plan_io.hpp"

namespace parity::plan {
namespace {

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

std::string cell(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + " " : std::string(width - text.size(), ' ') + text;
}

std::string gb(double bytes) { return fixed(bytes / 1e9, 2); }
std::string ms(double us) { return fixed(us / 1e3, 3); }

// Covered [begin, end) ranges must tile [0, total) exactly.
bool tiles(std::vector<std::pair<std::int64_t, std::int64_t>> ranges, std::int64_t total) {
  std::sort(ranges.begin(), ranges.end());
  std::int64_t next = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != next) return false;
    next = end;
  }
  return next == total;
}

}  // namespace

Status check_plan_matches_model(const Plan& plan, const PlannerModel& model) {
  PARITY_CHECK_ARG(plan.tables.size() == model.tables.size(), "plan: ", plan.tables.size(),
                   " tables, model '", model.name, "' has ", model.tables.size());
  for (std::size_t t = 0; t < plan.tables.size(); ++t) {
    const TablePlacement& placement = plan.tables[t];
    const PlannerTable& table = model.tables[t];
    PARITY_CHECK_ARG(placement.table == table.name, "plan: tables[", t, "] is '", placement.table,
                     "', the model's table ", t, " is '", table.name, "'");
    std::vector<std::pair<std::int64_t, std::int64_t>> rows, cols;
    std::vector<int> ranks;
    for (const Shard& shard : placement.shards) {
      PARITY_CHECK_ARG(shard.rank >= 0 && shard.rank < plan.num_gpus, "plan: table '", table.name,
                       "' has a shard on rank ", shard.rank, " of ", plan.num_gpus);
      PARITY_CHECK_ARG(std::find(ranks.begin(), ranks.end(), shard.rank) == ranks.end(),
                       "plan: table '", table.name, "' has two shards on rank ", shard.rank);
      ranks.push_back(shard.rank);
      rows.emplace_back(shard.row_begin, shard.row_end);
      cols.emplace_back(shard.col_begin, shard.col_end);
    }
    const bool is_full_rows = std::all_of(rows.begin(), rows.end(), [&](const auto& r) {
      return r.first == 0 && r.second == table.rows;
    });
    const bool is_full_cols = std::all_of(cols.begin(), cols.end(), [&](const auto& c) {
      return c.first == 0 && c.second == table.dim;
    });
    bool is_valid = false;
    switch (placement.type) {
      case ShardingType::kTableWise: is_valid = ranks.size() == 1 && is_full_rows && is_full_cols; break;
      case ShardingType::kColumnWise: is_valid = is_full_rows && tiles(cols, table.dim); break;
      case ShardingType::kRowWise: is_valid = is_full_cols && tiles(rows, table.rows); break;
      case ShardingType::kDataParallel:
        is_valid = static_cast<int>(ranks.size()) == plan.num_gpus && is_full_rows && is_full_cols;
        break;
    }
    PARITY_CHECK_ARG(is_valid, "plan: table '", table.name, "' (", table.rows, " x ", table.dim,
                     "): its ", placement.shards.size(), " ",
                     sharding_type_name(placement.type), " shards do not tile the table");
  }
  return Status::ok();
}

Status apply_plan_to_spec(const Plan& plan, model::ModelSpec& spec) {
  PARITY_ASSIGN_OR_RETURN(const PlannerModel model, planner_model_from_spec(spec));
  PARITY_RETURN_IF_ERROR(check_plan_matches_model(plan, model));
  apply_precision_and_checkpointing(plan.config.precision, plan.config.checkpointing, spec);
  return spec.validate();
}

std::vector<std::string> plan_differences(const Plan& from, const Plan& to) {
  std::vector<std::string> lines;
  if (from.config.per_rank_batch != to.config.per_rank_batch) {
    lines.push_back("per-rank batch " + std::to_string(from.config.per_rank_batch) + " -> " +
                    std::to_string(to.config.per_rank_batch));
  }
  if (from.config.checkpointing != to.config.checkpointing) {
    lines.push_back("checkpointing " + std::string(checkpointing_name(from.config.checkpointing)) +
                    " -> " + std::string(checkpointing_name(to.config.checkpointing)));
  }
  if (from.config.precision != to.config.precision) {
    lines.push_back("precision " + std::string(precision_name(from.config.precision)) + " -> " +
                    std::string(precision_name(to.config.precision)));
  }
  int moved = 0;
  for (std::size_t t = 0; t < std::min(from.tables.size(), to.tables.size()); ++t) {
    if (from.tables[t].type != to.tables[t].type) {
      lines.push_back("table " + to.tables[t].table + ": " +
                      std::string(sharding_type_name(from.tables[t].type)) + " -> " +
                      std::string(sharding_type_name(to.tables[t].type)));
    } else if (from.tables[t].shards != to.tables[t].shards) {
      ++moved;
    }
  }
  if (moved > 0) lines.push_back(std::to_string(moved) + " table(s) placed on other ranks");
  if (lines.empty()) lines.emplace_back("no change");
  return lines;
}

std::string plan_report(const Plan& plan, const PlannerModel& model) {
  const Prediction& p = plan.prediction;
  std::ostringstream out;
  out << "plan: " << plan.model << " on " << plan.num_gpus << " x " << plan.hardware << " ("
      << plan.num_nodes << " node" << (plan.num_nodes == 1 ? "" : "s") << "), global batch "
      << plan.config.global_batch << " (" << plan.config.per_rank_batch << " per rank), "
      << checkpointing_name(plan.config.checkpointing) << " checkpointing, "
      << precision_name(plan.config.precision) << "\n";
  out << "predicted (MODELLED): step " << ms(p.step_us) << " ms, "
      << fixed(p.samples_per_s / 1e6, 3) << " M samples/s, peak memory " << gb(p.peak_memory_bytes)
      << " GB of " << gb(p.capacity_bytes) << " GB (rank " << p.peak_memory_rank << ")\n";
  const TimeBreakdown& s = p.step;
  out << "step critical path (ms): tbe fwd " << ms(s.tbe_forward_us) << ", input a2a "
      << ms(s.input_dist_us) << ", emb a2a fwd " << ms(s.embedding_a2a_forward_us) << ", dense fwd "
      << ms(s.dense_forward_us) << ", dense bwd " << ms(s.dense_backward_us) << ", recompute "
      << ms(s.recompute_us) << ", emb a2a bwd " << ms(s.embedding_a2a_backward_us) << ", tbe bwd "
      << ms(s.tbe_backward_us) << ", all-reduce " << ms(s.allreduce_us) << " (of "
      << ms(p.allreduce_total_us) << "), optimizer " << ms(s.optimizer_us) << ", overhead "
      << ms(s.overhead_us) << "\n\n";
  out << "per rank (GB; ms)\n"
      << cell("rank", 5) << cell("emb", 8) << cell("emb opt", 8) << cell("dense", 8)
      << cell("act", 8) << cell("io", 7) << cell("comm", 7) << cell("ws+rsv", 8) << cell("total", 8)
      << cell("tbe fwd", 9) << cell("tbe bwd", 9) << "\n";
  for (std::size_t r = 0; r < p.memory_per_rank.size(); ++r) {
    const MemoryBreakdown& m = p.memory_per_rank[r];
    const TimeBreakdown& t = p.time_per_rank[r];
    out << cell(std::to_string(r), 5) << cell(gb(m.embedding_weights), 8)
        << cell(gb(m.embedding_optimizer), 8)
        << cell(gb(m.dense_parameters + m.dense_gradients + m.dense_optimizer), 8)
        << cell(gb(m.activations), 8) << cell(gb(m.io_buffers), 7) << cell(gb(m.comm_buffers), 7)
        << cell(gb(m.workspaces + m.runtime_reserve + m.allocator_reserve), 8) << cell(gb(m.total()), 8)
        << cell(ms(t.tbe_forward_us), 9) << cell(ms(t.tbe_backward_us), 9) << "\n";
  }
  out << "\ntables\n"
      << cell("table", 8) << cell("rows", 12) << cell("dim", 5) << cell("ids", 6) << "  "
      << "sharding       ranks\n";
  for (std::size_t t = 0; t < plan.tables.size() && t < model.tables.size(); ++t) {
    const PlannerTable& table = model.tables[t];
    std::string ranks;
    const auto& shards = plan.tables[t].shards;
    if (plan.tables[t].type == ShardingType::kRowWise ||
        plan.tables[t].type == ShardingType::kDataParallel) {
      ranks = std::to_string(shards.size());
      ranks.insert(0, "all ");
    } else {
      for (const Shard& shard : shards) {
        if (!ranks.empty()) ranks += ',';
        ranks += std::to_string(shard.rank);
      }
    }
    std::string type(sharding_type_name(plan.tables[t].type));
    type.resize(std::max<std::size_t>(type.size(), 14), ' ');
    out << cell(table.name, 8) << cell(std::to_string(table.rows), 12)
        << cell(std::to_string(table.dim), 5) << cell(fixed(table.ids_per_sample, 1), 6) << "  "
        << type << " " << ranks << "\n";
  }
  return out.str();
}

std::string comparison_report(const Comparison& comparison) {
  std::ostringstream out;
  const Plan& source = comparison.source;
  out << "direct port vs co-design (MODELLED): " << source.model << ", " << source.num_gpus
      << " GPUs, " << source.hardware << " -> " << comparison.codesigned.hardware << "\n\n"
      << cell("plan", 26) << cell("batch/rank", 11) << cell("ckpt", 6) << cell("precision", 16)
      << cell("step ms", 9) << cell("M samples/s", 12) << cell("peak GB", 9) << "\n";
  auto row = [&](const std::string& label, const Plan& plan) {
    out << cell(label, 26) << cell(std::to_string(plan.config.per_rank_batch), 11)
        << cell(std::string(checkpointing_name(plan.config.checkpointing)), 6)
        << cell(std::string(precision_name(plan.config.precision)), 16)
        << cell(ms(plan.prediction.step_us), 9) << cell(fixed(plan.prediction.samples_per_s / 1e6, 3), 12)
        << cell(gb(plan.prediction.peak_memory_bytes), 9) << "\n";
  };
  row(source.hardware + "-optimal on " + source.hardware, source);
  if (comparison.ported.is_ok()) {
    row("direct port on " + comparison.codesigned.hardware, comparison.ported.value());
  } else {
    out << cell("direct port on " + comparison.codesigned.hardware, 26) << "  cannot run: "
        << comparison.ported.status().message() << "\n";
  }
  row("co-designed on " + comparison.codesigned.hardware, comparison.codesigned);
  if (comparison.ported.is_ok()) {
    out << "\nco-designed / direct port: "
        << fixed(comparison.codesigned.prediction.samples_per_s /
                     comparison.ported->prediction.samples_per_s, 3)
        << "x; ";
  } else {
    out << "\n";
  }
  out << comparison.codesigned.hardware << " co-designed / " << source.hardware << ": "
      << fixed(comparison.codesigned.prediction.samples_per_s / source.prediction.samples_per_s, 3)
      << "x\nwhat changed (" << source.hardware << " plan -> co-designed):\n";
  for (const std::string& line : comparison.changes) out << "  " << line << "\n";
  const std::string& target = comparison.codesigned.hardware;
  out << "\nmodel headroom (each change alone, re-planned; M samples/s, peak GB per rank):\n"
      << cell("change", 18) << cell("on " + target, 24) << cell("on " + source.hardware, 24) << "\n";
  auto point_text = [](const std::vector<HeadroomPoint>& points, const std::string& change) {
    for (const HeadroomPoint& point : points) {
      if (point.change != change) continue;
      if (!point.fits) return std::string("does not fit");
      return fixed(point.samples_per_s / 1e6, 3) + " M/s, " + gb(point.peak_memory_bytes) + " GB";
    }
    return std::string("-");
  };
  for (const HeadroomPoint& point : comparison.headroom) {
    out << cell(point.change, 18) << cell(point_text(comparison.headroom, point.change), 24)
        << cell(point_text(comparison.source_headroom, point.change), 24) << "\n";
  }
  return out.str();
}

std::string pareto_svg(const SearchResult& result, std::string_view title) {
  constexpr double kWidth = 640, kHeight = 400, kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
  // The x axis ends at the capacity, or a little past the largest point when all sit far below.
  const double capacity = result.best.prediction.capacity_bytes;
  double max_memory = 0.0, max_rate = 0.0;
  for (const Plan& plan : result.pareto) {
    max_rate = std::max(max_rate, plan.prediction.samples_per_s);
    max_memory = std::max(max_memory, plan.prediction.peak_memory_bytes);
  }
  max_memory = std::min(capacity, std::max(max_memory * 1.25, 1.0));
  max_rate = std::max(max_rate, 1.0) * 1.1;
  auto x_of = [&](double bytes) { return kLeft + bytes / max_memory * (kWidth - kLeft - kRight); };
  auto y_of = [&](double rate) { return kHeight - kBottom - rate / max_rate * (kHeight - kTop - kBottom); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft << "\" y=\"20\" font-size=\"13\">" << title
      << " (MODELLED: samples/s vs peak memory per rank)</text>\n"
      << "<line x1=\"" << kLeft << "\" y1=\"" << kHeight - kBottom << "\" x2=\"" << kWidth - kRight
      << "\" y2=\"" << kHeight - kBottom << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft << "\" y2=\""
      << kHeight - kBottom << "\" stroke=\"black\"/>\n"
      << "<text x=\"" << (kWidth / 2) << "\" y=\"" << kHeight - 12
      << "\" text-anchor=\"middle\">peak memory per rank (GB)</text>\n"
      << "<text x=\"16\" y=\"" << kHeight / 2 << "\" transform=\"rotate(-90 16 " << kHeight / 2
      << ")\" text-anchor=\"middle\">M samples/s</text>\n";
  for (int tick = 0; tick <= 4; ++tick) {
    const double bytes = max_memory * tick / 4.0, rate = max_rate * tick / 4.0;
    svg << "<text x=\"" << x_of(bytes) << "\" y=\"" << kHeight - kBottom + 15
        << "\" text-anchor=\"middle\">" << fixed(bytes / 1e9, 0) << "</text>\n"
        << "<text x=\"" << kLeft - 6 << "\" y=\"" << y_of(rate) + 4 << "\" text-anchor=\"end\">"
        << fixed(rate / 1e6, 2) << "</text>\n";
  }
  svg << "<line x1=\"" << x_of(max_memory) << "\" y1=\"" << kTop << "\" x2=\"" << x_of(max_memory)
      << "\" y2=\"" << kHeight - kBottom << "\" stroke=\"#c00\" stroke-dasharray=\"4 3\"/>\n"
      << "<text x=\"" << x_of(max_memory) - 4 << "\" y=\"" << kTop + 12
      << "\" text-anchor=\"end\" fill=\"#c00\">"
      << (max_memory < capacity ? "HBM capacity " + fixed(capacity / 1e9, 0) + " GB (off scale)"
                                : std::string("HBM capacity"))
      << "</text>\n<polyline fill=\"none\" stroke=\"#36c\" points=\"";
  for (const Plan& plan : result.pareto) {
    svg << x_of(plan.prediction.peak_memory_bytes) << "," << y_of(plan.prediction.samples_per_s) << " ";
  }
  svg << "\"/>\n";
  for (std::size_t i = 0; i < result.pareto.size(); ++i) {
    const Plan& plan = result.pareto[i];
    const bool is_best = plan == result.best;
    const double x = x_of(plan.prediction.peak_memory_bytes), y = y_of(plan.prediction.samples_per_s);
    svg << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"" << (is_best ? 5 : 3)
        << "\" fill=\"" << (is_best ? "#c60" : "#36c") << "\"/>\n";
    if (is_best || i == 0) {  // label the ends only: inner points crowd
      svg << "<text x=\"" << x + 6 << "\" y=\"" << y + (is_best ? -6 : 14) << "\">"
          << (is_best ? "best: " : "") << "b=" << plan.config.per_rank_batch << " "
          << checkpointing_name(plan.config.checkpointing) << " "
          << precision_name(plan.config.precision) << "</text>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace parity::plan
