// SyntheticOptions from text (include/parity/data/dataset.hpp).
#include <algorithm>

#include "parity/core/parse.hpp"
#include "parity/data/dataset.hpp"

namespace parity::data {

Result<SyntheticOptions> synthetic_options_from_settings(const SyntheticSettings& settings) {
  SyntheticOptions options;
  PARITY_ASSIGN_OR_RETURN(options.train_samples, parse_int64(settings.samples, "--samples", 1));
  options.eval_samples = std::max<std::int64_t>(1, options.train_samples / 10);
  if (!settings.eval_samples.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.eval_samples,
                            parse_int64(settings.eval_samples, "--eval-samples", 0));
  }
  PARITY_ASSIGN_OR_RETURN(options.seed, parse_uint64(settings.seed, "--seed"));
  PARITY_ASSIGN_OR_RETURN(options.zipf_alpha, parse_double(settings.zipf, "--zipf"));
  PARITY_ASSIGN_OR_RETURN(options.planted_auc_target,
                          parse_double(settings.planted_auc, "--planted-auc"));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t threads,
                          parse_int64(settings.threads, "--threads", 0, 4096));
  options.num_threads = static_cast<int>(threads);
  return options;
}

}  // namespace parity::data
