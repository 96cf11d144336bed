#include "parity/gemm/evaluation.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace parity::gemm {
namespace {

double kendall_tau(const std::vector<std::array<double, 2>>& pairs) {
  long long concordant = 0, discordant = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    for (std::size_t j = i + 1; j < pairs.size(); ++j) {
      const double a = (pairs[i][0] - pairs[j][0]) * (pairs[i][1] - pairs[j][1]);
      if (a > 0) ++concordant;
      if (a < 0) ++discordant;
    }
  }
  const long long total = concordant + discordant;
  return total > 0 ? static_cast<double>(concordant - discordant) / static_cast<double>(total) : 0.0;
}

std::string fixed(double v, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << v;
  return out.str();
}

std::string escape_xml(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

RatioSummary summarize_ratios(const std::vector<double>& ratios, const std::vector<double>& oracle_ms,
                              const std::vector<double>& chosen_ms) {
  RatioSummary s;
  if (ratios.empty()) return s;
  double log_sum = 0.0, oracle_sum = 0.0, chosen_sum = 0.0;
  int within5 = 0, within10 = 0;
  s.worst = 1e300;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    log_sum += std::log(ratios[i]);
    s.worst = std::min(s.worst, ratios[i]);
    within5 += ratios[i] >= 0.95 ? 1 : 0;
    within10 += ratios[i] >= 0.90 ? 1 : 0;
    oracle_sum += oracle_ms[i];
    chosen_sum += chosen_ms[i];
  }
  const double n = static_cast<double>(ratios.size());
  s.shapes = static_cast<int>(ratios.size());
  s.geomean = std::exp(log_sum / n);
  s.within_5_percent = within5 / n;
  s.within_10_percent = within10 / n;
  s.time_weighted = oracle_sum / chosen_sum;
  return s;
}

