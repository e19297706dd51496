#include "serializer/torch_export/convert_any.h"

#include <cstdio>
#include <cstring>
#include <span>
#include <vector>

#include <simdjson.h>

#include "serializer/atomic_file.h"
#include "serializer/input_limits.h"
#include "serializer/program_file.h"
#include "serializer/read_file.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/export_pt2.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/import_pt2.h"
#include "serializer/write_program.h"

namespace nrt::torch_export {
namespace {

constexpr size_t kSniffBytes = 64 * 1024;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

ProgramFormat nrt_format(AnyFormat format) {
  return format == AnyFormat::kNrtJson ? ProgramFormat::kNrtJson : ProgramFormat::kNrt;
}

// Serializes and verifies in memory: what the program would be as an .nrt file.
Result<ProgramFile> verified(const ProgramWithWeights& program, const VerifyOptions& options) {
  std::vector<std::span<const uint8_t>> spans;
  spans.reserve(program.storages.size());
  for (const auto& s : program.storages) spans.emplace_back(s.data(), s.size());
  NRT_TRY(bytes, serialize_program(program.program, spans));
  return ProgramFile::from_bytes(std::move(*bytes), options);
}

// A .pt2's root folder is the file's stem, as torch names it.
std::string archive_root(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (const size_t dot = base.rfind('.'); dot != std::string::npos && dot > 0) base.resize(dot);
  return base.empty() ? "model" : base;
}

// True when the start of a JSON text has a member `name` (a quoted `name` followed by ':'; inside
// a string value the quotes would be escaped).
bool looks_like_member(std::string_view head, std::string_view name) {
  const std::string quoted = "\"" + std::string(name) + "\"";
  for (size_t at = head.find(quoted); at != std::string_view::npos; at = head.find(quoted, at + 1)) {
    size_t next = at + quoted.size();
    while (next < head.size() && (head[next] == ' ' || head[next] == '\n' || head[next] == '\r' || head[next] == '\t')) {
      ++next;
    }
    if (next < head.size() && head[next] == ':') return true;
  }
  return false;
}

void report(const AnyConvertOptions& options, const std::vector<std::string>& warnings) {
  if (!options.warn) return;
  for (const auto& w : warnings) options.warn(w);
}

}  // namespace

std::string_view any_format_name(AnyFormat format) {
  switch (format) {
    case AnyFormat::kNrt:
      return "nrt";
    case AnyFormat::kNrtJson:
      return "nrt.json";
    case AnyFormat::kPt2:
      return "pt2";
    case AnyFormat::kTorchJson:
      return "torch.json";
  }
  return "?";
}

std::optional<AnyFormat> any_format_from_name(std::string_view name) {
  for (const AnyFormat f : {AnyFormat::kNrt, AnyFormat::kNrtJson, AnyFormat::kPt2, AnyFormat::kTorchJson}) {
    if (any_format_name(f) == name) return f;
  }
  return std::nullopt;
}

std::optional<AnyFormat> any_format_from_extension(std::string_view path) {
  if (ends_with(path, ".nrt.json")) return AnyFormat::kNrtJson;
  if (ends_with(path, ".nrt")) return AnyFormat::kNrt;
  if (ends_with(path, ".pt2")) return AnyFormat::kPt2;
  if (ends_with(path, ".json")) return AnyFormat::kTorchJson;
  return std::nullopt;
}

Result<AnyFormat> sniff_any_format(const std::string& path) {
  NRT_TRY(head, read_file_head(path, kSniffBytes));
  if (head->size() >= 4 && std::memcmp(head->data(), "PK\3\4", 4) == 0) return AnyFormat::kPt2;
  auto nrt = sniff_format(path);
  if (!nrt) {
    return make_error(ErrorCode::UnknownFormat, "'" + path +
                                                    "' is neither an .nrt container, a .pt2 archive nor JSON; use "
                                                    "--from to say which");
  }
  if (*nrt == ProgramFormat::kNrt) return AnyFormat::kNrt;
  // JSON: torch's if it has a top-level "graph_module", nrt's if it has nrt's Program members;
  // otherwise the name decides (".json" is torch's, ".nrt.json" nrt's).
  const std::string_view text(*head);
  if (looks_like_member(text, "graph_module")) return AnyFormat::kTorchJson;
  if (looks_like_member(text, "entry_points") || looks_like_member(text, "graphs")) return AnyFormat::kNrtJson;
  return any_format_from_extension(path) == AnyFormat::kTorchJson ? AnyFormat::kTorchJson : AnyFormat::kNrtJson;
}

Result<ProgramWithWeights> load_any_program(const std::string& path, const AnyConvertOptions& options) {
  AnyFormat format;
  if (options.from) {
    format = *options.from;
  } else if (auto sniffed = sniff_any_format(path); sniffed) {
    format = *sniffed;
  } else if (auto by_name = any_format_from_extension(path); by_name && sniffed.error().code != ErrorCode::IoOpen) {
    format = *by_name;
  } else {
    return sniffed.error();
  }
  if (format == AnyFormat::kNrt || format == AnyFormat::kNrtJson) {
    return load_program(path, nrt_format(format), options.verify);
  }
  Result<TorchImport> imported = make_error(ErrorCode::UnknownFormat, "");
  if (format == AnyFormat::kPt2) {
    imported = import_pt2_file(path, options.model);
  } else {
    NRT_TRY(read, read_file(path, kMaxTorchJsonBytes));
    const simdjson::padded_string text(*read);
    read->clear();
    read->shrink_to_fit();
    imported = import_torch_json(text, options.model.empty() ? "model" : options.model);
    if (!imported) return make_error(imported.error().code, path + ": " + imported.error().message);
  }
  if (!imported) return imported.error();
  report(options, imported->warnings);
  auto file = verified(imported->program, options.verify);
  if (!file) return make_error(file.error().code, path + ": " + file.error().message);
  return unpack_program(*file);
}

Status save_any_program(ProgramWithWeights program, const std::string& path, AnyFormat format,
                        const AnyConvertOptions& options) {
  if (format == AnyFormat::kNrt || format == AnyFormat::kNrtJson) {
    return save_program(std::move(program), path, nrt_format(format));
  }
  NRT_RETURN_IF_ERROR(verified(program, options.verify));
  if (format == AnyFormat::kTorchJson) {
    NRT_TRY(graph, pick_entry_graph(program.program, options.model));
    NRT_TRY(json, export_torch_json(program.program, *graph));
    return write_file_atomically(path, {reinterpret_cast<const uint8_t*>(json->data()), json->size()});
  }
  Pt2ExportOptions pt2;
  pt2.root = archive_root(path);
  pt2.model = options.model;
  NRT_TRY(bytes, export_pt2(program, pt2));
  return write_file_atomically(path, *bytes);
}

Status convert_any_program(const std::string& in_path, const std::string& out_path, const AnyConvertOptions& options) {
  auto to = options.to ? options.to : any_format_from_extension(out_path);
  if (!to) {
    return make_error(ErrorCode::UnknownFormat, "cannot tell the output format of '" + out_path +
                                                    "' from its name; use --to nrt|nrt.json|pt2|torch.json");
  }
  NRT_TRY(program, load_any_program(in_path, options));
  return save_any_program(std::move(*program), out_path, *to, options);
}

}  // namespace nrt::torch_export
