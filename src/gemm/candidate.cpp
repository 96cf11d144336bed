#include "parity/gemm/candidate.hpp"

#include <charconv>
#include <cstdio>
#include <string>
#include <vector>

namespace parity::gemm {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(sep, start);
    const std::size_t stop = end == std::string_view::npos ? text.size() : end;
    if (stop > start) parts.push_back(text.substr(start, stop - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

template <typename T>
Status parse_number(std::string_view key, std::string_view value, T& out, int base = 10) {
  const auto* first = value.data();
  const auto* last = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(first, last, out, base);
  PARITY_CHECK_ARG(ec == std::errc() && ptr == last && !value.empty(), "candidate: ", key, "='",
                   value, "' is not a number");
  return Status::ok();
}

// "AxB" or "AxBxC" into `count` ints.
Status parse_dims(std::string_view key, std::string_view value, int* out, std::size_t count) {
  const auto parts = split(value, 'x');
  PARITY_CHECK_ARG(parts.size() == count, "candidate: ", key, "='", value, "' needs ", count,
                   " sizes joined by 'x'");
  for (std::size_t i = 0; i < count; ++i) PARITY_RETURN_IF_ERROR(parse_number(key, parts[i], out[i]));
  return Status::ok();
}

}  // namespace

std::string_view reduction_name(ReductionScheme scheme) {
  switch (scheme) {
    case ReductionScheme::kNone: return "none";
    case ReductionScheme::kInPlace: return "inplace";
    case ReductionScheme::kComputeType: return "compute";
    case ReductionScheme::kOutputType: return "output";
  }
  return "?";
}
std::string_view decomposition_name(Decomposition decomposition) {
  return decomposition == Decomposition::kStreamK ? "streamk" : "dp";
}
std::string_view raster_name(RasterOrder order) {
  switch (order) {
    case RasterOrder::kAlongM: return "m";
    case RasterOrder::kAlongN: return "n";
    case RasterOrder::kUnknown: return "auto";
  }
  return "?";
}
std::string_view xcd_mapping_name(XcdMapping mapping) {
  return mapping == XcdMapping::kContiguous ? "contig" : "rr";
}

std::string Candidate::describe() const {
  std::string text = detail::concat(
      "tile=", tile_m, "x", tile_n, "x", tile_k, " cluster=", cluster_m, "x", cluster_n, " mi=", mi_m,
      "x", mi_n, "x", mi_k, " splitk=", split_k, " red=", reduction_name(reduction),
      " decomp=", decomposition_name(decomposition), " skgrid=", stream_k_grid, " stages=", stages,
      " family=", kernel_family, " variant=", variant, " occ=", occupancy, " group=", group_size,
      " raster=", raster_name(raster), " xcd=", xcd_mapping_name(xcd_mapping),
      " ws=", workspace_bytes, " hrank=", heuristic_rank);
  if (has_payload) {
    text += " payload=";
    for (std::size_t i = 0; i < payload.size(); ++i) {
      char buffer[24];
      std::snprintf(buffer, sizeof(buffer), "%s%llx", i == 0 ? "" : ",",
                    static_cast<unsigned long long>(payload[i]));
      text += buffer;
    }
  }
  return text;
}

std::string Candidate::short_name() const {
  std::string text = detail::concat(tile_m, "x", tile_n, "x", tile_k);
  // CDNA MFMA shapes distinguish AMD configs; Hopper's wgmma shape follows from the tile.
  if (mi_m < 64) text += detail::concat(" mi", mi_m, "x", mi_n, "x", mi_k);
  if (cluster_m * cluster_n > 1) text += detail::concat(" c", cluster_m, "x", cluster_n);
  if (split_k > 1) text += detail::concat(" sk", split_k);
  if (decomposition == Decomposition::kStreamK) text += " streamk";
  if (group_size > 1) text += detail::concat(" g", group_size);
  if (xcd_mapping == XcdMapping::kContiguous) text += " xcd-contig";
  if (occupancy > 1) text += detail::concat(" occ", occupancy);
  text += detail::concat(" v", variant);
  return text;
}

Result<Candidate> parse_candidate(std::string_view text) {
  Candidate c;
  for (const auto token : split(text, ' ')) {
    const std::size_t eq = token.find('=');
    PARITY_CHECK_ARG(eq != std::string_view::npos, "candidate: token '", token,
                     "' is not key=value");
    const std::string_view key = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
    if (key == "tile") {
      int dims[3];
      PARITY_RETURN_IF_ERROR(parse_dims(key, value, dims, 3));
      c.tile_m = dims[0], c.tile_n = dims[1], c.tile_k = dims[2];
    } else if (key == "cluster") {
      int dims[2];
      PARITY_RETURN_IF_ERROR(parse_dims(key, value, dims, 2));
      c.cluster_m = dims[0], c.cluster_n = dims[1];
    } else if (key == "mi") {
      int dims[3];
      PARITY_RETURN_IF_ERROR(parse_dims(key, value, dims, 3));
      c.mi_m = dims[0], c.mi_n = dims[1], c.mi_k = dims[2];
    } else if (key == "splitk") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.split_k));
    } else if (key == "red") {
      if (value == "none") c.reduction = ReductionScheme::kNone;
      else if (value == "inplace") c.reduction = ReductionScheme::kInPlace;
      else if (value == "compute") c.reduction = ReductionScheme::kComputeType;
      else if (value == "output") c.reduction = ReductionScheme::kOutputType;
      else return invalid_argument("candidate: red='", value,
                                   "' (expected none, inplace, compute, output)");
    } else if (key == "decomp") {
      if (value == "dp") c.decomposition = Decomposition::kDataParallel;
      else if (value == "streamk") c.decomposition = Decomposition::kStreamK;
      else return invalid_argument("candidate: decomp='", value, "' (expected dp, streamk)");
    } else if (key == "skgrid") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.stream_k_grid));
    } else if (key == "stages") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.stages));
    } else if (key == "family") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.kernel_family));
    } else if (key == "variant") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.variant));
    } else if (key == "occ") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.occupancy));
    } else if (key == "group") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.group_size));
    } else if (key == "raster") {
      if (value == "m") c.raster = RasterOrder::kAlongM;
      else if (value == "n") c.raster = RasterOrder::kAlongN;
      else if (value == "auto") c.raster = RasterOrder::kUnknown;
      else return invalid_argument("candidate: raster='", value, "' (expected m, n, auto)");
    } else if (key == "xcd") {
      if (value == "rr") c.xcd_mapping = XcdMapping::kRoundRobin;
      else if (value == "contig") c.xcd_mapping = XcdMapping::kContiguous;
      else return invalid_argument("candidate: xcd='", value, "' (expected rr, contig)");
    } else if (key == "ws") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.workspace_bytes));
    } else if (key == "hrank") {
      PARITY_RETURN_IF_ERROR(parse_number(key, value, c.heuristic_rank));
    } else if (key == "payload") {
      const auto words = split(value, ',');
      PARITY_CHECK_ARG(words.size() == c.payload.size(), "candidate: payload has ", words.size(),
                       " words (expected ", c.payload.size(), ")");
      for (std::size_t i = 0; i < words.size(); ++i) {
        PARITY_RETURN_IF_ERROR(parse_number(key, words[i], c.payload[i], 16));
      }
      c.has_payload = true;
    } else {
      return invalid_argument("candidate: unknown key '", key, "'");
    }
  }
  PARITY_RETURN_IF_ERROR(validate_candidate(c));
  return c;
}

