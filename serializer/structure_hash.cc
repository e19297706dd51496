#include "serializer/structure_hash.h"

#include <algorithm>
#include <optional>
#include <set>
#include <type_traits>

#include "serializer/argument_values.h"
#include "serializer/repr_addresses.h"
#include "serializer/schema_access.h"

namespace nrt {
namespace {

// Record tags keep different kinds of records from ever sharing an encoding.
enum Tag : uint64_t {
  kTagProgram = 1,
  kTagGraph,
  kTagInput,
  kTagNode,
  kTagOutputSlot,
  kTagSignature,
  kTagMesh,
  kTagGroup,
  kTagTensorMeta,
  kTagValueType,
  kTagArgument,
  kTagRangeConstraint,
  kTagAbsent,
};

class StructureHasher {
 public:
  StructureHasher(const fb::Program& program, HashAlgorithm algorithm)
      : program_(program), algorithm_(algorithm), graphs_(vector_size(program.graphs())) {}

  StructureDigests run() {
    StructureDigests out;
    StreamHasher h(algorithm_);
    h.u64(kTagProgram);
    // Entry points by name: their order in the file is layout, their names are how callers pick them.
    std::vector<std::pair<std::string, uint32_t>> entries;
    for (uint32_t g : elements(program_.entry_points())) entries.emplace_back(program_.graphs()->Get(g)->name()->str(), g);
    std::sort(entries.begin(), entries.end());
    h.u64(entries.size());
    for (const auto& [name, g] : entries) {
      h.str(name);
      h.digest(graph(g).graph);
    }
    // Meshes, groups and range constraints as sorted multisets of their encodings.
    std::vector<Digest> meshes, groups, ranges;
    for (uint32_t m = 0; m < vector_size(program_.meshes()); ++m) meshes.push_back(mesh_digest(m));
    for (uint32_t g = 0; g < vector_size(program_.process_groups()); ++g) groups.push_back(group_digest(g));
    for (uint32_t r = 0; r < vector_size(program_.range_constraints()); ++r) {
      const auto* rc = program_.range_constraints()->Get(r);
      StreamHasher rh(algorithm_);
      rh.u64(kTagRangeConstraint);
      string(rh, rc->symbol());
      optional_i64(rh, rc->min());
      optional_i64(rh, rc->max());
      ranges.push_back(rh.finish());
    }
    for (auto* list : {&meshes, &groups, &ranges}) {
      std::sort(list->begin(), list->end());
      h.u64(list->size());
      for (const auto& d : *list) h.digest(d);
    }
    out.program = h.finish();
    for (uint32_t g = 0; g < graphs_.size(); ++g) out.graphs.push_back(graph(g));
    out.unstable_reprs.assign(unstable_.begin(), unstable_.end());
    return out;
  }

 private:
  void string(StreamHasher& h, const flatbuffers::String* s) {
    if (s == nullptr) {
      h.u64(kTagAbsent);
      return;
    }
    if (s->string_view().find(" at 0x") == std::string_view::npos) {  // the common case: no repr
      h.str(s->string_view());
      return;
    }
    bool changed = false;
    std::string canonical = canonicalize_reprs(s->string_view(), &changed);
    if (changed) unstable_.insert(s->str());
    h.str(canonical);
  }

  static void optional_i64(StreamHasher& h, flatbuffers::Optional<int64_t> v) {
    h.u64(v.has_value() ? 1 : 0);
    if (v) h.i64(*v);
  }

  void sym_dim(StreamHasher& h, const fb::SymDim* d) {
    if (d == nullptr) {
      h.u64(kTagAbsent);
      return;
    }
    // A symbolic dimension is its expression; its hint is an example value, not structure.
    if (d->expr()) {
      h.u64(1);
      string(h, d->expr());
    } else {
      h.u64(0);
      h.i64(d->literal());
    }
  }

  void sym_dims(StreamHasher& h, const flatbuffers::Vector<flatbuffers::Offset<fb::SymDim>>* dims) {
    h.u64(vector_size(dims));
    for (uint32_t i = 0; i < vector_size(dims); ++i) sym_dim(h, dims->Get(i));
  }