// Long on purpose: one pass per shape that fills every column of the report; the columns share
// the per-shape lookups.
EvaluationReport evaluate_selector(Selector& selector, const std::vector<MeasuredShape>& shapes) {
  EvaluationReport report;
  report.device = selector.model().device().name;
  std::vector<double> sel_ratio, sel_oracle, sel_chosen, heu_ratio, heu_oracle, heu_chosen;
  double tau_sum = 0.0;
  int within_noise = 0, heuristic_within_noise = 0;
  for (std::size_t shape_index = 0; shape_index < shapes.size(); ++shape_index) {
    const MeasuredShape& shape = shapes[shape_index];
    if (shape.candidates.empty()) continue;
    std::vector<Candidate> candidates;
    candidates.reserve(shape.candidates.size());
    for (const auto& measured : shape.candidates) candidates.push_back(measured.candidate);
    auto ranked = selector.rank(shape.problem, candidates);
    if (!ranked) continue;
    ShapeEvaluation e;
    e.shape_index = shape_index;
    e.ranking = *ranked;
    e.name = shape.name;
    e.problem = shape.problem;
    e.candidates = static_cast<int>(candidates.size());
    // The oracle is the fastest candidate timed in full (screened-only times are estimates),
    // unless the file holds screened candidates only.
    bool has_timed = false;
    for (const auto& measured : shape.candidates) has_timed |= !measured.is_screened_only;
    std::size_t oracle = shape.candidates.size();
    for (std::size_t i = 0; i < shape.candidates.size(); ++i) {
      const bool eligible = !has_timed || !shape.candidates[i].is_screened_only;
      if (eligible && (oracle == shape.candidates.size() ||
                       shape.candidates[i].median_ms < shape.candidates[oracle].median_ms)) {
        oracle = i;
      }
      if (shape.candidates[i].heuristic_rank == 0) {
        e.heuristic_ms = shape.candidates[i].median_ms;
        e.heuristic_config = candidates[i].short_name();
      }
    }
    e.oracle_ms = shape.candidates[oracle].median_ms;
    e.oracle_config = candidates[oracle].short_name();
    const RankedCandidate pick = ranked->front();
    e.selected_ms = shape.candidates[pick.index].median_ms;
    e.selected_predicted_us = pick.predicted_us;
    e.selected_config = candidates[pick.index].short_name();
    e.selected_is_screened_only = shape.candidates[pick.index].is_screened_only;
    if (e.selected_ms < e.oracle_ms) {  // an estimated pick faster than every timed one
      e.oracle_ms = e.selected_ms;
      e.oracle_config = e.selected_config;
    }
    e.selected_ratio = e.oracle_ms / e.selected_ms;
    const double oracle_spread_ms = shape.candidates[oracle].spread_ms;
    e.is_within_noise = e.selected_ms <=
                        e.oracle_ms + oracle_spread_ms + shape.candidates[pick.index].spread_ms;
    within_noise += e.is_within_noise ? 1 : 0;
    for (const auto& r : *ranked) {
      if (std::isfinite(r.predicted_us)) {
        e.predicted_vs_measured_us.push_back({r.predicted_us, shape.candidates[r.index].median_ms * 1e3});
      }
    }
    e.kendall_tau = kendall_tau(e.predicted_vs_measured_us);
    tau_sum += e.kendall_tau;
    sel_ratio.push_back(e.selected_ratio);
    sel_oracle.push_back(e.oracle_ms);
    sel_chosen.push_back(e.selected_ms);
    if (e.heuristic_ms > 0) {
      e.heuristic_ratio = e.oracle_ms / e.heuristic_ms;
      for (const auto& measured : shape.candidates) {
        if (measured.heuristic_rank == 0 &&
            e.heuristic_ms <= e.oracle_ms + oracle_spread_ms + measured.spread_ms) {
          ++heuristic_within_noise;
          break;
        }
      }
      heu_ratio.push_back(e.heuristic_ratio);
      heu_oracle.push_back(e.oracle_ms);
      heu_chosen.push_back(e.heuristic_ms);
    }
    report.shapes.push_back(std::move(e));
  }
  report.selector = summarize_ratios(sel_ratio, sel_oracle, sel_chosen);
  report.heuristic = summarize_ratios(heu_ratio, heu_oracle, heu_chosen);
  report.mean_kendall_tau = report.shapes.empty() ? 0.0 : tau_sum / static_cast<double>(report.shapes.size());
  if (!report.shapes.empty()) {
    report.selector_within_noise = within_noise / static_cast<double>(report.shapes.size());
  }
  if (report.heuristic.shapes > 0) {
    report.heuristic_within_noise = heuristic_within_noise / static_cast<double>(report.heuristic.shapes);
  }
  return report;
}

std::string evaluation_to_json(const EvaluationReport& report) {
  using nlohmann::json;
  const auto summary = [](const RatioSummary& s) {
    return json{{"shapes", s.shapes},
                {"geomean_oracle_over_chosen", s.geomean},
                {"worst", s.worst},
                {"fraction_within_5_percent", s.within_5_percent},
                {"fraction_within_10_percent", s.within_10_percent},
                {"time_weighted", s.time_weighted}};
  };
  json root;
  root["schema"] = "parity.gemm.eval/1";
  root["device"] = report.device;
  root["split"] = report.split;
  root["calibration"] = report.calibration_source;
  root["selector"] = summary(report.selector);
  root["heuristic_top1"] = summary(report.heuristic);
  root["mean_kendall_tau"] = report.mean_kendall_tau;
  root["selector"]["fraction_within_noise"] = report.selector_within_noise;
  root["heuristic_top1"]["fraction_within_noise"] = report.heuristic_within_noise;
  root["mode"] = report.mode;
  root["modes"] = json::array();
  for (const ModeFigures& m : report.modes) {
    root["modes"].push_back({{"mode", m.mode},
                             {"all", summary(m.all)},
                             {"aligned", summary(m.aligned)},
                             {"misaligned", summary(m.misaligned)},
                             // The model's own latency is timed on this host (eval's text
                             // summary prints it); the file stays a function of its inputs.
                             {"vendor_query_us", m.vendor_query_us},
                             {"vendor_query_recorded", m.is_vendor_query_recorded}});
  }
  root["shapes"] = json::array();
  for (const auto& e : report.shapes) {
    root["shapes"].push_back({{"name", e.name},
                              {"m", e.problem.m},
                              {"n", e.problem.n},
                              {"k", e.problem.k},
                              {"batch", e.problem.batch},
                              {"candidates", e.candidates},
                              {"oracle_ms", e.oracle_ms},
                              {"oracle_config", e.oracle_config},
                              {"selected_ms", e.selected_ms},
                              {"selected_predicted_us", e.selected_predicted_us},
                              {"selected_config", e.selected_config},
                              {"selected_ratio", e.selected_ratio},
                              {"selected_is_screened_only", e.selected_is_screened_only},
                              {"heuristic_ms", e.heuristic_ms},
                              {"heuristic_config", e.heuristic_config},
                              {"heuristic_ratio", e.heuristic_ratio},
                              {"kendall_tau", e.kendall_tau},
                              {"within_noise", e.is_within_noise}});
  }
  return root.dump(1);
}

