// What of a torch.export ExportedProgram the nrt schema has no field for, and how it is kept so
// that exporting gives the same JSON value back: one Program.metadata entry per imported model,
// key "torch.export/<model>", whose value is a JSON object:
//
//   {"schema_version": {...}, "opset_version": {...}, "verifiers": [...], "torch_version": "...",
//    "guards_code": [...], "graph_module": {"metadata": {...}, "module_call_graph": [...],
//    "treespec_namedtuple_fields": {...}}, "range_constraints": ["s0", ...],
//    "single_tensor_return_graphs": ["model/true_graph_0"], "omitted": ["device.index", ...]}
//
// Members are copied verbatim (minified) and only when the source had them. `range_constraints`
// lists the symbols of this model (their bounds live in Program.range_constraints).
// `omitted` names the optional fields whose None this producer leaves out instead of writing
// null (torch's serializer did either, depending on its version); see NoneStyle.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/torch_export/json_fields.h"

namespace nrt::torch_export {

// Optional fields of the torch.export schema whose absent value a producer writes as null or
// leaves out.
enum class OptionalField : uint8_t {
  kDeviceIndex,                // Device.index
  kNodeIsHopSingleTensorReturn,
  kNodeName,
  kArgumentKind,               // NamedArgument.kind
  kSymExprHint,
  kRangeBound,                 // RangeConstraint.min_val / max_val
  kGraphSymFloatValues,        // empty defaults of Graph
  kGraphCustomObjValues,
  kGraphIsSingleTensorReturn,
  kCount,
};

std::string_view optional_field_name(OptionalField field);  // "device.index", ...

class NoneStyle {
 public:
  // Records how the source wrote an absent value of `field`; a source mixing both ways keeps
  // the first and gets one warning.
  void observe(OptionalField field, bool omitted, ImportWarnings* warnings);
  bool omitted(OptionalField field) const { return state_[static_cast<size_t>(field)] == kOmitted; }
  std::vector<std::string> omitted_names() const;
  // Unknown names are ignored (a newer nrt may track more fields).
  void set_omitted(std::string_view name);

 private:
  enum : int8_t { kUnseen = -1, kNull = 0, kOmitted = 1 };
  std::array<int8_t, static_cast<size_t>(OptionalField::kCount)> state_ = [] {
    std::array<int8_t, static_cast<size_t>(OptionalField::kCount)> a{};
    a.fill(kUnseen);
    return a;
  }();
};

struct TorchExtras {
  std::string schema_version;  // minified JSON of each member, empty when absent
  std::string opset_version;
  std::string verifiers;
  std::string torch_version;
  std::string guards_code;
  std::string graph_module_metadata;
  std::string module_call_graph;
  std::string treespec_namedtuple_fields;
  std::vector<std::string> range_constraints;
  std::vector<std::string> single_tensor_return_graphs;
  NoneStyle style;
};

std::string extras_key(std::string_view model);  // "torch.export/<model>"
std::string extras_to_json(const TorchExtras& extras);
Result<TorchExtras> extras_from_json(std::string_view text);

// The extras of graph `model` in `program`, or defaults (nullopt) when it carries none.
Result<std::optional<TorchExtras>> find_extras(const fb::ProgramT& program, std::string_view model);

}  // namespace nrt::torch_export
