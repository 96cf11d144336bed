#include "parity/gemm/selector.hpp"

#include <algorithm>
#include <cmath>

#include "model_hopper.hpp"
#include "model_math.hpp"
#include "model_origami.hpp"

namespace parity::gemm {

std::string_view selection_mode_name(SelectionMode mode) {
  return mode == SelectionMode::kHybrid ? "hybrid" : "analytical";
}

Result<SelectionMode> parse_selection_mode(std::string_view text) {
  if (text == "analytical") return SelectionMode::kAnalytical;
  if (text == "hybrid") return SelectionMode::kHybrid;
  return invalid_argument("gemm select: mode '", text, "' is not one of analytical, hybrid");
}

std::string_view top_k_list_name(TopKList list) {
  return list == TopKList::kConfigs ? "configs" : "tiles";
}

Result<TopKList> parse_top_k_list(std::string_view text) {
  if (text == "tiles") return TopKList::kDistinctTiles;
  if (text == "configs") return TopKList::kConfigs;
  return invalid_argument("gemm: top-k list '", text, "' is not one of tiles, configs");
}

bool tie_break_before(const PreparedCandidate& a, const PreparedCandidate& b,
                      const GemmProblem& problem) {
  if (a.arithmetic_intensity != b.arithmetic_intensity) {
    return a.arithmetic_intensity > b.arithmetic_intensity;
  }
  if (problem.m > problem.n) {
    if (a.tile_m != b.tile_m) return a.tile_m > b.tile_m;
  } else if (a.tile_n != b.tile_n) {
    return a.tile_n > b.tile_n;
  }
  if (a.tile_m != b.tile_m) return a.tile_m > b.tile_m;
  if (a.tile_n != b.tile_n) return a.tile_n > b.tile_n;
  if (a.tile_k != b.tile_k) return a.tile_k > b.tile_k;
  // One tile, other clusters: the one that multicasts the larger operand moves fewer L2 -> SM
  // bytes (176x128: c1x2 reads 88 + 128 rows per CTA, c2x1 176 + 64).
  if (a.l2_bytes_per_iter != b.l2_bytes_per_iter) return a.l2_bytes_per_iter < b.l2_bytes_per_iter;
  return a.split_k < b.split_k;
}

namespace {

// Origami's near-tie order (origami.cpp rank_configs): higher tile arithmetic intensity, then the
// lower prediction, then enumeration order. No tile-size step: in the published baselines tiles
// of equal intensity keep prediction and list order (gfx942 80x80x322768: 48x96x128 before the
// slower 96x48x128; 7056x896x1248: 128x224x64 before 224x128x64 at an exact tie).
bool origami_tie_before(const PreparedCandidate& a, const PreparedCandidate& b, double a_us,
                        double b_us) {
  if (a.arithmetic_intensity != b.arithmetic_intensity) {
    return a.arithmetic_intensity > b.arithmetic_intensity;
  }
  return a_us < b_us;
}

// The order within the near-tie group [begin, end): the model's tie-break chain (Origami's for
// the AMD model), then enumeration order.
template <typename It>
auto tie_order(ModelKind kind, const std::vector<PreparedCandidate>& prepared,
               const GemmProblem& problem, It, It) {
  return [&prepared, &problem, kind](const RankedCandidate& a, const RankedCandidate& b) {
    const PreparedCandidate& pa = prepared[a.index];
    const PreparedCandidate& pb = prepared[b.index];
    if (kind == ModelKind::kOrigami) {
      if (origami_tie_before(pa, pb, a.predicted_us, b.predicted_us)) return true;
      if (origami_tie_before(pb, pa, b.predicted_us, a.predicted_us)) return false;
    } else {
      if (tie_break_before(pa, pb, problem)) return true;
      if (tie_break_before(pb, pa, problem)) return false;
    }
    return a.index < b.index;
  };
}

std::size_t vendor_top1_index(std::span<const Candidate> candidates) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].heuristic_rank == 0) return i;
  }
  return Selector::kNoVendorPick;
}

constexpr std::uint32_t kNoSlot = 0xffffffffu;