Status validate_candidate(const Candidate& c) {
  PARITY_CHECK_ARG(c.tile_m > 0 && c.tile_n > 0 && c.tile_k > 0, "candidate: tile=", c.tile_m,
                   "x", c.tile_n, "x", c.tile_k, " needs positive sizes");
  PARITY_CHECK_ARG(c.cluster_m > 0 && c.cluster_n > 0, "candidate: cluster=", c.cluster_m, "x",
                   c.cluster_n, " needs positive sizes");
  PARITY_CHECK_ARG(c.mi_m > 0 && c.mi_n > 0 && c.mi_k > 0, "candidate: mi=", c.mi_m, "x", c.mi_n,
                   "x", c.mi_k, " needs positive sizes");
  PARITY_CHECK_ARG(c.split_k >= 1, "candidate: splitk=", c.split_k, " must be >= 1");
  PARITY_CHECK_ARG(c.split_k == 1 || c.reduction != ReductionScheme::kNone,
                   "candidate: splitk=", c.split_k, " needs a reduction scheme (red=none)");
  PARITY_CHECK_ARG(c.occupancy >= 1, "candidate: occ=", c.occupancy, " must be >= 1");
  PARITY_CHECK_ARG(c.group_size >= 1, "candidate: group=", c.group_size, " must be >= 1");
  PARITY_CHECK_ARG(c.stages >= 0, "candidate: stages=", c.stages, " must be >= 0 (0 = auto)");
  PARITY_CHECK_ARG(c.stream_k_grid >= 0, "candidate: skgrid=", c.stream_k_grid, " must be >= 0");
  return Status::ok();
}

}  // namespace parity::gemm
