#include "parity/hw/catalogue.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hw/json_checks.hpp"

#ifndef PARITY_SOURCE_DIR
#error "PARITY_SOURCE_DIR must be defined by the build (CMake sets it on the parity target)"
#endif

namespace parity::hw {

using detail::DateForm;
using detail::Emptiness;
using detail::join_key;
using detail::key_context;
using nlohmann::json;

// An installed tree keeps its data at <prefix>/share/parity beside <prefix>/bin (or lib) holding
// the executable; a build tree's executable has none there and reads the source tree's data/.
std::filesystem::path resolve_data_dir(const std::optional<std::filesystem::path>& explicit_dir) {
  if (explicit_dir.has_value()) return *explicit_dir;
  if (const char* env = std::getenv("PARITY_DATA_DIR"); env != nullptr && *env != '\0') {
    return std::filesystem::path(env);
  }
  std::error_code error;
  const std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path installed = executable.parent_path().parent_path() / "share" / "parity";
    if (std::filesystem::is_directory(installed / "hardware", error)) return installed;
  }
  return std::filesystem::path(PARITY_SOURCE_DIR) / "data";
}

std::filesystem::path catalogue_dir(const std::optional<std::filesystem::path>& data_dir) {
  return resolve_data_dir(data_dir) / "hardware";
}

