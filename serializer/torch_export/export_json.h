// An nrt program's entry graph as torch.export ExportedProgram JSON (schema 8.20), the inverse of
// import_json.h: importing torch JSON and exporting it again gives the same JSON value (key
// order aside; docs/TORCH_EXPORT.md lists the few normalisations). Programs that never came from
// torch get defaults for what only torch knows (opset versions, module call graph, ...).
//
// Refused with an error (never written wrongly): values of kinds torch.export has no table for
// (DTensor, tensor lists, process groups as values), enum values without a torch.export number
// (JAGGED layout, quantized dtypes), ValueArg references to such values.
#pragma once

#include <string>

#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::torch_export {

// The name of the entry graph to export: `requested` if not empty (it must be an entry point),
// else the program's only entry point.
Result<std::string> pick_entry_graph(const fb::ProgramT& program, const std::string& requested);

Result<std::string> export_torch_json(const fb::ProgramT& program, const std::string& graph_name);

}  // namespace nrt::torch_export
