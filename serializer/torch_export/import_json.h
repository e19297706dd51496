// torch.export ExportedProgram JSON (schema 8.x: the models/<name>.json of a .pt2, or a bare
// export) into an nrt program. The graph becomes an entry point named after the model, its
// signature an nrt Signature (every InputSpec and OutputSpec kind, tokens and parameter
// mutations included), range_constraints Program.range_constraints, and everything else the
// nrt schema has no field for goes to Program.metadata (torch_extras.h) so exporting restores
// it. Functional collectives' group names become Program.process_groups (process_groups.h).
//
// Versions: major 8 only (any minor; fields a newer minor adds are ignored with one warning
// each); anything else, including the legacy integer schema_version of torch < 2.3, is refused
// with a message naming it. Without a .pt2 there are no weights: parameters, buffers and
// constants are declared graph inputs whose data is absent.
//
// The result is not verified here; the opener (serializer/open_program.h) verifies it once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/json_form.h"
#include "serializer/torch_export/json_fields.h"

namespace nrt::torch_export {

inline constexpr int kTorchSchemaMajor = 8;
inline constexpr int kTorchSchemaMinor = 20;  // the newest minor this importer knows field by field

struct TorchImport {
  ProgramWithWeights program;
  std::vector<std::string> warnings;  // unknown fields, mixed styles, ...: one line each
};

// Adds the ExportedProgram in `text` to `program` as entry graph `model` (its subgraphs are
// named "<model>/..."). Used once per model of a .pt2; operators and process groups are shared.
Status add_exported_program(JsonText text, const std::string& model, fb::ProgramT* program,
                            std::vector<std::string>* warnings);

// A bare ExportedProgram JSON as a program with one entry graph named `model`.
Result<TorchImport> import_torch_json(JsonText text, const std::string& model = "model");

}  // namespace nrt::torch_export