  void device(StreamHasher& h, const fb::Device* d) {
    if (d == nullptr) {  // absent means cpu
      h.i64(static_cast<int64_t>(fb::DeviceType::CPU));
      h.i64(-1);
      return;
    }
    h.i64(static_cast<int64_t>(d->type()));
    h.i64(d->index());
  }

  void tensor_meta(StreamHasher& h, const fb::TensorMeta* m) {
    h.u64(kTagTensorMeta);
    if (m == nullptr) {
      h.u64(kTagAbsent);
      return;
    }
    h.i64(static_cast<int64_t>(m->dtype()));
    sym_dims(h, m->sizes());
    sym_dims(h, m->strides());
    sym_dim(h, m->storage_offset());
    device(h, m->device());
    h.i64(static_cast<int64_t>(m->layout()));
    h.u64(m->requires_grad());
  }

  Digest mesh_digest(uint32_t index) {
    if (mesh_memo_.size() <= index) mesh_memo_.resize(vector_size(program_.meshes()));
    if (!mesh_memo_[index]) mesh_memo_[index] = compute_mesh_digest(index);
    return *mesh_memo_[index];
  }

  Digest group_digest(uint32_t index) {
    if (group_memo_.size() <= index) group_memo_.resize(vector_size(program_.process_groups()));
    if (!group_memo_[index]) group_memo_[index] = compute_group_digest(index);
    return *group_memo_[index];
  }

  Digest compute_mesh_digest(uint32_t index) {
    const auto* m = program_.meshes()->Get(index);
    StreamHasher h(algorithm_);
    h.u64(kTagMesh);
    h.i64(static_cast<int64_t>(m->device_type()));
    h.u64(vector_size(m->shape()));
    for (int64_t e : elements(m->shape())) h.i64(e);
    h.u64(vector_size(m->dim_names()));
    for (uint32_t i = 0; i < vector_size(m->dim_names()); ++i) string(h, m->dim_names()->Get(i));
    h.u64(vector_size(m->ranks()));
    for (int32_t r : elements(m->ranks())) h.i64(r);
    return h.finish();  // the mesh's own name is a label, not structure
  }

  Digest compute_group_digest(uint32_t index) {
    const auto* g = program_.process_groups()->Get(index);
    StreamHasher h(algorithm_);
    h.u64(kTagGroup);
    string(h, g->name());  // collectives find their group by this name
    h.u64(vector_size(g->ranks()));
    for (int32_t r : elements(g->ranks())) h.i64(r);  // absent: the whole world
    string(h, g->backend());
    if (g->mesh() >= 0) {
      h.u64(1);
      h.digest(mesh_digest(static_cast<uint32_t>(g->mesh())));
      h.i64(g->mesh_dim());
    } else {
      h.u64(0);
    }
    return h.finish();
  }

  void value_type(StreamHasher& h, const fb::Value* v) {
    h.u64(kTagValueType);
    h.i64(static_cast<int64_t>(v->kind()));
    tensor_meta(h, v->tensor());
    if (const auto* d = v->dtensor()) {
      h.u64(1);
      h.digest(mesh_digest(d->mesh()));
      h.u64(vector_size(d->placements()));
      for (const auto* p : elements(d->placements())) {
        h.i64(static_cast<int64_t>(p->kind()));
        h.i64(static_cast<int64_t>(p->reduce_op()));
        h.i64(p->dim());
        h.i64(p->split_factor());
      }
      sym_dims(h, d->global_sizes());
      sym_dims(h, d->global_strides());
    } else {
      h.u64(0);
    }
    h.u64(vector_size(v->elements()));
    for (uint32_t i = 0; i < vector_size(v->elements()); ++i) tensor_meta(h, v->elements()->Get(i));
    if (const auto* s = v->sym()) {
      h.u64(1);
      string(h, s->expr());
    } else {
      h.u64(0);
    }
    string(h, v->class_fqn());
    if (v->process_group() >= 0) {
      h.u64(1);
      h.digest(group_digest(static_cast<uint32_t>(v->process_group())));
    } else {
      h.u64(0);
    }
    if (v->graph() >= 0) {
      h.u64(1);
      h.digest(graph(static_cast<uint32_t>(v->graph())).graph);
    } else {
      h.u64(0);
    }
  }

