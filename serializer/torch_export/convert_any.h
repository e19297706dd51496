// Program conversion across every format nrt reads and writes: its own (.nrt, .nrt.json, handled
// by serializer/convert_program.h) and torch.export's (.pt2 archives, ExportedProgram JSON).
// The input format comes from --from, else the content (zip magic "PK\3\4" is pt2, the nrt
// container magic nrt; JSON with a "graph_module" member is torch.json, with nrt's "graphs" or
// "entry_points" nrt.json, else the name decides: ".nrt.json" nrt.json, ".json" torch.json). The
// output format comes from --to, else the name (.nrt, .nrt.json, .pt2, .json). The
// program is verified before anything is written, and written atomically, so bad input never
// leaves a partial output file.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "serializer/convert_program.h"
#include "core/error.h"
#include "serializer/json_form.h"

namespace nrt::torch_export {

enum class AnyFormat { kNrt, kNrtJson, kPt2, kTorchJson };

std::string_view any_format_name(AnyFormat format);  // "nrt", "nrt.json", "pt2", "torch.json"
std::optional<AnyFormat> any_format_from_name(std::string_view name);
std::optional<AnyFormat> any_format_from_extension(std::string_view path);
Result<AnyFormat> sniff_any_format(const std::string& path);

struct AnyConvertOptions {
  std::optional<AnyFormat> from;
  std::optional<AnyFormat> to;
  VerifyOptions verify;
  // .pt2 input: import only this model. torch.json input: the entry graph's name (default
  // "model"). torch output: export only this entry graph (required for torch.json when the
  // program has several).
  std::string model;
  // Receives one line per warning (unknown fields ignored, archive entries not imported, ...).
  std::function<void(const std::string&)> warn;
};

// Loads `path` in any format, verified.
Result<ProgramWithWeights> load_any_program(const std::string& path, const AnyConvertOptions& options);

// Verifies `program` and writes it to `path` in `format`.
Status save_any_program(ProgramWithWeights program, const std::string& path, AnyFormat format,
                        const AnyConvertOptions& options);

Status convert_any_program(const std::string& in_path, const std::string& out_path, const AnyConvertOptions& options);

}  // namespace nrt::torch_export
