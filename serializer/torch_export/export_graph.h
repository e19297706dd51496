// One nrt graph as a torch.export Graph (JSON), subgraphs written inline as `as_graph`, and one
// nrt argument as a torch.export Argument: the inverse of import_graph.h. Values go to the table
// of their kind (tensor_values, sym_*_values, custom_obj_values); kinds torch.export has no table
// for, enum values without a torch.export number and references to such values are errors
// (codes::kNotExpressible, codes::kUnmappedEnumValue), never written wrongly.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/torch_export/json_writer.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {

// How the source wrote what nrt does not record (torch_extras.h).
struct TorchGraphStyle {
  const NoneStyle& none;
  const std::set<std::string>& single_tensor_return_graphs;  // graph names
};

Status write_torch_graph(JsonWriter& w, const fb::ProgramT& program, uint32_t graph, const TorchGraphStyle& style);

// `where` names the argument in error messages.
Status write_torch_argument(JsonWriter& w, const fb::ProgramT& program, const fb::GraphT& graph,
                            const fb::ArgumentUnion& arg, const TorchGraphStyle& style, const std::string& where);

}  // namespace nrt::torch_export