std::string normalize_hardware_name(std::string_view name) {
  std::string normalized;
  normalized.reserve(name.size());
  for (const char c : name) {
    if (c == '-' || c == ' ') {
      normalized.push_back('_');
    } else {
      normalized.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return normalized;
}

namespace {

constexpr std::array<std::string_view, 4> kProvenanceKeys{"kind", "source", "date", "note"};
constexpr std::array<std::string_view, 2> kQuantityKeys{"value", "provenance"};
constexpr std::array<std::string_view, 6> kInstructionKeys{"instruction", "m",     "n",
                                                           "k",           "dtype", "provenance"};
constexpr std::array<std::string_view, 3> kInstructionDtypes{"bf16", "fp16", "fp8"};
constexpr std::string_view kQuantityShape =
    R"({"value": <number>, "provenance": {"kind": ..., "source": ..., "date": ...}})";

std::vector<std::string_view> top_level_keys() {
  std::vector<std::string_view> keys{"schema_version",
                                     "name",
                                     "aliases",
                                     "display_name",
                                     "vendor",
                                     "architecture",
                                     "matrix_instructions",
                                     "scale_up_topology"};
  for (const QuantityField& field : hardware_quantity_fields()) keys.push_back(field.key);
  return keys;
}

Result<ProvenanceKind> parse_provenance_kind(std::string_view text, std::string_view where) {
  for (const ProvenanceKind kind :
       {ProvenanceKind::kVendorSpec, ProvenanceKind::kMeasuredThirdParty,
        ProvenanceKind::kMeasuredHere, ProvenanceKind::kDerived}) {
    if (provenance_kind_name(kind) == text) return kind;
  }
  return invalid_argument(
      where, ": unknown provenance kind '", text,
      "'; expected one of vendor_spec, measured_third_party, measured_here, derived");
}

Result<Provenance> parse_provenance(const json& object, std::string_view origin,
                                    std::string_view path) {
  PARITY_RETURN_IF_ERROR(detail::expect_object(object, key_context(origin, path),
                                               R"({"kind": ..., "source": ..., "date": ...})"));
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(object, kProvenanceKeys, origin, path));
  Provenance provenance;
  PARITY_ASSIGN_OR_RETURN(const std::string kind, detail::read_string(object, "kind", origin, path,
                                                                      Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(provenance.kind,
                          parse_provenance_kind(kind, key_context(origin, join_key(path, "kind"))));
  PARITY_ASSIGN_OR_RETURN(provenance.source, detail::read_string(object, "source", origin, path,
                                                                 Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(provenance.date, detail::read_string(object, "date", origin, path,
                                                               Emptiness::kRequireNonEmpty));
  if (!detail::is_valid_date(provenance.date, DateForm::kDateOnly)) {
    return invalid_argument(key_context(origin, join_key(path, "date")), ": date '",
                            provenance.date, "' must be YYYY-MM or YYYY-MM-DD");
  }
  if (object.contains("note")) {
    PARITY_ASSIGN_OR_RETURN(provenance.note, detail::read_string(object, "note", origin, path,
                                                                 Emptiness::kRequireNonEmpty));
  }
  return provenance;
}

Result<Quantity> parse_quantity(const json& spec, const QuantityField& field,
                                std::string_view origin) {
  const auto it = spec.find(std::string(field.key));
  if (it == spec.end()) return invalid_argument(origin, ": missing required key '", field.key, "'");
  const std::string where = key_context(origin, field.key);
  if (it->is_number()) {
    return invalid_argument(where, ": value ", it->dump(), " has no provenance; expected ",
                            kQuantityShape);
  }
  PARITY_RETURN_IF_ERROR(detail::expect_object(*it, where, kQuantityShape));
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(*it, kQuantityKeys, origin, field.key));
  if (!it->contains("provenance")) {
    return invalid_argument(where, ": value ", it->contains("value") ? it->at("value").dump() : "?",
                            " has no provenance; expected ", kQuantityShape);
  }
  Quantity quantity;
  PARITY_ASSIGN_OR_RETURN(quantity.value, detail::read_number(*it, "value", origin, field.key));
  const std::string value_where = key_context(origin, join_key(field.key, "value"));
  // Far outside every figure of every GPU (B200 FP8: 4500 TFLOP/s, MI355X: 256 CUs; the smallest
  // figure is a count of 1), so only garbage or a unit mistake trips them; they also keep integer
  // fields exact and quotients finite when the models convert and divide them.
  constexpr double kMinQuantityValue = 1e-3;
  constexpr double kMaxQuantityValue = 1e6;
  if (quantity.value <= 0.0) {
    return invalid_argument(value_where, ": value ", quantity.value, " must be > 0 (", field.label,
                            field.unit.empty() ? "" : " in ", field.unit, ")");
  }
  if (quantity.value < kMinQuantityValue || quantity.value > kMaxQuantityValue) {
    return invalid_argument(value_where, ": value ", quantity.value, " is outside [",
                            kMinQuantityValue, ", ", kMaxQuantityValue, "] (", field.label,
                            field.unit.empty() ? "" : " in ", field.unit, "): a unit mistake?");
  }
  if (field.domain == QuantityDomain::kPositiveInteger) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t whole,
                            detail::read_integer(*it, "value", origin, field.key, 1));
    quantity.value = static_cast<double>(whole);
  }
  PARITY_ASSIGN_OR_RETURN(quantity.provenance, parse_provenance(it->at("provenance"), origin,
                                                                join_key(field.key, "provenance")));
  return quantity;
}

Result<MatrixInstructionShape> parse_instruction(const json& object, std::string_view origin,
                                                 const std::string& path) {
  PARITY_RETURN_IF_ERROR(detail::expect_object(
      object, key_context(origin, path),
      R"({"instruction": ..., "m": ..., "n": ..., "k": ..., "dtype": ..., "provenance": {...}})"));
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(object, kInstructionKeys, origin, path));
  MatrixInstructionShape shape;
  PARITY_ASSIGN_OR_RETURN(
      shape.instruction,
      detail::read_string(object, "instruction", origin, path, Emptiness::kRequireNonEmpty));
  for (auto [key, member] :
       {std::pair{"m", &MatrixInstructionShape::m}, std::pair{"n", &MatrixInstructionShape::n},
        std::pair{"k", &MatrixInstructionShape::k}}) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t extent,
                            detail::read_integer(object, key, origin, path, 1));
    constexpr std::int64_t kMaxExtent = 1 << 16;  // far above any real instruction; catches typos
    if (extent > kMaxExtent) {
      return invalid_argument(key_context(origin, join_key(path, key)), ": value ", extent,
                              " must be <= ", kMaxExtent);
    }
    shape.*member = static_cast<int>(extent);
  }
  PARITY_ASSIGN_OR_RETURN(
      shape.dtype, detail::read_string(object, "dtype", origin, path, Emptiness::kRequireNonEmpty));
  if (std::find(kInstructionDtypes.begin(), kInstructionDtypes.end(), shape.dtype) ==
      kInstructionDtypes.end()) {
    return invalid_argument(key_context(origin, join_key(path, "dtype")), ": unknown dtype '",
                            shape.dtype, "'; expected one of bf16, fp16, fp8");
  }
  if (!object.contains("provenance")) {
    return invalid_argument(key_context(origin, path), ": instruction '", shape.instruction,
                            "' has no provenance");
  }
  PARITY_ASSIGN_OR_RETURN(shape.provenance, parse_provenance(object.at("provenance"), origin,
                                                             join_key(path, "provenance")));
  return shape;
}

