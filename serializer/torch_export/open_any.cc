#include "serializer/torch_export/open_any.h"

#include "serializer/convert_program.h"
#include "serializer/torch_export/convert_any.h"

namespace nrt::torch_export {

Result<ProgramFile> open_any_program(const std::string& path, const OpenAnyOptions& options) {
  auto sniffed = sniff_any_format(path);
  if (!sniffed && sniffed.error().code == ErrorCode::IoOpen) return sniffed.error();
  // Unrecognisable content is opened as a container, so that its real defect is reported.
  const AnyFormat format = sniffed ? *sniffed : any_format_from_extension(path).value_or(AnyFormat::kNrt);
  if (format == AnyFormat::kNrt) return ProgramFile::open(path, options.verify);
  AnyConvertOptions load;
  load.from = format;
  load.verify = options.verify;
  load.warn = options.warn;
  NRT_TRY(program, load_any_program(path, load));
  auto file = verify_in_memory(std::move(*program));
  if (!file) return make_error(file.error().code, path + ": " + file.error().message);
  return file;
}

}  // namespace nrt::torch_export