// The best of each macro tile among `ranked`, in the order `before` (select's order of its top
// list): one pass keeps each tile's first candidate; candidates predicted infeasible (+infinity)
// hold no place. `tile_slot` (per tile id) is all kNoSlot on entry and on return.
template <typename Before>
void best_of_each_tile(const std::vector<RankedCandidate>& ranked,
                       const std::vector<std::uint32_t>& tile_of, const Before& before,
                       std::vector<RankedCandidate>& tile_best, std::vector<std::uint32_t>& tile_slot) {
  tile_best.clear();
  for (const RankedCandidate& r : ranked) {
    if (!std::isfinite(r.predicted_us)) continue;
    std::uint32_t& slot = tile_slot[tile_of[r.index]];
    if (slot == kNoSlot) {
      slot = static_cast<std::uint32_t>(tile_best.size());
      tile_best.push_back(r);
    } else if (before(r, tile_best[slot])) {
      tile_best[slot] = r;
    }
  }
  for (const RankedCandidate& r : tile_best) tile_slot[tile_of[r.index]] = kNoSlot;
}

}  // namespace

std::size_t Selector::vendor_pick(const GemmProblem& problem,
                                  const std::vector<PreparedCandidate>& prepared,
                                  std::size_t vendor, double best_us) const {
  if (options_.mode != SelectionMode::kHybrid || vendor >= prepared.size()) return kNoVendorPick;
  const PreparedCandidate& c = prepared[vendor];
  const double band = c.uses_tma ? options_.vendor_band : options_.vendor_band_legacy;
  // Exact prediction: select's pruning may have left this candidate at its lower bound.
  return model_.predict_us(problem, c) <= best_us * (1.0 + band) ? vendor : kNoVendorPick;
}

std::vector<PreparedCandidate> Selector::prepare_all(const GemmProblem& problem,
                                                     std::span<const Candidate> candidates) const {
  const ProblemClass key = problem_class(problem);
  std::vector<PreparedCandidate> prepared;
  prepared.reserve(candidates.size());
  for (const Candidate& c : candidates) prepared.push_back(model_.prepare(key, c));
  return prepared;
}

void Selector::set_candidates(std::vector<Candidate> candidates) {
  candidates_ = std::move(candidates);
  vendor_index_ = vendor_top1_index(candidates_);
  prepared_by_class_.clear();
}

Selector::PreparedClass Selector::group_equal(std::vector<PreparedCandidate> prepared) {
  PreparedClass out;
  out.prepared = std::move(prepared);
  std::vector<std::uint32_t> group(out.prepared.size());
  for (std::size_t i = 0; i < out.prepared.size(); ++i) {
    std::size_t g = 0;
    while (g < out.distinct.size() && !(out.distinct[g] == out.prepared[i])) ++g;
    if (g == out.distinct.size()) out.distinct.push_back(out.prepared[i]);
    group[i] = static_cast<std::uint32_t>(g);
  }
  if (out.distinct.size() < out.prepared.size()) {
    out.distinct_of = std::move(group);
  } else {
    out.distinct.clear();
  }
  return out;
}

void Selector::index_tiles(PreparedClass& prepared_class) {
  std::unordered_map<std::uint64_t, std::uint32_t> id_of;
  std::vector<std::uint32_t> configs_of;  // per tile id
  prepared_class.tile_of.resize(prepared_class.prepared.size());
  for (std::size_t i = 0; i < prepared_class.prepared.size(); ++i) {
    const auto next = static_cast<std::uint32_t>(id_of.size());
    const auto [at, is_new] = id_of.try_emplace(macro_tile_key(prepared_class.prepared[i]), next);
    if (is_new) configs_of.push_back(0);
    prepared_class.tile_of[i] = at->second;
    ++configs_of[at->second];
  }
  prepared_class.tile_count = static_cast<std::uint32_t>(id_of.size());
  prepared_class.distinct_tile_of.assign(prepared_class.distinct.size(), 0);
  for (std::size_t i = 0; i < prepared_class.distinct_of.size(); ++i) {
    prepared_class.distinct_tile_of[prepared_class.distinct_of[i]] = prepared_class.tile_of[i];
  }
  prepared_class.max_tile_configs =
      configs_of.empty() ? 1 : *std::max_element(configs_of.begin(), configs_of.end());
}