std::string evaluation_to_markdown(const EvaluationReport& report) {
  std::ostringstream out;
  out << "# GEMM selector evaluation: " << report.device << " (" << report.split << " shapes)\n\n"
      << "Ratios are t_oracle / t_chosen (1 = the fastest measured candidate). Calibration: "
      << report.calibration_source << ".\n\n"
      << "| chooser | shapes | geomean | worst | within 5% | within 10% | time-weighted |\n"
      << "| --- | --- | --- | --- | --- | --- | --- |\n";
  const auto row = [&](const char* name, const RatioSummary& s) {
    out << "| " << name << " | " << s.shapes << " | " << fixed(s.geomean, 3) << " | "
        << fixed(s.worst, 3) << " | " << fixed(100 * s.within_5_percent, 0) << "% | "
        << fixed(100 * s.within_10_percent, 0) << "% | " << fixed(s.time_weighted, 3) << " |\n";
  };
  row("model selector", report.selector);
  row("vendor heuristic top-1", report.heuristic);
  out << "\nWithin the noise floor (pick <= oracle + both recorded spreads): model "
      << fixed(100 * report.selector_within_noise, 0) << "%, heuristic top-1 "
      << fixed(100 * report.heuristic_within_noise, 0) << "%.\n"
      << "\nMean Kendall tau (predicted vs measured order per shape): "
      << fixed(report.mean_kendall_tau, 3) << "\n\n"
      << "A ratio marked * is estimated: the pick was only screened (its few-repetition median on "
         "the full-timing scale), never timed in full.\n\n"
      << "| shape | m | n | k | oracle ms | selected ms | ratio | heuristic ratio | selected | "
         "oracle |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& e : report.shapes) {
    out << "| " << e.name << " | " << e.problem.m << " | " << e.problem.n << " | " << e.problem.k
        << " | " << fixed(e.oracle_ms, 4) << " | " << fixed(e.selected_ms, 4) << " | "
        << fixed(e.selected_ratio, 3) << (e.selected_is_screened_only ? "*" : "") << " | "
        << (e.heuristic_ms > 0 ? fixed(e.heuristic_ratio, 3) : std::string("-")) << " | "
        << e.selected_config << " | " << e.oracle_config << " |\n";
  }
  return out.str();
}

