// torch.export's formats in the opener's table (serializer/open_program.h): .pt2 archives and
// ExportedProgram JSON, read and written. Registered at static initialisation, so linking
// //serializer/torch_export is all a program does to open them.
#include <simdjson.h>

#include "serializer/atomic_file.h"
#include "serializer/input_limits.h"
#include "serializer/open_program.h"
#include "serializer/read_file.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/export_pt2.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/import_pt2.h"

namespace nrt::torch_export {
namespace {

Result<ProgramWithWeights> take(Result<TorchImport> imported, std::vector<std::string>* warnings) {
  if (!imported) return imported.error();
  warnings->insert(warnings->end(), imported->warnings.begin(), imported->warnings.end());
  return std::move(imported->program);
}

Result<ProgramWithWeights> import_pt2(const std::string& path, const OpenOptions& options,
                                      std::vector<std::string>* warnings) {
  return take(import_pt2_file(path, options.model), warnings);
}

Result<ProgramWithWeights> import_json(const std::string& path, const OpenOptions& options,
                                       std::vector<std::string>* warnings) {
  NRT_TRY(read, read_file(path, kMaxTorchJsonBytes));
  const simdjson::padded_string text(*read);
  read->clear();
  read->shrink_to_fit();
  return take(import_torch_json(text, options.model.empty() ? "model" : options.model), warnings);
}

// A .pt2's root folder is the file's stem, as torch names it.
std::string archive_root(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (const size_t dot = base.rfind('.'); dot != std::string::npos && dot > 0) base.resize(dot);
  return base.empty() ? "model" : base;
}

Status save_pt2(const ProgramFile& file, const std::string& path, const SaveOptions& options) {
  Pt2ExportOptions pt2;
  pt2.root = archive_root(path);
  pt2.model = options.model;
  NRT_TRY(bytes, export_pt2(unpack_program(file), pt2));
  return write_file_atomically(path, *bytes);
}

Status save_json(const ProgramFile& file, const std::string& path, const SaveOptions& options) {
  const ProgramWithWeights program = unpack_program(file);
  NRT_TRY(graph, pick_entry_graph(program.program, options.model));
  NRT_TRY(json, export_torch_json(program.program, *graph));
  return write_file_atomically(path, {reinterpret_cast<const uint8_t*>(json->data()), json->size()});
}

const bool kRegistered = [] {
  register_importer({ProgramFormat::kPt2, &import_pt2, &save_pt2});
  register_importer({ProgramFormat::kTorchJson, &import_json, &save_json});
  return true;
}();

}  // namespace
}  // namespace nrt::torch_export