Result<Selection> Selector::select(const GemmProblem& problem, std::size_t top_k) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  const std::uint64_t key = problem_class_hash(problem_class(problem));
  auto it = prepared_by_class_.find(key);
  if (it == prepared_by_class_.end()) {
    // The quadratic search for equal candidates runs once per class; the AMD lists (thousands of
    // candidates, none equal: WGM is a field) skip it.
    auto prepared = prepare_all(problem, candidates_);
    PreparedClass grouped;
    if (model_.device().kind == ModelKind::kHopper) {
      grouped = group_equal(std::move(prepared));
      if (grouped.distinct_of.empty() && dynamic_cast<const HopperModel*>(&model_.impl()) != nullptr) {
        grouped.hopper_groups = std::make_shared<const HopperGroupIndex>(
            HopperModel::index_groups(grouped.prepared.data(), grouped.prepared.size()));
      }
    } else {
      grouped.prepared = std::move(prepared);
      if (dynamic_cast<const OrigamiModel*>(&model_.impl()) != nullptr) {
        grouped.runs = std::make_shared<const OrigamiRunIndex>(
            OrigamiModel::index_runs(grouped.prepared.data(), grouped.prepared.size()));
      }
    }
    if (options_.top_k_list == TopKList::kDistinctTiles) index_tiles(grouped);
    it = prepared_by_class_.emplace(key, std::move(grouped)).first;
  }
  return select_prepared(problem, candidates_, it->second, vendor_index_, top_k);
}

Result<Selection> Selector::select(const GemmProblem& problem,
                                   std::span<const Candidate> candidates, std::size_t top_k) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PreparedClass prepared_class{prepare_all(problem, candidates), {}, {}, nullptr, {}, {}, 0, 1, nullptr};
  if (options_.top_k_list == TopKList::kDistinctTiles && top_k > 1) index_tiles(prepared_class);
  return select_prepared(problem, candidates, prepared_class, vendor_top1_index(candidates), top_k);
}

Result<std::vector<RankedCandidate>> Selector::rank(const GemmProblem& problem,
                                                    std::span<const Candidate> candidates) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_CHECK_ARG(!candidates.empty(), "gemm select: no candidates to rank for ",
                   problem.describe());
  const auto prepared = prepare_all(problem, candidates);
  std::vector<double> predicted(candidates.size());
  model_.predict_all_us(problem, prepared.data(), prepared.size(), predicted.data());
  std::vector<RankedCandidate> ranked(candidates.size());
  for (std::size_t i = 0; i < candidates.size(); ++i) ranked[i] = {i, predicted[i]};
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.predicted_us < b.predicted_us;
  });
  const double best_us = ranked.front().predicted_us;
  const double limit = best_us * (1.0 + kTieEpsilon);
  const auto tied_end = std::find_if(ranked.begin(), ranked.end(), [&](const auto& r) {
    return r.predicted_us > limit;
  });
  std::sort(ranked.begin(), tied_end,
            tie_order(model_.device().kind, prepared, problem, ranked.begin(), tied_end));
  const std::size_t vendor =
      vendor_pick(problem, prepared, vendor_top1_index(candidates), best_us);
  if (vendor != kNoVendorPick) {
    const auto at = std::find_if(ranked.begin(), ranked.end(),
                                 [&](const auto& r) { return r.index == vendor; });
    std::rotate(ranked.begin(), at, at + 1);
  }
  return ranked;
}

