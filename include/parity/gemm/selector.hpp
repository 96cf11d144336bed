// Selector: ranks candidates by the model's predicted time and picks one, breaking near-ties as
// Origami does (origami.md §2.10): within kTieEpsilon of the fastest prediction, prefer higher
// tile arithmetic intensity, then the tile that follows the problem's aspect (larger tile_m when
// M > N, else larger tile_n), then larger tile_m, tile_n, tile_k, then fewer split-K partials,
// then enumeration order. No timing, no tuning files beyond the model's scalars, no environment.
#pragma once

#include <cstddef>
#include <span>
#include <unordered_map>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {

inline constexpr double kTieEpsilon = 0.01;

struct RankedCandidate {
  std::size_t index = 0;       // into the candidate list the selector ranked
  double predicted_us = 0.0;
};

struct Selection {
  Candidate choice;
  double predicted_us = 0.0;
  double predicted_tflops = 0.0;
  std::vector<RankedCandidate> top;  // best first; top[0] is the choice
};

class Selector {
 public:
  explicit Selector(GemmModel model) : model_(std::move(model)) {}
  const GemmModel& model() const { return model_; }

  // Ranks an ad-hoc candidate list (prepares its per-candidate constants on every call).
  Result<Selection> select(const GemmProblem& problem, std::span<const Candidate> candidates,
                           std::size_t top_k = 5);
  // Full ranking (every candidate, best first).
  Result<std::vector<RankedCandidate>> rank(const GemmProblem& problem,
                                            std::span<const Candidate> candidates);

  // The fast path: a candidate set owned by the selector, whose per-candidate constants are
  // computed once per problem class and reused for every later shape of that class.
  void set_candidates(std::vector<Candidate> candidates);
  const std::vector<Candidate>& candidates() const { return candidates_; }
  Result<Selection> select(const GemmProblem& problem, std::size_t top_k = 5);

 private:
  Result<Selection> select_prepared(const GemmProblem& problem, std::span<const Candidate> candidates,
                                    const std::vector<PreparedCandidate>& prepared,
                                    std::size_t top_k);
  std::vector<PreparedCandidate> prepare_all(const GemmProblem& problem,
                                             std::span<const Candidate> candidates) const;
  GemmModel model_;
  std::vector<Candidate> candidates_;
  std::unordered_map<std::uint64_t, std::vector<PreparedCandidate>> prepared_by_class_;
  std::vector<RankedCandidate> scratch_;
  std::vector<double> predicted_;
};

// True when `a` should rank before `b` among near-tied candidates (the tie-break chain above).
bool tie_break_before(const PreparedCandidate& a, const PreparedCandidate& b, const GemmProblem& problem);

}  // namespace parity::gemm
