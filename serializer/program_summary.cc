#include "serializer/program_summary.h"

#include <limits>

#include "serializer/argument_values.h"
#include "serializer/program_text.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt {
namespace {

std::string str(const flatbuffers::String* s) { return s ? printable(s->string_view()) : std::string(); }

std::vector<DimSummary> dims_of(const flatbuffers::Vector<flatbuffers::Offset<fb::SymDim>>* sizes) {
  std::vector<DimSummary> dims;
  for (uint32_t d = 0; d < vector_size(sizes); ++d) {
    const auto* dim = sizes->Get(d);
    DimSummary summary;
    summary.literal = dim->literal();
    if (dim->expr() != nullptr) summary.expr = printable(dim->expr()->string_view());
    dims.push_back(std::move(summary));
  }
  return dims;
}

std::string kind_name(fb::ValueKind kind) {
  const char* name = fb::EnumNameValueKind(kind);
  if (name == nullptr || name[0] == '\0') return "unknown";
  std::string out = name;
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

SlotSummary summarize_slot(const fb::ArgumentHolder& holder, const fb::Graph& graph, const fb::Program& program) {
  SlotSummary slot;
  const int64_t index = single_value_of(holder.arg_type(), holder.arg());
  if (index < 0 || index >= static_cast<int64_t>(vector_size(graph.values()))) {
    slot.kind = holder.arg_type() == fb::Argument::TensorListArg ? "tensor_list" : "constant";
    slot.type = render_definition(holder.arg_type(), holder.arg(), graph, program);
    return slot;
  }
  const fb::Value& value = *graph.values()->Get(static_cast<uint32_t>(index));
  slot.name = str(value.name());
  slot.kind = kind_name(value.kind());
  slot.type = render_type(value, program);
  if (is_tensor_kind(value.kind()) && value.tensor() != nullptr) {
    slot.dtype = std::string(short_name(value.tensor()->dtype()));
    slot.shape = dims_of(value.tensor()->sizes());
    slot.device = render_device(value.tensor()->device());
  }
  if (value.kind() == fb::ValueKind::DTENSOR && value.dtensor() != nullptr) {
    const auto* spec = value.dtensor();
    DTensorSummary dtensor;
    dtensor.mesh = spec->mesh();
    for (uint32_t p = 0; p < vector_size(spec->placements()); ++p) {
      dtensor.placements.push_back(render_placement(*spec->placements()->Get(p)));
    }
    dtensor.global_shape = dims_of(spec->global_sizes());
    slot.dtensor = std::move(dtensor);
  }
  return slot;
}

GraphSummary summarize_graph(const fb::Graph& graph, const fb::Program& program) {
  GraphSummary summary;
  summary.name = str(graph.name());
  summary.num_nodes = vector_size(graph.nodes());
  summary.num_values = vector_size(graph.values());
  for (uint32_t n = 0; n < vector_size(graph.nodes()); ++n) {
    const uint32_t op = graph.nodes()->Get(n)->op();
    const std::string target =
        op < vector_size(program.operators()) ? render_target(*program.operators()->Get(op)) : "?op" + std::to_string(op);
    ++summary.ops[target];
  }
  for (uint32_t i = 0; i < vector_size(graph.inputs()); ++i) {
    summary.inputs.push_back(summarize_slot(*graph.inputs()->Get(i), graph, program));
  }
  for (uint32_t i = 0; i < vector_size(graph.outputs()); ++i) {
    summary.outputs.push_back(summarize_slot(*graph.outputs()->Get(i), graph, program));
  }
  // Verification guarantees one spec per slot for a signature that is present; check anyway.
  if (const auto* signature = graph.signature()) {
    if (vector_size(signature->inputs()) == summary.inputs.size()) {
      for (uint32_t i = 0; i < summary.inputs.size(); ++i) {
        const auto* spec = signature->inputs()->Get(i);
        summary.inputs[i].signature_kind = render_input_kind(spec->kind());
        if (spec->target() != nullptr && spec->target()->size() > 0) summary.inputs[i].target = str(spec->target());
      }
    }
    if (vector_size(signature->outputs()) == summary.outputs.size()) {
      for (uint32_t i = 0; i < summary.outputs.size(); ++i) {
        const auto* spec = signature->outputs()->Get(i);
        summary.outputs[i].signature_kind = render_output_kind(spec->kind());
        if (spec->target() != nullptr && spec->target()->size() > 0) summary.outputs[i].target = str(spec->target());
      }
    }
  }
  return summary;
}

// Elements of a weight; weights have literal sizes once verified. Saturates instead of wrapping:
// a zero-stride view may claim more elements than 64 bits count.
uint64_t numel_of(const fb::TensorMeta& meta) {
  uint64_t numel = 1;
  bool saturated = false;
  for (uint32_t d = 0; d < vector_size(meta.sizes()); ++d) {
    const int64_t size = meta.sizes()->Get(d)->literal();
    if (size <= 0) return 0;
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(size), &numel)) saturated = true;
  }
  return saturated ? std::numeric_limits<uint64_t>::max() : numel;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<uint64_t>::max() : sum;
}

}  // namespace