Selector::NearTop Selector::predict_near_top(const GemmProblem& problem, std::size_t count,
                                  const PreparedClass& prepared_class, std::size_t keep_exact,
                                  bool per_tile) {
  // Predict what can matter, then order only the near-tie group and the top-k: the candidates at
  // or below the model's cutoff (everything else is above every one of them).
  const std::vector<PreparedCandidate>& prepared = prepared_class.prepared;
  predicted_.resize(count);
  double cutoff_us = std::numeric_limits<double>::infinity();
  double best_us = std::numeric_limits<double>::infinity();
  scratch_.clear();
  // value_of(i): candidate i's prediction (read through the distinct list where equal candidates
  // share one, so no full-length copy is written first).
  const auto keep_near_top = [&](std::size_t begin, std::size_t end, const auto& value_of) {
    const bool keep_all = !std::isfinite(cutoff_us);
    for (std::size_t i = begin; i < end; ++i) {
      const double value = value_of(i);
      if (keep_all || value <= cutoff_us) scratch_.push_back({i, value});
      best_us = std::min(best_us, value);
    }
  };
  const auto full_list_value = [&](std::size_t i) { return predicted_[i]; };
  if (prepared_class.runs != nullptr) {
    // The AMD lists (thousands of candidates): the model reports the runs it predicted exactly;
    // every other candidate predicts above the cutoff (and is left unwritten), so only those
    // runs are scanned.
    const auto& origami = static_cast<const OrigamiModel&>(model_.impl());
    thread_local std::vector<OrigamiModel::CandidateRange> exact_ranges;  // reused across calls
    origami.predict_top_runs_us(problem, prepared.data(), *prepared_class.runs, keep_exact,
                                per_tile, kTieEpsilon, predicted_.data(), &cutoff_us, exact_ranges);
    for (const auto& range : exact_ranges) keep_near_top(range.begin, range.end, full_list_value);
    return {best_us, cutoff_us};
  }
  const auto* hopper = dynamic_cast<const HopperModel*>(&model_.impl());
  if (hopper != nullptr && prepared_class.distinct_of.empty() &&
      (!per_tile || !prepared_class.tile_of.empty())) {
    // The model lists the candidates it predicted exactly: every other one is above the cutoff
    // (or, per tile, never its tile's choice), so only those are scanned. Per tile
    // (TopKList::kDistinctTiles) the cutoff counts distinct macro tiles.
    thread_local std::vector<std::uint32_t> exact_indices;  // reused across calls
    hopper->predict_top_tiles_us(problem, prepared.data(),
                                 per_tile ? prepared_class.tile_of.data() : nullptr,
                                 prepared.size(), keep_exact, kTieEpsilon, predicted_.data(),
                                 &cutoff_us, &exact_indices, prepared_class.hopper_groups.get());
    for (const std::uint32_t i : exact_indices) keep_near_top(i, i + 1, full_list_value);
    return {best_us, cutoff_us};
  } else if (prepared_class.distinct_of.empty()) {
    model_.predict_top_us(problem, prepared.data(), prepared.size(), keep_exact, kTieEpsilon,
                          predicted_.data(), &cutoff_us);
    keep_near_top(0, count, full_list_value);
  } else {
    // Equal candidates share one prediction. The distinct list's cutoff is at least the full
    // list's (its k-th best is no better), so every candidate at or below it is still exact.
    // Per tile, equal candidates share a tile, so the distinct list's k best tiles are the full
    // list's.
    const std::vector<PreparedCandidate>& distinct = prepared_class.distinct;
    distinct_predicted_.resize(distinct.size());
    const std::size_t keep = std::min(keep_exact, distinct.size());
    if (hopper != nullptr && per_tile && !prepared_class.distinct_tile_of.empty()) {
      hopper->predict_top_tiles_us(problem, distinct.data(), prepared_class.distinct_tile_of.data(),
                                   distinct.size(), keep, kTieEpsilon, distinct_predicted_.data(),
                                   &cutoff_us, nullptr, nullptr);
    } else {
      model_.predict_top_us(problem, distinct.data(), distinct.size(), keep, kTieEpsilon,
                            distinct_predicted_.data(), &cutoff_us);
    }
    const std::vector<std::uint32_t>& distinct_of = prepared_class.distinct_of;
    keep_near_top(0, count, [&](std::size_t i) { return distinct_predicted_[distinct_of[i]]; });
  }
  return {best_us, cutoff_us};
}

