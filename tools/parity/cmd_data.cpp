// `parity data generate` (synthetic dataset for a model) and `parity data convert-criteo` (Criteo
// TSV to the binary layout): parse, call parity::data, print what was written. docs/data.md.
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/core/parse.hpp"
#include "parity/data/criteo.hpp"
#include "parity/model/spec.hpp"

namespace parity::cli {
namespace {

struct DataOptions {
  std::string model = "tiny";
  model::SpecOverrides overrides;  // the table cap
  data::SyntheticSettings synthetic;
  std::string tsv, eval_tsv, max_bad_lines = "0";
  std::string out;
};

// The dataset schema of a preset or JSON spec: feature f reads table f of the dataset.
Result<data::DatasetSchema> schema_of(const DataOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const model::ModelSpec spec, model::load_spec(options.model, options.overrides));
  return model::dataset_schema(spec);
}

Status run_generate(const DataOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const data::DatasetSchema schema, schema_of(options));
  PARITY_ASSIGN_OR_RETURN(const data::SyntheticOptions synthetic,
                          data::synthetic_options_from_settings(options.synthetic));
  return print_report(data::generate_synthetic_report(schema, options.model, synthetic, options.out));
}

Status run_convert(const DataOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const data::DatasetSchema schema, schema_of(options));
  data::CriteoConvertOptions convert;
  convert.eval_tsv = options.eval_tsv;
  PARITY_ASSIGN_OR_RETURN(convert.max_bad_lines,
                          parse_int64(options.max_bad_lines, "--max-bad-lines", 0));
  return print_report(data::convert_criteo_report(options.tsv, schema, options.out, convert));
}

}  // namespace

void add_data_commands(CLI::App& app, Outcome& outcome) {
  CLI::App& data = *app.add_subcommand("data", "Datasets: synthetic generation, Criteo TSV conversion")->require_subcommand(1);
  auto options = std::make_shared<DataOptions>();
  data::SyntheticSettings& s = options->synthetic;
  auto* generate = data.add_subcommand(
      "generate", "Write a synthetic dataset (Zipf ids, planted logistic labels)");
  generate
      ->add_option("--model", options->model,
                   "Preset (tiny, dlrm-kaggle, dlrm-v2) or JSON spec path");
  generate->add_option("--samples", s.samples, "Training samples")->required();
  generate->add_option("--eval-samples", s.eval_samples,
                       "Evaluation samples (default: samples / 10)");
  generate->add_option("--out", options->out, "Output directory")->required();
  generate->add_option("--seed", s.seed, "Seed");
  generate->add_option("--zipf", s.zipf, "Zipf exponent of the ids (>= 0; 0 uniform)");
  generate->add_option("--planted-auc", s.planted_auc, "Planted model's AUC (0.5, 0.80]");
  generate->add_option("--table-cap", options->overrides.table_cap, "Cap every table at this many rows");
  generate->add_option("--threads", s.threads,
                       "Threads (0: all cores; output does not depend on it)");
  generate->callback([options, &outcome] { outcome.status = run_generate(*options); });

  auto converting = std::make_shared<DataOptions>();
  converting->model = "dlrm-kaggle";
  auto* convert = data.add_subcommand("convert-criteo",
                                      "Convert a Criteo TSV (plain or .gz) to the binary layout");
  convert->add_option("--tsv", converting->tsv, "Training split TSV")->required();
  convert->add_option("--eval-tsv", converting->eval_tsv, "Evaluation split TSV (optional)");
  convert->add_option("--out", converting->out, "Output directory")->required();
  convert->add_option("--model", converting->model, "Preset or spec giving the 26 table sizes");
  convert->add_option("--table-cap", converting->overrides.table_cap, "Cap every table at this many rows");
  convert
      ->add_option("--max-bad-lines", converting->max_bad_lines, "Bad lines skipped before failing");
  convert->callback([converting, &outcome] { outcome.status = run_convert(*converting); });
}

}  // namespace parity::cli