ProgramSummary summarize_program(const fb::Program& program) {
  ProgramSummary summary;
  if (const auto* version = program.schema_version()) {
    summary.schema_version = std::to_string(version->major()) + "." + std::to_string(version->minor());
  }
  summary.producer = str(program.producer());

  const uint32_t num_graphs = vector_size(program.graphs());
  for (uint32_t g = 0; g < num_graphs; ++g) {
    summary.graphs.push_back(summarize_graph(*program.graphs()->Get(g), program));
  }
  for (uint32_t e = 0; e < vector_size(program.entry_points()); ++e) {
    const uint32_t g = program.entry_points()->Get(e);
    if (g < num_graphs) summary.graphs[g].entry_point = true;
  }

  for (uint32_t m = 0; m < vector_size(program.meshes()); ++m) {
    const auto* mesh = program.meshes()->Get(m);
    MeshSummary out;
    out.name = str(mesh->name());
    out.device_type = render_device_type(mesh->device_type());
    if (mesh->shape()) out.shape.assign(mesh->shape()->begin(), mesh->shape()->end());
    for (uint32_t d = 0; d < vector_size(mesh->dim_names()); ++d) out.dim_names.push_back(str(mesh->dim_names()->Get(d)));
    if (mesh->ranks()) out.ranks.assign(mesh->ranks()->begin(), mesh->ranks()->end());
    summary.meshes.push_back(std::move(out));
  }

  for (uint32_t p = 0; p < vector_size(program.process_groups()); ++p) {
    const auto* group = program.process_groups()->Get(p);
    ProcessGroupSummary out;
    out.name = str(group->name());
    if (group->ranks()) out.ranks.assign(group->ranks()->begin(), group->ranks()->end());
    out.backend = str(group->backend());
    out.mesh = group->mesh();
    out.mesh_dim = group->mesh_dim();
    summary.process_groups.push_back(std::move(out));
  }

  summary.num_storages = vector_size(program.storages());
  for (uint32_t s = 0; s < summary.num_storages; ++s) {
    summary.weight_bytes = saturating_add(summary.weight_bytes, program.storages()->Get(s)->size());
  }
  summary.num_weights = vector_size(program.weights());
  for (uint32_t w = 0; w < summary.num_weights; ++w) {
    const auto* weight = program.weights()->Get(w);
    if (weight->is_parameter() && weight->meta() != nullptr) {
      summary.num_parameters = saturating_add(summary.num_parameters, numel_of(*weight->meta()));
    }
  }

  for (uint32_t k = 0; k < vector_size(program.metadata()); ++k) {
    const auto* entry = program.metadata()->Get(k);
    summary.metadata.emplace_back(str(entry->key()), str(entry->value()));
  }
  return summary;
}

}  // namespace nrt
