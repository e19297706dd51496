// One torch.export Graph (JSON) into one nrt Graph: values from tensor_values, sym_*_values and
// custom_obj_values (in that order, each in document order), graph inputs and outputs, and nodes
// with every Argument kind of the schema. References by name become value indices; a name the
// graph does not declare is an error (codes::kUnknownValueName), and so is a name declared
// twice. Node names and metadata are kept verbatim. A subgraph (`as_graph`) becomes its own
// Program.graphs entry named "<parent>/<argument name>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/torch_export/json_fields.h"
#include "serializer/torch_export/tensor_meta_json.h"
#include "serializer/torch_export/value_names.h"

namespace nrt::torch_export {

// Node metadata key under which nrt keeps Node.is_hop_single_tensor_return ("true"/"false");
// torch's own metadata never uses the "nrt::" prefix, which the importer refuses in its input.
inline constexpr std::string_view kIsHopSingleTensorReturnKey = "nrt::is_hop_single_tensor_return";

// std::string keys looked up by std::string_view without a temporary string.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// What all graphs of one import share.
struct ProgramBuild {
  fb::ProgramT* program = nullptr;
  ReadContext read;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> operators;  // target -> operator index
  std::unordered_map<std::string, uint32_t> graphs;     // graph name -> Program.graphs index
  std::vector<std::string> single_tensor_return_graphs;
};

class GraphImporter {
 public:
  // `depth` counts enclosing graphs (subgraph nesting is bounded).
  GraphImporter(ProgramBuild& build, int depth) : build_(build), depth_(depth) {}

  // Appends the graph to Program.graphs and returns its index.
  Result<uint32_t> run(JsonElement json, std::string name, const JsonPlace& place);

  // After run(): the value index of `name` in this graph.
  std::optional<uint32_t> value_index(std::string_view name) const;
  fb::GraphT& graph() { return *graph_; }

  // Converts one Argument union; public for the signature (user inputs, user outputs).
  Result<fb::ArgumentUnion> argument(JsonElement json, const JsonPlace& place, int nesting = 0);

 private:
  Status read_values(JsonObject graph_json, const JsonPlace& place);
  Status declare(std::string_view name, std::unique_ptr<fb::ValueT> value, const JsonPlace& place);
  Status read_node(JsonElement json, const JsonPlace& place);
  Status read_named_argument(JsonElement json, const JsonPlace& place, fb::NodeT* node);
  Result<uint32_t> reference(std::string_view name, const JsonPlace& place) const;
  Result<uint32_t> tensor_reference(JsonElement json, const JsonPlace& place) const;  // TensorArgument
  Result<uint32_t> operator_index(std::string_view target, const JsonPlace& place);
  Result<uint32_t> subgraph(JsonElement json, const JsonPlace& place);

  ProgramBuild& build_;
  int depth_;
  fb::GraphT* graph_ = nullptr;
  ValueNames names_;
};

}  // namespace nrt::torch_export