Result<Selection> Selector::select_prepared(const GemmProblem& problem,
                                            std::span<const Candidate> candidates,
                                            const PreparedClass& prepared_class,
                                            std::size_t vendor_index, std::size_t top_k) {
  PARITY_CHECK_ARG(!candidates.empty(), "gemm select: no candidates to rank for ",
                   problem.describe());
  const std::vector<PreparedCandidate>& prepared = prepared_class.prepared;
  const std::size_t count = candidates.size();
  const std::size_t top = std::max<std::size_t>(top_k, 1);
  const bool per_tile = options_.top_k_list == TopKList::kDistinctTiles && top > 1;
  std::size_t keep_exact = std::min(top, count);
  NearTop near_top = predict_near_top(problem, count, prepared_class, keep_exact, per_tile);
  double best_us = near_top.best_us;
  PARITY_CHECK_ARG(std::isfinite(best_us), "gemm select: no feasible candidate for ",
                   problem.describe());
  if (!per_tile) return order_configs(problem, candidates, prepared, vendor_index, top, best_us);
  // Every candidate at or below the cutoff is exact, so once they span `top` tiles the best of
  // each of the `top` best tiles is among them. The AMD run search bounds by distinct tiles; the
  // other searches bound by configurations, so their cutoff is widened until it does.
  while (true) {
    const double limit = best_us * (1.0 + kTieEpsilon);
    const auto within_ties = tie_order(model_.device().kind, prepared, problem, scratch_.begin(),
                                       scratch_.end());
    const auto before = [&](const RankedCandidate& a, const RankedCandidate& b) {
      const bool a_tied = a.predicted_us <= limit, b_tied = b.predicted_us <= limit;
      if (a_tied != b_tied) return a_tied;
      if (a_tied) return within_ties(a, b);
      return a.predicted_us < b.predicted_us ||
             (a.predicted_us == b.predicted_us && a.index < b.index);
    };
    if (tile_slot_.size() < prepared_class.tile_count) tile_slot_.resize(prepared_class.tile_count, kNoSlot);
    best_of_each_tile(scratch_, prepared_class.tile_of, before, tile_best_, tile_slot_);
    // An infinite cutoff left every candidate exact in scratch_: a wider search adds no tile.
    if (tile_best_.size() >= top || keep_exact >= count || prepared_class.runs != nullptr ||
        !std::isfinite(near_top.cutoff_us)) {
      const std::size_t places = std::min(top, tile_best_.size());
      std::partial_sort(tile_best_.begin(), tile_best_.begin() + static_cast<std::ptrdiff_t>(places),
                        tile_best_.end(), before);
      tile_best_.resize(places);
      break;
    }
    // The k x (most configurations of one tile) best configurations span at least k tiles: one
    // more search at most.
    keep_exact = std::max(keep_exact + 1, std::min(count, top * prepared_class.max_tile_configs));
    keep_exact = std::min(keep_exact, count);
    near_top = predict_near_top(problem, count, prepared_class, keep_exact, per_tile);
    best_us = near_top.best_us;
  }
  Selection selection;
  const std::size_t vendor = vendor_pick(problem, prepared, vendor_index, best_us);
  if (vendor != kNoVendorPick) {
    // The vendor's pick first, then the other tiles.
    selection.is_vendor_pick = true;
    selection.top.push_back({vendor, model_.predict_us(problem, prepared[vendor])});
    const std::uint64_t vendor_tile = macro_tile_key(prepared[vendor]);
    for (const RankedCandidate& r : tile_best_) {
      if (selection.top.size() < top && macro_tile_key(prepared[r.index]) != vendor_tile) {
        selection.top.push_back(r);
      }
    }
  } else {
    selection.top = tile_best_;
  }
  return finish(problem, candidates, std::move(selection));
}

Result<Selection> Selector::order_configs(const GemmProblem& problem,
                                          std::span<const Candidate> candidates,
                                          const std::vector<PreparedCandidate>& prepared,
                                          std::size_t vendor_index, std::size_t top_k,
                                          double best_us) {
  const double limit = best_us * (1.0 + kTieEpsilon);
  const auto tied_end = std::partition(scratch_.begin(), scratch_.end(),
                                       [&](const auto& r) { return r.predicted_us <= limit; });
  // Within the tie group: the tie-break chain, then enumeration order. Only the first `keep`
  // places are ordered (tiny problems tie almost everything within 1%).
  const auto within_ties = tie_order(model_.device().kind, prepared, problem, scratch_.begin(), tied_end);
  const std::size_t tied = static_cast<std::size_t>(tied_end - scratch_.begin());
  const std::size_t keep = std::min(std::max<std::size_t>(top_k, 1), scratch_.size());
  if (keep <= tied) {
    std::partial_sort(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(keep),
                      tied_end, within_ties);
  } else {
    std::sort(scratch_.begin(), tied_end, within_ties);
    std::partial_sort(tied_end, scratch_.begin() + static_cast<std::ptrdiff_t>(keep), scratch_.end(),
                      [](const auto& a, const auto& b) {
                        return a.predicted_us < b.predicted_us ||
                               (a.predicted_us == b.predicted_us && a.index < b.index);
                      });
  }
  Selection selection;
  const std::size_t vendor = vendor_pick(problem, prepared, vendor_index, best_us);
  if (vendor != kNoVendorPick) {
    selection.is_vendor_pick = true;
    selection.top.push_back({vendor, model_.predict_us(problem, prepared[vendor])});
    for (std::size_t i = 0; i < keep && selection.top.size() < keep; ++i) {
      if (scratch_[i].index != vendor) selection.top.push_back(scratch_[i]);
    }
  } else {
    selection.top.assign(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(keep));
  }
  return finish(problem, candidates, std::move(selection));
}

Selection Selector::finish(const GemmProblem& problem, std::span<const Candidate> candidates,
                           Selection selection) {
  selection.choice = candidates[selection.top.front().index];
  selection.predicted_us = selection.top.front().predicted_us;
  selection.predicted_tflops = problem.flop_count() / (selection.predicted_us * 1e-6) / 1e12;
  return selection;
}

}  // namespace parity::gemm
