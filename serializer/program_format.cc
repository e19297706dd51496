#include "serializer/program_format.h"

#include <cstdint>
#include <span>
#include <string>

#include "serializer/container.h"

namespace nrt {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// True when the start of a JSON text has a member `name` (a quoted `name` followed by ':'; inside
// a string value the quotes would be escaped).
bool looks_like_member(std::string_view head, std::string_view name) {
  const std::string quoted = "\"" + std::string(name) + "\"";
  for (size_t at = head.find(quoted); at != std::string_view::npos; at = head.find(quoted, at + 1)) {
    size_t next = at + quoted.size();
    while (next < head.size() && is_blank(head[next])) ++next;
    if (next < head.size() && head[next] == ':') return true;
  }
  return false;
}

}  // namespace

std::string_view format_name(ProgramFormat format) {
  switch (format) {
    case ProgramFormat::kNrt:
      return "nrt";
    case ProgramFormat::kNrtJson:
      return "nrt.json";
    case ProgramFormat::kPt2:
      return "pt2";
    case ProgramFormat::kTorchJson:
      return "torch.json";
  }
  return "?";
}

std::optional<ProgramFormat> format_from_name(std::string_view name) {
  for (const ProgramFormat f : kAllProgramFormats) {
    if (format_name(f) == name) return f;
  }
  return std::nullopt;
}

std::optional<ProgramFormat> format_from_extension(std::string_view path) {
  if (path.ends_with(".nrt.json")) return ProgramFormat::kNrtJson;
  if (path.ends_with(".nrt")) return ProgramFormat::kNrt;
  if (path.ends_with(".pt2")) return ProgramFormat::kPt2;
  if (path.ends_with(".json")) return ProgramFormat::kTorchJson;
  return std::nullopt;
}

std::optional<ProgramFormat> format_from_head(std::string_view head, std::string_view path) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(head.data()), head.size());
  if (has_container_magic(bytes)) return ProgramFormat::kNrt;
  if (head.starts_with(std::string_view("PK\3\4", 4))) return ProgramFormat::kPt2;
  size_t first = 0;
  while (first < head.size() && is_blank(head[first])) ++first;
  if (first == head.size() || head[first] != '{') return std::nullopt;
  if (looks_like_member(head, "graph_module")) return ProgramFormat::kTorchJson;
  if (looks_like_member(head, "entry_points") || looks_like_member(head, "graphs")) return ProgramFormat::kNrtJson;
  return format_from_extension(path) == ProgramFormat::kTorchJson ? ProgramFormat::kTorchJson : ProgramFormat::kNrtJson;
}

}  // namespace nrt
