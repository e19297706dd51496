// Opening a program in any format nrt reads, verified, in one step: what nrt-inspect's
// subcommands and nrt-run open, for library users and the Python package alike. One sniff of the
// content decides the format (serializer/torch_export/convert_any.h); when the content is not
// recognisable the name does, and anything else is opened as a .nrt container so that its real
// defect (too small, bad magic) is reported. .nrt files are opened in place (mapped, weights
// zero-copy); every other format is imported into memory and verified through its binary form,
// so all meet the same checks.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"
#include "serializer/program_file.h"
#include "serializer/verify_options.h"

namespace nrt::torch_export {

struct OpenAnyOptions {
  VerifyOptions verify;
  // One line per import warning (unknown fields ignored, archive entries not imported, ...).
  std::function<void(const std::string&)> warn;
};

Result<ProgramFile> open_any_program(const std::string& path, const OpenAnyOptions& options = {});

}  // namespace nrt::torch_export