  // The current graph's state while it is being hashed.
  struct GraphState {
    const fb::Graph* graph = nullptr;
    std::vector<Digest> identity;
    std::vector<bool> defined;
  };

  void ref(StreamHasher& h, GraphState& s, int64_t value) {
    if (value < 0) {
      h.u64(kTagAbsent);
      return;
    }
    h.digest(s.identity[static_cast<size_t>(value)]);
  }

  // A list of symbolic items: each a reference (by identity) or a literal.
  template <typename Item>
  void sym_items(StreamHasher& h, GraphState& s, const flatbuffers::Vector<const Item*>* items) {
    h.u64(vector_size(items));
    for (uint32_t i = 0; i < vector_size(items); ++i) {
      const auto* item = items->Get(i);
      if (item->value() >= 0) {
        ref(h, s, item->value());
        continue;
      }
      h.u64(kTagAbsent);
      if constexpr (std::is_same_v<Item, fb::SymFloatItem>) {
        h.f64(item->literal());
      } else if constexpr (std::is_same_v<Item, fb::SymBoolItem>) {
        h.u64(item->literal());
      } else {
        h.i64(item->literal());
      }
    }
  }

  void argument(StreamHasher& h, GraphState& s, fb::Argument type, const void* arg) {
    using A = fb::Argument;
    h.u64(kTagArgument);
    h.u64(static_cast<uint64_t>(type));  // union tags are append-only, so stable
    switch (type) {
      case A::NONE:
      case A::NoneArg:
        return;
      case A::TensorArg:
        return ref(h, s, static_cast<const fb::TensorArg*>(arg)->value());
      case A::TensorListArg: {
        const auto* values = static_cast<const fb::TensorListArg*>(arg)->values();
        h.u64(vector_size(values));
        for (uint32_t i = 0; i < vector_size(values); ++i) ref(h, s, values->Get(i));
        return;
      }
      case A::IntArg:
        return h.i64(static_cast<const fb::IntArg*>(arg)->value());
      case A::IntListArg: {
        const auto* values = static_cast<const fb::IntListArg*>(arg)->values();
        h.u64(vector_size(values));
        for (uint32_t i = 0; i < vector_size(values); ++i) h.i64(values->Get(i));
        return;
      }
      case A::FloatArg: {
        auto v = static_cast<const fb::FloatArg*>(arg)->value();
        h.u64(v.has_value());
        if (v) h.f64(*v);
        return;
      }
      case A::FloatListArg: {
        const auto* values = static_cast<const fb::FloatListArg*>(arg)->values();
        h.u64(vector_size(values));
        for (uint32_t i = 0; i < vector_size(values); ++i) h.f64(values->Get(i));
        return;
      }
      case A::StringArg:
        return string(h, static_cast<const fb::StringArg*>(arg)->value());
      case A::StringListArg: {
        const auto* values = static_cast<const fb::StringListArg*>(arg)->values();
        h.u64(vector_size(values));
        for (uint32_t i = 0; i < vector_size(values); ++i) string(h, values->Get(i));
        return;
      }
      case A::SymIntArg: {
        const auto* a = static_cast<const fb::SymIntArg*>(arg);
        if (a->value() >= 0) return ref(h, s, a->value());
        h.u64(kTagAbsent);
        return h.i64(a->literal());
      }
      case A::SymIntListArg:
        return sym_items(h, s, static_cast<const fb::SymIntListArg*>(arg)->items());
      case A::ScalarTypeArg:
        return h.i64(static_cast<int64_t>(static_cast<const fb::ScalarTypeArg*>(arg)->value()));
      case A::MemoryFormatArg:
        return h.i64(static_cast<int64_t>(static_cast<const fb::MemoryFormatArg*>(arg)->value()));
      case A::LayoutArg:
        return h.i64(static_cast<int64_t>(static_cast<const fb::LayoutArg*>(arg)->value()));
      case A::DeviceArg:
        return device(h, static_cast<const fb::DeviceArg*>(arg)->value());
      case A::BoolArg:
        return h.u64(static_cast<const fb::BoolArg*>(arg)->value());
      case A::BoolListArg: {
        const auto* values = static_cast<const fb::BoolListArg*>(arg)->values();
        h.u64(vector_size(values));
        for (uint32_t i = 0; i < vector_size(values); ++i) h.u64(values->Get(i) != 0);
        return;
      }
      case A::SymBoolArg: {
        const auto* a = static_cast<const fb::SymBoolArg*>(arg);
        if (a->value() >= 0) return ref(h, s, a->value());
        h.u64(kTagAbsent);
        return h.u64(a->literal());
      }
      case A::SymBoolListArg:
        return sym_items(h, s, static_cast<const fb::SymBoolListArg*>(arg)->items());
      case A::OptionalTensorListArg: {
        const auto* values = static_cast<const fb::OptionalTensorListArg*>(arg)->values();
        h.u64(vector_size(values));
        for (uint32_t i = 0; i < vector_size(values); ++i) ref(h, s, values->Get(i));
        return;
      }
      case A::GraphArg:
        return h.digest(graph(static_cast<const fb::GraphArg*>(arg)->graph()).graph);
      case A::CustomObjArg: {
        const auto* a = static_cast<const fb::CustomObjArg*>(arg);
        ref(h, s, a->value());
        return string(h, a->class_fqn());
      }
      case A::OperatorArg: {
        const auto* op = program_.operators()->Get(static_cast<const fb::OperatorArg*>(arg)->op());
        string(h, op->name());
        return string(h, op->overload());
      }
      case A::SymFloatArg: {
        const auto* a = static_cast<const fb::SymFloatArg*>(arg);
        if (a->value() >= 0) return ref(h, s, a->value());
        h.u64(kTagAbsent);
        h.u64(a->literal().has_value());
        if (a->literal()) h.f64(*a->literal());
        return;
      }
      case A::SymFloatListArg:
        return sym_items(h, s, static_cast<const fb::SymFloatListArg*>(arg)->items());
      case A::OptionalTensorArg:
        return ref(h, s, static_cast<const fb::OptionalTensorArg*>(arg)->value());
      case A::ComplexArg: {
        const auto* a = static_cast<const fb::ComplexArg*>(arg);
        h.f64(a->real().value_or(0.0));
        return h.f64(a->imag().value_or(0.0));
      }
      case A::NestedTensorsArg: {
        const auto* lists = static_cast<const fb::NestedTensorsArg*>(arg)->lists();
        h.u64(vector_size(lists));
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          const auto* values = lists->Get(i)->values();
          h.u64(vector_size(values));
          for (uint32_t j = 0; j < vector_size(values); ++j) ref(h, s, values->Get(j));
        }
        return;
      }
      case A::IntListListArg: {
        const auto* lists = static_cast<const fb::IntListListArg*>(arg)->lists();
        h.u64(vector_size(lists));
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          const auto* values = lists->Get(i)->values();
          h.u64(vector_size(values));
          for (uint32_t j = 0; j < vector_size(values); ++j) h.i64(values->Get(j));
        }
        return;
      }
      case A::StringToArgumentArg: {
        // A map: entries sorted by key so that key order never matters.
        const auto* entries = static_cast<const fb::StringToArgumentArg*>(arg)->entries();
        std::vector<const fb::StringToArgumentEntry*> sorted;
        for (uint32_t i = 0; i < vector_size(entries); ++i) sorted.push_back(entries->Get(i));
        std::stable_sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) {
          return (a->key() ? a->key()->string_view() : "") < (b->key() ? b->key()->string_view() : "");
        });
        h.u64(sorted.size());
        for (const auto* e : sorted) {
          string(h, e->key());
          argument(h, s, e->value_type(), e->value());
        }
        return;
      }
      case A::FloatListListArg: {
        const auto* lists = static_cast<const fb::FloatListListArg*>(arg)->lists();
        h.u64(vector_size(lists));
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          const auto* values = lists->Get(i)->values();
          h.u64(vector_size(values));
          for (uint32_t j = 0; j < vector_size(values); ++j) h.f64(values->Get(j));
        }
        return;
      }
      case A::ProcessGroupArg:
        return h.digest(group_digest(static_cast<const fb::ProcessGroupArg*>(arg)->group()));
      case A::ValueArg:
        return ref(h, s, static_cast<const fb::ValueArg*>(arg)->value());
    }
  }

  // Gives each value an argument defines (graph input or node output) its identity.
  void define(GraphState& s, fb::Argument type, const void* arg, const Digest& base, uint64_t slot) {
    const auto values = defined_values(type, arg);
    for (size_t element = 0; element < values.size(); ++element) {
      if (values[element] < 0) continue;
      StreamHasher h(algorithm_);
      h.u64(kTagOutputSlot);
      h.digest(base);
      h.u64(slot);
      h.u64(element);
      s.identity[static_cast<size_t>(values[element])] = h.finish();
      s.defined[static_cast<size_t>(values[element])] = true;
    }
  }

  // The types of the values a defining argument produces.
  void defined_types(StreamHasher& h, const fb::Graph& g, fb::Argument type, const void* arg) {
    const auto values = defined_values(type, arg);
    h.u64(values.size());
    for (int64_t v : values) {
      if (v < 0) {
        h.u64(kTagAbsent);
      } else {
        value_type(h, g.values()->Get(static_cast<uint32_t>(v)));
      }
    }
  }

  const GraphDigests& graph(uint32_t index) {
    if (graphs_[index]) return *graphs_[index];
    const fb::Graph& g = *program_.graphs()->Get(index);
    GraphState s;
    s.graph = &g;
    s.identity.resize(vector_size(g.values()));
    s.defined.resize(vector_size(g.values()));
    GraphDigests out;

    // Graph inputs: identity from position and type (and, for entry points, the input spec).
    std::vector<Digest> input_digests;
    for (uint32_t i = 0; i < vector_size(g.inputs()); ++i) {
      const auto* holder = g.inputs()->Get(i);
      StreamHasher h(algorithm_);
      h.u64(kTagInput);
      h.u64(i);
      defined_types(h, g, holder->arg_type(), holder->arg());
      if (!is_defining(holder->arg_type(), holder->arg())) argument(h, s, holder->arg_type(), holder->arg());
      const Digest d = h.finish();
      input_digests.push_back(d);
      define(s, holder->arg_type(), holder->arg(), d, i);
    }

    Digest last_effect;  // all zero: no effect yet
    last_effect.algorithm = algorithm_;
    for (uint32_t n = 0; n < vector_size(g.nodes()); ++n) {
      const auto* node = g.nodes()->Get(n);
      const auto* op = program_.operators()->Get(node->op());
      StreamHasher h(algorithm_);
      h.u64(kTagNode);
      string(h, op->name());
      string(h, op->overload());
      h.u64(vector_size(node->inputs()));
      for (uint32_t i = 0; i < vector_size(node->inputs()); ++i) {
        const auto* named = node->inputs()->Get(i);
        string(h, named->name());
        h.i64(static_cast<int64_t>(named->kind()));
        argument(h, s, named->arg_type(), named->arg());
      }
      h.u64(vector_size(node->outputs()));
      for (uint32_t i = 0; i < vector_size(node->outputs()); ++i) {
        const auto* holder = node->outputs()->Get(i);
        h.u64(static_cast<uint64_t>(holder->arg_type()));
        defined_types(h, g, holder->arg_type(), holder->arg());
      }
      const bool effectful = has_effects(*op, *node);
      if (effectful) h.digest(last_effect);
      const Digest d = h.finish();
      out.nodes.push_back(d);
      if (effectful) last_effect = d;
      for (uint32_t i = 0; i < vector_size(node->outputs()); ++i) {
        const auto* holder = node->outputs()->Get(i);
        define(s, holder->arg_type(), holder->arg(), d, i);
      }
    }

    StreamHasher sig(algorithm_);
    sig.u64(kTagSignature);
    if (const auto* signature = g.signature()) {
      sig.u64(1);
      sig.u64(vector_size(signature->inputs()));
      for (const auto* spec : elements(signature->inputs())) {
        sig.i64(static_cast<int64_t>(spec->kind()));
        string(sig, spec->target());
        sig.u64(spec->kind() == fb::InputKind::BUFFER ? spec->persistent() : 0);
        if (spec->constant()) argument(sig, s, spec->constant()->arg_type(), spec->constant()->arg());
      }
      sig.u64(vector_size(signature->outputs()));
      for (const auto* spec : elements(signature->outputs())) {
        sig.i64(static_cast<int64_t>(spec->kind()));
        string(sig, spec->target());
      }
    } else {
      sig.u64(0);
    }
    out.signature = sig.finish();

    StreamHasher h(algorithm_);
    h.u64(kTagGraph);
    h.u64(input_digests.size());
    for (const auto& d : input_digests) h.digest(d);
    h.u64(vector_size(g.outputs()));
    for (uint32_t i = 0; i < vector_size(g.outputs()); ++i) {
      const auto* holder = g.outputs()->Get(i);
      argument(h, s, holder->arg_type(), holder->arg());
    }
    h.digest(out.signature);
    std::vector<Digest> sorted = out.nodes;
    std::sort(sorted.begin(), sorted.end());
    h.u64(sorted.size());
    for (const auto& d : sorted) h.digest(d);
    h.digest(last_effect);
    out.graph = h.finish();
    out.values = std::move(s.identity);
    graphs_[index] = std::move(out);
    return *graphs_[index];
  }

  static bool is_defining(fb::Argument type, const void* arg) {
    const auto values = defined_values(type, arg);
    return std::any_of(values.begin(), values.end(), [](int64_t v) { return v >= 0; }) ||
           type == fb::Argument::TensorListArg || type == fb::Argument::OptionalTensorArg;
  }

 public:
  // For diff: one argument or value type with caller-given value identities.
  Digest argument_digest(const fb::Graph& g, fb::Argument type, const void* arg, std::span<const Digest> identities) {
    GraphState s;
    s.graph = &g;
    s.identity.assign(identities.begin(), identities.end());
    StreamHasher h(algorithm_);
    argument(h, s, type, arg);
    return h.finish();
  }
  Digest value_type_digest(const fb::Value& v) {
    StreamHasher h(algorithm_);
    value_type(h, &v);
    return h.finish();
  }

 private:
  const fb::Program& program_;
  HashAlgorithm algorithm_;
  std::vector<std::optional<GraphDigests>> graphs_;
  std::set<std::string> unstable_;
  std::vector<std::optional<Digest>> mesh_memo_, group_memo_;
};

}  // namespace

Digest hash_argument(const fb::Program& program, const fb::Graph& graph, fb::Argument type, const void* arg,
                     std::span<const Digest> identities, HashAlgorithm algorithm) {
  return StructureHasher(program, algorithm).argument_digest(graph, type, arg, identities);
}

Digest hash_value_type(const fb::Program& program, const fb::Value& value, HashAlgorithm algorithm) {
  return StructureHasher(program, algorithm).value_type_digest(value);
}

bool has_effects(const fb::Operator& op, const fb::Node& node) {
  const std::string_view name = op.name()->string_view();
  if (name.starts_with("_c10d_functional::") || name.starts_with("c10d::") || name.starts_with("c10d_functional::")) {
    return true;
  }
  if (name == "with_effects" || name.ends_with(".with_effects")) return true;
  return node.outputs() == nullptr || node.outputs()->size() == 0;
}

StructureDigests hash_structure(const fb::Program& program, HashAlgorithm algorithm) {
  return StructureHasher(program, algorithm).run();
}

}  // namespace nrt