std::string evaluation_to_svg(const EvaluationReport& report) {
  const double width = 960, panel_h = 300, margin = 50;
  const double height = 2 * panel_h + 3 * margin;
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // Panel 1: efficiency per shape.
  const double x0 = margin, y0 = margin, w = width - 2 * margin, h = panel_h;
  const double lo = 0.6;
  const auto y_of = [&](double r) { return y0 + h - (std::clamp(r, lo, 1.0) - lo) / (1.0 - lo) * h; };
  svg << "<text x=\"" << x0 << "\" y=\"" << y0 - 10 << "\">" << escape_xml(report.device)
      << ": t_oracle / t_chosen per shape (blue = model selector, orange = heuristic top-1)</text>\n"
      << "<rect x=\"" << x0 << "\" y=\"" << y0 << "\" width=\"" << w << "\" height=\"" << h
      << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (const double r : {0.6, 0.7, 0.8, 0.9, 0.95, 1.0}) {
    svg << "<line x1=\"" << x0 << "\" x2=\"" << x0 + w << "\" y1=\"" << y_of(r) << "\" y2=\""
        << y_of(r) << "\" stroke=\"#ddd\"/><text x=\"" << x0 - 35 << "\" y=\"" << y_of(r) + 4
        << "\">" << fixed(r, 2) << "</text>\n";
  }
  const std::size_t count = std::max<std::size_t>(report.shapes.size(), 1);
  const double step = w / static_cast<double>(count);
  for (std::size_t i = 0; i < report.shapes.size(); ++i) {
    const auto& e = report.shapes[i];
    const double x = x0 + step * (static_cast<double>(i) + 0.5);
    svg << "<circle cx=\"" << x << "\" cy=\"" << y_of(e.selected_ratio)
        << "\" r=\"3\" fill=\"#1f77b4\"><title>" << escape_xml(e.name) << " selector "
        << fixed(e.selected_ratio, 3) << "</title></circle>\n";
    if (e.heuristic_ms > 0) {
      svg << "<circle cx=\"" << x << "\" cy=\"" << y_of(e.heuristic_ratio)
          << "\" r=\"3\" fill=\"#ff7f0e\"><title>" << escape_xml(e.name) << " heuristic "
          << fixed(e.heuristic_ratio, 3) << "</title></circle>\n";
    }
  }
  // Panel 2: predicted vs measured, log-log.
  const double py0 = y0 + h + margin + 10;
  double vmin = 1e300, vmax = 0;
  for (const auto& e : report.shapes) {
    for (const auto& p : e.predicted_vs_measured_us) {
      vmin = std::min({vmin, p[0], p[1]});
      vmax = std::max({vmax, p[0], p[1]});
    }
  }
  if (vmax <= 0) vmin = 1, vmax = 10;
  const double lmin = std::log10(vmin) - 0.05, lmax = std::log10(vmax) + 0.05;
  const double side = h;
  const auto px = [&](double v) { return x0 + (std::log10(v) - lmin) / (lmax - lmin) * side; };
  const auto py = [&](double v) { return py0 + side - (std::log10(v) - lmin) / (lmax - lmin) * side; };
  svg << "<text x=\"" << x0 << "\" y=\"" << py0 - 10
      << "\">predicted (x) vs measured (y) time of every measured candidate, us, log-log</text>\n"
      << "<rect x=\"" << x0 << "\" y=\"" << py0 << "\" width=\"" << side << "\" height=\"" << side
      << "\" fill=\"none\" stroke=\"#888\"/>\n"
      << "<line x1=\"" << px(vmin) << "\" y1=\"" << py(vmin) << "\" x2=\"" << px(vmax) << "\" y2=\""
      << py(vmax) << "\" stroke=\"#aaa\" stroke-dasharray=\"4\"/>\n"
      << "<text x=\"" << x0 + side + 10 << "\" y=\"" << py0 + 12 << "\">range " << fixed(vmin, 1)
      << " .. " << fixed(vmax, 1) << " us</text>\n";
  for (const auto& e : report.shapes) {
    for (const auto& p : e.predicted_vs_measured_us) {
      svg << "<circle cx=\"" << fixed(px(p[0]), 1) << "\" cy=\"" << fixed(py(p[1]), 1)
          << "\" r=\"1.5\" fill=\"#1f77b4\" fill-opacity=\"0.4\"/>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

ModeFigures mode_figures(const EvaluationReport& report, std::string mode) {
  ModeFigures figures;
  figures.mode = std::move(mode);
  std::array<std::vector<double>, 3> ratio, oracle, chosen;  // all, aligned, misaligned
  for (const ShapeEvaluation& e : report.shapes) {
    const std::size_t group = e.problem.alignment_class_bytes() < 16 ? 2 : 1;
    for (const std::size_t g : {std::size_t{0}, group}) {
      ratio[g].push_back(e.selected_ratio);
      oracle[g].push_back(e.oracle_ms);
      chosen[g].push_back(e.selected_ms);
    }
  }
  figures.all = summarize_ratios(ratio[0], oracle[0], chosen[0]);
  figures.aligned = summarize_ratios(ratio[1], oracle[1], chosen[1]);
  figures.misaligned = summarize_ratios(ratio[2], oracle[2], chosen[2]);
  return figures;
}

}  // namespace parity::gemm
