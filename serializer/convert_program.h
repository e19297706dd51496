// Conversion between program formats, chosen by extension, recognised by content, or forced.
// The output is verified before it is written, and written atomically: bad input never leaves a
// partial or invalid output file behind.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "serializer/json_form.h"

namespace nrt {

enum class ProgramFormat { kNrt, kNrtJson };

std::string_view format_name(ProgramFormat format);  // "nrt", "nrt.json"
std::optional<ProgramFormat> format_from_name(std::string_view name);
std::optional<ProgramFormat> format_from_extension(std::string_view path);
// By content: the container magic means .nrt; JSON text (first non-blank byte '{') means .nrt.json.
Result<ProgramFormat> sniff_format(const std::string& path);

// Loads any supported format into memory, verified.
Result<ProgramWithWeights> load_program(const std::string& path, std::optional<ProgramFormat> format,
                                        const VerifyOptions& options = {});

// Serializes `program` as a .nrt container in memory and opens it verified.
Result<ProgramFile> verify_in_memory(ProgramWithWeights program);

// Verifies `program` and writes it to `path` in `format`.
Status save_program(ProgramWithWeights program, const std::string& path, ProgramFormat format);

struct ConvertOptions {
  std::optional<ProgramFormat> from;
  std::optional<ProgramFormat> to;
  VerifyOptions verify;
};

Status convert_program(const std::string& in_path, const std::string& out_path, const ConvertOptions& options);

}  // namespace nrt
