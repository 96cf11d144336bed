// The run's files: metrics.jsonl (one JSON object per evaluation), training.svg (training loss
// and evaluation NE against the step) and summary.json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "train/train_state.hpp"

namespace parity::train::detail {

namespace {

using nlohmann::json;

json evaluation_json(const EvalRecord& e) {
  return {{"step", e.step}, {"eval_samples", e.samples}, {"ne", e.ne}, {"auc", e.auc},
          {"logloss", e.logloss}, {"train_loss", e.train_loss}};
}

Status write_text(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return io_error(temporary, ": cannot open for writing");
    out << text;
    if (!out.flush()) return io_error(temporary, ": write failed");
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) return io_error(path, ": cannot rename ", temporary);
  return Status::ok();
}

// One panel: a polyline of (x, y) scaled into the box, with the y range and x range labelled.
void panel(std::ostringstream& svg, const std::vector<std::pair<double, double>>& points,
           double top, double height, const char* label, const char* colour) {
  constexpr double kLeft = 70, kWidth = 700;
  svg << "<rect x='" << kLeft << "' y='" << top << "' width='" << kWidth << "' height='" << height
      << "' fill='none' stroke='#999'/>\n";
  svg << "<text x='" << kLeft << "' y='" << top - 6 << "' font-size='13'>" << label << "</text>\n";
  if (points.empty()) return;
  double x_min = points.front().first, x_max = points.back().first;
  double y_min = points.front().second, y_max = y_min;
  for (const auto& [x, y] : points) y_min = std::min(y_min, y), y_max = std::max(y_max, y);
  if (x_max <= x_min) x_max = x_min + 1;
  if (y_max <= y_min) y_max = y_min + 1e-9;
  svg << "<text x='" << kLeft - 4 << "' y='" << top + 10 << "' font-size='11' text-anchor='end'>"
      << y_max << "</text>\n<text x='" << kLeft - 4 << "' y='" << top + height
      << "' font-size='11' text-anchor='end'>" << y_min << "</text>\n";
  svg << "<text x='" << kLeft + kWidth << "' y='" << top + height + 14
      << "' font-size='11' text-anchor='end'>step " << x_max << "</text>\n";
  svg << "<polyline fill='none' stroke='" << colour << "' stroke-width='1.5' points='";
  for (const auto& [x, y] : points) {
    svg << kLeft + (x - x_min) / (x_max - x_min) * kWidth << ","
        << top + height - (y - y_min) / (y_max - y_min) * height << " ";
  }
  svg << "'/>\n";
}

}  // namespace

Status write_metrics_log(const std::string& path, const std::vector<EvalRecord>& evaluations) {
  std::string text;
  for (const auto& e : evaluations) text += evaluation_json(e).dump() + "\n";
  return write_text(path, text);
}

Status write_training_svg(const std::string& path, const std::string& title,
                          const std::vector<double>& step_losses,
                          const std::vector<EvalRecord>& evaluations) {
  // Training loss as bucket means (at most 400 points, so a long run stays a small file).
  std::vector<std::pair<double, double>> loss_points;
  const std::size_t buckets = std::min<std::size_t>(400, step_losses.size());
  for (std::size_t k = 0; k < buckets; ++k) {
    const std::size_t begin = k * step_losses.size() / buckets, end = (k + 1) * step_losses.size() / buckets;
    double sum = 0;
    for (std::size_t s = begin; s < end; ++s) sum += step_losses[s];
    loss_points.emplace_back(static_cast<double>(end), sum / static_cast<double>(end - begin));
  }
  std::vector<std::pair<double, double>> ne_points;
  for (const auto& e : evaluations) ne_points.emplace_back(static_cast<double>(e.step), e.ne);
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='800' height='460' font-family='sans-serif'>\n"
      << "<text x='70' y='20' font-size='15'>" << title << "</text>\n";
  panel(svg, loss_points, 50, 160, "training loss (BCE, bucket means)", "#1f77b4");
  panel(svg, ne_points, 260, 160, "evaluation NE", "#d62728");
  svg << "</svg>\n";
  return write_text(path, svg.str());
}

Status write_summary(const std::string& path, const TrainSummary& summary, const TrainOptions& options) {
  json evaluations = json::array();
  for (const auto& e : summary.evaluations) evaluations.push_back(evaluation_json(e));
  json root = {{"model", options.spec.name},
               {"device", std::string(device_kind_name(options.device))},
               {"batch_size", options.batch_size},
               {"seed", options.seed},
               {"threads", summary.num_threads},
               {"deterministic", options.determinism == Determinism::kBitwise},
               {"steps", summary.steps},
               {"samples", summary.samples},
               {"epochs_completed", summary.epochs_completed},
               {"resumed_from_step", summary.resumed_from_step},
               {"train_seconds", summary.train_seconds},
               {"samples_per_second", summary.samples_per_second},
               {"data_dir", summary.data_dir},
               {"evaluations", evaluations},
               {"step_losses", summary.step_losses}};
  if (summary.planted_auc >= 0) root["planted_auc"] = summary.planted_auc;
  return write_text(path, root.dump(1) + "\n");
}

}  // namespace parity::train::detail