Status check_hardware_name(std::string_view name, std::string_view where) {
  const bool is_canonical = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (!is_canonical) {
    return invalid_argument(where, ": name '", name,
                            "' must be lower case letters, digits and '_' (e.g. \"h100_sxm\")");
  }
  return Status::ok();
}

// Relations that hold on every real GPU; a violation is almost surely a typo in the file.
Status check_consistency(const HardwareSpec& spec, std::string_view origin) {
  const double warp = spec.warp_size.value;
  if (warp != 32.0 && warp != 64.0) {
    return invalid_argument(key_context(origin, "warp_size.value"), ": value ", warp,
                            " must be 32 or 64");
  }
  if (spec.last_level_cache_mib.value < spec.l2_cache_mib.value) {
    return invalid_argument(key_context(origin, "last_level_cache_mib.value"), ": value ",
                            spec.last_level_cache_mib.value, " is below l2_cache_mib ",
                            spec.l2_cache_mib.value, "; on NVIDIA the last-level cache is the L2");
  }
  // Published per-GPU figures are rounded (MI350X: 538 = 7 x 76.8 = 537.6), hence 1% slack.
  const double link_total = spec.scale_up_link_gbps.value * spec.scale_up_link_count.value;
  if (spec.scale_up_per_gpu_gbps.value > link_total * 1.01) {
    return invalid_argument(key_context(origin, "scale_up_per_gpu_gbps.value"), ": value ",
                            spec.scale_up_per_gpu_gbps.value,
                            " exceeds scale_up_link_gbps x scale_up_link_count = ", link_total);
  }
  if (spec.peak_rate_clock_mhz.value > spec.boost_clock_mhz.value) {
    return invalid_argument(key_context(origin, "peak_rate_clock_mhz.value"), ": value ",
                            spec.peak_rate_clock_mhz.value, " exceeds boost_clock_mhz ",
                            spec.boost_clock_mhz.value);
  }
  return Status::ok();
}

json provenance_to_json(const Provenance& provenance) {
  json out = {{"kind", provenance_kind_name(provenance.kind)},
              {"source", provenance.source},
              {"date", provenance.date}};
  if (!provenance.note.empty()) out["note"] = provenance.note;
  return out;
}

}  // namespace

