// The formats a program comes in, and how one is recognised: by name (--from/--to), by file
// name, or by the first bytes of its content. One enum for every format nrt reads and writes;
// which of them can be opened or saved is up to the importers linked (serializer/open_program.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace nrt {

enum class ProgramFormat { kNrt, kNrtJson, kPt2, kTorchJson };

inline constexpr ProgramFormat kAllProgramFormats[] = {ProgramFormat::kNrt, ProgramFormat::kNrtJson,
                                                       ProgramFormat::kPt2, ProgramFormat::kTorchJson};

// How much of a file's start `format_from_head` looks at.
inline constexpr size_t kFormatHeadBytes = 64 * 1024;

std::string_view format_name(ProgramFormat format);  // "nrt", "nrt.json", "pt2", "torch.json"
std::optional<ProgramFormat> format_from_name(std::string_view name);
// ".nrt.json", ".nrt", ".pt2", ".json" (torch's ExportedProgram JSON).
std::optional<ProgramFormat> format_from_extension(std::string_view path);

// By content: the container magic is .nrt, the zip magic "PK\3\4" .pt2; JSON text (first non-blank
// byte '{') is torch's with a "graph_module" member, nrt's with "entry_points" or "graphs", else
// the name decides (".json" torch's, otherwise nrt's). nullopt: none of these.
std::optional<ProgramFormat> format_from_head(std::string_view head, std::string_view path);

}  // namespace nrt