Result<HardwareSpec> parse_hardware_spec(const json& json_spec, std::string_view origin) {
  PARITY_RETURN_IF_ERROR(detail::expect_object(
      json_spec, origin, "a JSON object describing one GPU at the top level"));
  const std::vector<std::string_view> known_keys = top_level_keys();
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(json_spec, known_keys, origin, ""));

  PARITY_RETURN_IF_ERROR(detail::check_schema_version(json_spec, origin, kHardwareSchemaVersion));

  HardwareSpec spec;
  PARITY_ASSIGN_OR_RETURN(
      spec.name, detail::read_string(json_spec, "name", origin, "", Emptiness::kRequireNonEmpty));
  PARITY_RETURN_IF_ERROR(check_hardware_name(spec.name, key_context(origin, "name")));
  if (json_spec.contains("aliases")) {
    const json& aliases = json_spec.at("aliases");
    if (!aliases.is_array()) {
      return invalid_argument(key_context(origin, "aliases"),
                              ": expected an array of strings, got ", detail::describe(aliases));
    }
    for (std::size_t i = 0; i < aliases.size(); ++i) {
      const std::string where = key_context(origin, parity::detail::concat("aliases[", i, "]"));
      if (!aliases[i].is_string()) {
        return invalid_argument(where, ": expected a string, got ", detail::describe(aliases[i]));
      }
      spec.aliases.push_back(aliases[i].get<std::string>());
      PARITY_RETURN_IF_ERROR(check_hardware_name(spec.aliases.back(), where));
    }
  }
  PARITY_ASSIGN_OR_RETURN(spec.display_name, detail::read_string(json_spec, "display_name", origin,
                                                                 "", Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(spec.architecture, detail::read_string(json_spec, "architecture", origin,
                                                                 "", Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(
      const std::string vendor,
      detail::read_string(json_spec, "vendor", origin, "", Emptiness::kRequireNonEmpty));
  if (vendor == vendor_name(Vendor::kNvidia)) {
    spec.vendor = Vendor::kNvidia;
  } else if (vendor == vendor_name(Vendor::kAmd)) {
    spec.vendor = Vendor::kAmd;
  } else {
    return invalid_argument(key_context(origin, "vendor"), ": unknown vendor '", vendor,
                            "'; expected nvidia or amd");
  }

  for (const QuantityField& field : hardware_quantity_fields()) {
    PARITY_ASSIGN_OR_RETURN(spec.*field.member, parse_quantity(json_spec, field, origin));
  }

  if (!json_spec.contains("matrix_instructions")) {
    return invalid_argument(origin, ": missing required key 'matrix_instructions'");
  }
  const json& instructions = json_spec.at("matrix_instructions");
  if (!instructions.is_array() || instructions.empty()) {
    return invalid_argument(key_context(origin, "matrix_instructions"),
                            ": expected a non-empty array of instruction shapes, got ",
                            detail::describe(instructions));
  }
  for (std::size_t i = 0; i < instructions.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(
        MatrixInstructionShape shape,
        parse_instruction(instructions[i], origin,
                          parity::detail::concat("matrix_instructions[", i, "]")));
    spec.matrix_instructions.push_back(std::move(shape));
  }

  PARITY_ASSIGN_OR_RETURN(
      const std::string topology,
      detail::read_string(json_spec, "scale_up_topology", origin, "", Emptiness::kRequireNonEmpty));
  if (topology == scale_up_topology_name(ScaleUpTopology::kSwitched)) {
    spec.scale_up_topology = ScaleUpTopology::kSwitched;
  } else if (topology == scale_up_topology_name(ScaleUpTopology::kFullMesh)) {
    spec.scale_up_topology = ScaleUpTopology::kFullMesh;
  } else {
    return invalid_argument(key_context(origin, "scale_up_topology"), ": unknown topology '",
                            topology, "'; expected switched or full_mesh");
  }

  PARITY_RETURN_IF_ERROR(check_consistency(spec, origin));
  return spec;
}

json hardware_spec_to_json(const HardwareSpec& spec) {
  json out;
  out["schema_version"] = kHardwareSchemaVersion;
  out["name"] = spec.name;
  if (!spec.aliases.empty()) out["aliases"] = spec.aliases;
  out["display_name"] = spec.display_name;
  out["vendor"] = vendor_name(spec.vendor);
  out["architecture"] = spec.architecture;
  for (const QuantityField& field : hardware_quantity_fields()) {
    const Quantity& quantity = spec.*field.member;
    out[std::string(field.key)] = {{"value", quantity.value},
                                   {"provenance", provenance_to_json(quantity.provenance)}};
  }
  json instructions = json::array();
  for (const MatrixInstructionShape& shape : spec.matrix_instructions) {
    instructions.push_back({{"instruction", shape.instruction},
                            {"m", shape.m},
                            {"n", shape.n},
                            {"k", shape.k},
                            {"dtype", shape.dtype},
                            {"provenance", provenance_to_json(shape.provenance)}});
  }
  out["matrix_instructions"] = std::move(instructions);
  out["scale_up_topology"] = scale_up_topology_name(spec.scale_up_topology);
  return out;
}

Result<HardwareSpec> parse_hardware_spec_text(std::string_view text, std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const json parsed, detail::parse_json_text(text, origin));
  return parse_hardware_spec(parsed, origin);
}

Result<HardwareSpec> load_hardware_spec_file(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(const json parsed, detail::read_json_file(path));
  return parse_hardware_spec(parsed, path.string());
}

Result<std::vector<HardwareSpec>> load_catalogue(const std::filesystem::path& hardware_dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(hardware_dir, error)) {
    return not_found("load_catalogue: hardware catalogue directory '", hardware_dir.string(),
                     "' does not exist (pass --data-dir or set PARITY_DATA_DIR to a folder with "
                     "hardware/*.json)");
  }
  std::vector<std::filesystem::path> files;
  // The error_code forms throughout: a range-for's increment and entry.is_regular_file() throw
  // std::filesystem::filesystem_error on an unreadable entry.
  for (std::filesystem::directory_iterator it(hardware_dir, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code entry_error;
    if (it->is_regular_file(entry_error) && it->path().extension() == ".json") {
      files.push_back(it->path());
    }
  }
  if (error) {
    return io_error("load_catalogue: cannot list '", hardware_dir.string(), "': ", error.message());
  }
  if (files.empty()) {
    return not_found("load_catalogue: no *.json files in '", hardware_dir.string(), "'");
  }
  std::sort(files.begin(), files.end());

  std::vector<HardwareSpec> catalogue;
  std::map<std::string, std::string> owner_of_name;  // name or alias -> file that claims it
  for (const auto& file : files) {
    PARITY_ASSIGN_OR_RETURN(HardwareSpec spec, load_hardware_spec_file(file));
    std::vector<std::string> claimed{spec.name};
    claimed.insert(claimed.end(), spec.aliases.begin(), spec.aliases.end());
    for (const std::string& claim : claimed) {
      const auto [it, inserted] = owner_of_name.emplace(claim, file.string());
      if (!inserted) {
        return invalid_argument(file.string(), ": name or alias '", claim, "' is already used by ",
                                it->second);
      }
    }
    catalogue.push_back(std::move(spec));
  }
  std::sort(catalogue.begin(), catalogue.end(), [](const HardwareSpec& a, const HardwareSpec& b) {
    if (a.vendor != b.vendor) return a.vendor < b.vendor;
    return a.name < b.name;
  });
  return catalogue;
}

Result<HardwareSpec> find_hardware(std::string_view name,
                                   const std::vector<HardwareSpec>& catalogue) {
  const std::string key = normalize_hardware_name(name);
  for (const HardwareSpec& spec : catalogue) {
    if (spec.name == key) return spec;
    if (std::find(spec.aliases.begin(), spec.aliases.end(), key) != spec.aliases.end()) return spec;
  }
  std::ostringstream known;
  for (std::size_t i = 0; i < catalogue.size(); ++i) {
    known << (i == 0 ? "" : ", ") << catalogue[i].name;
    for (std::size_t a = 0; a < catalogue[i].aliases.size(); ++a) {
      known << (a == 0 ? " (" : ", ") << catalogue[i].aliases[a];
    }
    if (!catalogue[i].aliases.empty()) known << ")";
  }
  return not_found("unknown GPU '", name, "'; known: ", known.str());
}

Result<HardwareSpec> find_hardware(std::string_view name,
                                   const std::optional<std::filesystem::path>& data_dir) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          load_catalogue(catalogue_dir(data_dir)));
  return find_hardware(name, catalogue);
}

Result<HardwareSpec> find_hardware_for_device(std::string_view runtime_name,
                                              const std::optional<std::filesystem::path>& data_dir) {
  PARITY_CHECK_ARG(!runtime_name.empty(), "device name is empty: the runtime reported no name");
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue, load_catalogue(catalogue_dir(data_dir)));
  if (auto spec = find_hardware(runtime_name, catalogue); spec.is_ok()) return spec;
  for (std::string_view vendor : {"NVIDIA ", "AMD "}) {
    if (runtime_name.substr(0, vendor.size()) != vendor) continue;
    if (auto spec = find_hardware(runtime_name.substr(vendor.size()), catalogue); spec.is_ok()) return spec;
  }
  return not_found("device '", runtime_name, "' (key '", normalize_hardware_name(runtime_name),
                   "') is not in the hardware catalogue (", catalogue_dir(data_dir).string(),
                   "): add its description there, with that key as an alias, or name a catalogue GPU explicitly");
}

}  // namespace parity::hw
