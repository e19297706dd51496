#include "executor/runtime/execution_plan.h"

#include <algorithm>
#include <map>
#include <set>

#include "executor/runtime/convolution_fusion.h"
#include "executor/runtime/rms_norm_fusion.h"
#include "executor/runtime/attention_operand_views.h"
#include "executor/runtime/identity_conversions.h"
#include "executor/runtime/repeated_kv_fusion.h"
#include "executor/runtime/rotary_fusion.h"
#include "executor/runtime/silu_mul_fusion.h"
#include "serializer/argument_values.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

// FNV-1a 64 of "<graph>/<node>": a seeded draw's stream depends on names only, never on the
// node's place in the schedule.
uint64_t random_stream_of(std::string_view graph, std::string_view node) {
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](std::string_view text) {
    for (char c : text) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 0x100000001b3ull;
    }
  };
  mix(graph);
  mix("/");
  mix(node);
  return hash;
}

Result<Device> device_from(const fb::Device* device) {
  if (device == nullptr) return Device{};
  const auto kind = from_schema(device->type());
  if (!kind) {
    const char* name = fb::EnumNameDeviceType(device->type());
    return make_error(ErrorCode::NotSupported,
                      std::string("device type ") + (name && name[0] ? name : "?") + " is not supported");
  }
  return Device{*kind, *kind == DeviceKind::kCpu ? 0 : std::max(device->index(), 0)};
}

class PlanBuilder {
 public:
  PlanBuilder(const fb::Program& program, uint32_t graph_index, Device device, const KernelRegistry& registry)
      : program_(program), graph_(*program.graphs()->Get(graph_index)), registry_(registry) {
    plan_.program = &program;
    plan_.graph_index = graph_index;
    plan_.graph_name = graph_.name()->str();
    plan_.device = device;
  }

  Result<ExecutionPlan> build() {
    NRT_RETURN_IF_ERROR(init_values());
    NRT_RETURN_IF_ERROR(bind_kernels());
    NRT_RETURN_IF_ERROR(plan_inputs());
    const uint32_t num_nodes = vector_size(graph_.nodes());
    plan_.nodes.reserve(num_nodes);
    for (uint32_t n = 0; n < num_nodes; ++n) {
      NRT_RETURN_IF_ERROR(plan_node(n));
    }
    NRT_RETURN_IF_ERROR(plan_outputs());
    fuse_convolution_epilogues(plan_, registry_);
    fuse_rms_norms(plan_, registry_);
    fuse_rotary_embeddings(plan_, registry_);
    fuse_silu_products(plan_, registry_);
    fuse_repeated_key_values(plan_, registry_);
    view_identity_conversions(plan_, registry_);  // after the RMSNorm's, which takes its own
    view_attention_operands(plan_, registry_);
    finish_lifetimes();
    mark_deferred_waits();
    return std::move(plan_);
  }

 private:
  std::string where() const {
    std::string w = "graph '" + plan_.graph_name + "'";
    if (node_ >= 0) {
      const auto* node = graph_.nodes()->Get(static_cast<uint32_t>(node_));
      w += " node " + std::to_string(node_);
      if (node->name()) w += " '" + node->name()->str() + "'";
    }
    return w + ": ";
  }
  Error fail(const std::string& message) const { return make_error(ErrorCode::InvalidArgument, where() + message); }
  // Something the format allows that the executor cannot do.
  Error unsupported(const std::string& message) const { return make_error(ErrorCode::NotSupported, where() + message); }

  Status init_values() {
    const uint32_t num_values = vector_size(graph_.values());
    plan_.values.resize(num_values);
    for (uint32_t v = 0; v < num_values; ++v) {
      const auto* value = graph_.values()->Get(v);
      ValueInfo& info = plan_.values[v];
      info.name = value->name()->str();
      info.kind = value->kind();
      const fb::TensorMeta* meta = value->tensor();
      if (meta != nullptr && is_tensor_kind(info.kind)) {
        info.has_meta = true;
        NRT_TRY(dtype, checked_from_schema(meta->dtype(), "value '" + info.name + "' dtype"));
        info.dtype = *dtype;
        auto planned_dim = [](const fb::SymDim* dim) {
          PlannedDim planned;
          planned.literal = dim->literal();
          if (dim->expr() != nullptr) planned.expr = dim->expr()->str();
          planned.hint = dim->hint();
          return planned;
        };
        for (uint32_t d = 0; d < vector_size(meta->sizes()); ++d) info.sizes.push_back(planned_dim(meta->sizes()->Get(d)));
        if (vector_size(meta->strides()) == vector_size(meta->sizes())) {
          for (uint32_t d = 0; d < vector_size(meta->strides()); ++d) {
            info.strides.push_back(planned_dim(meta->strides()->Get(d)));
          }
        }
      }
      if (value->sym() != nullptr) {
        if (value->sym()->expr()) info.sym_expr = value->sym()->expr()->str();
        info.sym_hint = value->sym()->int_hint();
      }
      if (info.kind == fb::ValueKind::PROCESS_GROUP && value->process_group() >= 0) {
        const auto* group = program_.process_groups()->Get(static_cast<uint32_t>(value->process_group()));
        info.process_group = ProcessGroupRef{group->name()->str(), nullptr};
      }
    }
    return Status::Ok();
  }

  // Chooses every node's kernel; all missing targets are reported together.
  Status bind_kernels() {
    std::map<std::string, std::vector<std::string>> missing;  // target -> node names
    kernels_.resize(vector_size(graph_.nodes()));
    targets_.resize(vector_size(graph_.nodes()));
    in_place_.resize(vector_size(graph_.nodes()));
    for (uint32_t n = 0; n < vector_size(graph_.nodes()); ++n) {
      const auto* node = graph_.nodes()->Get(n);
      targets_[n] = operator_target(*program_.operators()->Get(node->op()));
      ResolvedKernel resolved = resolve_kernel(registry_, targets_[n], plan_.device.kind);
      if (resolved.kernel == nullptr) {
        missing[targets_[n]].push_back(node->name() ? node->name()->str() : "#" + std::to_string(n));
      } else {
        kernels_[n] = *resolved.kernel;
        if (resolved.mutation != MutationKind::kNone) in_place_[n] = std::move(resolved);
      }
    }
    if (missing.empty()) return {};
    std::string message = "graph '" + plan_.graph_name + "': no " + plan_.device.to_string() + " kernel for " +
                          std::to_string(missing.size()) + (missing.size() == 1 ? " target" : " targets") + ":";
    for (const auto& [target, nodes] : missing) {
      message += "\n  " + target + " (";
      message += nodes.size() == 1 ? "node " : std::to_string(nodes.size()) + " nodes: ";
      for (size_t i = 0; i < nodes.size() && i < 3; ++i) message += (i ? ", " : "") + nodes[i];
      if (nodes.size() > 3) message += ", ...";
      message += ")";
    }
    return make_error(ErrorCode::MissingKernel, message);
  }

  int32_t new_slot() { return plan_.num_slots++; }

  int32_t constant_slot(RuntimeValue value) {
    const int32_t slot = new_slot();
    plan_.constants.push_back({slot, std::move(value)});
    return slot;
  }

  void define(uint32_t value, int32_t slot, int64_t step) {
    ValueInfo& info = plan_.values[value];
    info.slot = slot;
    info.def_step = step;
    info.last_use = step;
  }

  void use(int64_t value, int64_t step) {
    ValueInfo& info = plan_.values[static_cast<size_t>(value)];
    info.last_use = std::max(info.last_use, step);
  }

  // A schema enum argument as the runtime's own enum (core/schema_enums.h).
  template <typename SchemaEnum>
  Result<std::optional<RuntimeValue>> runtime_enum(SchemaEnum value, const std::string& what) const {
    NRT_TRY(ours, checked_from_schema(value, where() + what));
    return std::optional<RuntimeValue>(RuntimeValue{*ours});
  }

  // A constant argument (no reference) as a RuntimeValue; nullopt when it is a reference.
  Result<std::optional<RuntimeValue>> constant(fb::Argument type, const void* arg, const std::string& what) {
    using A = fb::Argument;
    using Opt = std::optional<RuntimeValue>;
    switch (type) {
      case A::NONE:
      case A::NoneArg:
        return Opt(RuntimeValue{});
      case A::IntArg:
        return Opt(RuntimeValue{static_cast<const fb::IntArg*>(arg)->value()});
      case A::IntListArg: {
        const auto* values = static_cast<const fb::IntListArg*>(arg)->values();
        return Opt(RuntimeValue{values ? std::vector<int64_t>(values->begin(), values->end()) : std::vector<int64_t>{}});
      }
      case A::FloatArg: {
        auto v = static_cast<const fb::FloatArg*>(arg)->value();
        return v ? Opt(RuntimeValue{*v}) : Opt(RuntimeValue{});
      }
      case A::FloatListArg: {
        const auto* values = static_cast<const fb::FloatListArg*>(arg)->values();
        return Opt(RuntimeValue{values ? std::vector<double>(values->begin(), values->end()) : std::vector<double>{}});
      }
      case A::StringArg: {
        const auto* v = static_cast<const fb::StringArg*>(arg)->value();
        return Opt(RuntimeValue{v ? v->str() : std::string()});
      }
      case A::StringListArg: {
        std::vector<std::string> out;
        const auto* values = static_cast<const fb::StringListArg*>(arg)->values();
        for (uint32_t i = 0; i < vector_size(values); ++i) out.push_back(values->Get(i)->str());
        return Opt(RuntimeValue{std::move(out)});
      }
      case A::SymIntArg: {
        const auto* a = static_cast<const fb::SymIntArg*>(arg);
        if (a->value() >= 0) return Opt{};
        return Opt(RuntimeValue{a->literal()});
      }
      case A::SymFloatArg: {
        const auto* a = static_cast<const fb::SymFloatArg*>(arg);
        if (a->value() >= 0) return Opt{};
        return a->literal() ? Opt(RuntimeValue{*a->literal()}) : Opt(RuntimeValue{});
      }
      case A::SymBoolArg: {
        const auto* a = static_cast<const fb::SymBoolArg*>(arg);
        if (a->value() >= 0) return Opt{};
        return Opt(RuntimeValue{a->literal()});
      }
      case A::ScalarTypeArg:
        return runtime_enum(static_cast<const fb::ScalarTypeArg*>(arg)->value(), what);
      case A::MemoryFormatArg:
        return runtime_enum(static_cast<const fb::MemoryFormatArg*>(arg)->value(), what);
      case A::LayoutArg:
        return runtime_enum(static_cast<const fb::LayoutArg*>(arg)->value(), what);
      case A::DeviceArg: {
        auto device = device_from(static_cast<const fb::DeviceArg*>(arg)->value());
        if (!device) return fail(what + ": " + device.error().message);
        return Opt(RuntimeValue{*device});
      }
      case A::BoolArg:
        return Opt(RuntimeValue{static_cast<const fb::BoolArg*>(arg)->value()});
      case A::BoolListArg: {
        const auto* values = static_cast<const fb::BoolListArg*>(arg)->values();
        std::vector<bool> out;
        for (uint32_t i = 0; i < vector_size(values); ++i) out.push_back(values->Get(i) != 0);
        return Opt(RuntimeValue{std::move(out)});
      }
      case A::OptionalTensorArg:
        if (static_cast<const fb::OptionalTensorArg*>(arg)->value() < 0) return Opt(RuntimeValue{});
        return Opt{};
      case A::ProcessGroupArg: {
        const auto* group = program_.process_groups()->Get(static_cast<const fb::ProcessGroupArg*>(arg)->group());
        return Opt(RuntimeValue{ProcessGroupRef{group->name()->str(), nullptr}});
      }
      case A::GraphArg: {
        const uint32_t index = static_cast<const fb::GraphArg*>(arg)->graph();
        return Opt(RuntimeValue{GraphRef{index, program_.graphs()->Get(index)->name()->str(), nullptr}});
      }
      case A::TensorArg:
      case A::TensorListArg:
      case A::SymIntListArg:
      case A::SymFloatListArg:
      case A::SymBoolListArg:
      case A::OptionalTensorListArg:
      case A::ValueArg:
        return Opt{};
      default:
        return unsupported(what + " is a " + fb::EnumNameArgument(type) + ", which the executor cannot pass to a kernel");
    }
  }

  // The slot holding argument `arg` at `step`; references record a use.
  Result<int32_t> argument_slot(fb::Argument type, const void* arg, int64_t step, const std::string& what,
                                std::vector<GatherStep>* gathers, std::vector<int32_t>* tensor_refs) {
    using A = fb::Argument;
    auto value_slot = [&](int64_t value) -> Result<int32_t> {
      const ValueInfo& info = plan_.values[static_cast<size_t>(value)];
      if (info.slot < 0) return fail(what + " names value '" + info.name + "', which is never defined");
      use(value, step);
      return info.slot;
    };
    switch (type) {
      case A::TensorArg:
        tensor_refs->push_back(static_cast<int32_t>(static_cast<const fb::TensorArg*>(arg)->value()));
        return value_slot(static_cast<const fb::TensorArg*>(arg)->value());
      case A::OptionalTensorArg: {
        const int32_t v = static_cast<const fb::OptionalTensorArg*>(arg)->value();
        if (v >= 0) {
          tensor_refs->push_back(v);
          return value_slot(v);
        }
        break;
      }
      case A::SymIntArg: {
        const int32_t v = static_cast<const fb::SymIntArg*>(arg)->value();
        if (v >= 0) return value_slot(v);
        break;
      }
      case A::SymFloatArg: {
        const int32_t v = static_cast<const fb::SymFloatArg*>(arg)->value();
        if (v >= 0) return value_slot(v);
        break;
      }
      case A::SymBoolArg: {
        const int32_t v = static_cast<const fb::SymBoolArg*>(arg)->value();
        if (v >= 0) return value_slot(v);
        break;
      }
      case A::ValueArg: {
        const uint32_t v = static_cast<const fb::ValueArg*>(arg)->value();
        const auto kind = plan_.values[v].kind;
        if (is_tensor_kind(kind)) {
          tensor_refs->push_back(static_cast<int32_t>(v));
        }
        return value_slot(v);
      }
      case A::TensorListArg:
      case A::OptionalTensorListArg: {
        GatherStep gather;
        gather.kind = type == A::TensorListArg ? GatherStep::Kind::kTensors : GatherStep::Kind::kOptionalTensors;
        std::vector<int64_t> items;
        if (type == A::TensorListArg) {
          const auto* values = static_cast<const fb::TensorListArg*>(arg)->values();
          for (uint32_t i = 0; i < vector_size(values); ++i) items.push_back(values->Get(i));
        } else {
          const auto* values = static_cast<const fb::OptionalTensorListArg*>(arg)->values();
          for (uint32_t i = 0; i < vector_size(values); ++i) items.push_back(values->Get(i));
        }
        for (int64_t v : items) {
          GatherStep::Item item;
          if (v >= 0) {
            NRT_TRY(slot, value_slot(v));
            item.slot = *slot;
            tensor_refs->push_back(static_cast<int32_t>(v));
          }
          gather.items.push_back(item);
        }
        gather.target_slot = new_slot();
        gathers->push_back(std::move(gather));
        return gathers->back().target_slot;
      }
      case A::SymIntListArg:
      case A::SymFloatListArg:
      case A::SymBoolListArg: {
        GatherStep gather;
        bool all_literal = true;
        auto add_item = [&](int32_t v, auto literal) -> Status {
          GatherStep::Item item;
          if (v >= 0) {
            NRT_TRY(slot, value_slot(v));
            item.slot = *slot;
            all_literal = false;
          }
          if constexpr (std::is_same_v<decltype(literal), int64_t>) item.int_literal = literal;
          if constexpr (std::is_same_v<decltype(literal), double>) item.float_literal = literal;
          if constexpr (std::is_same_v<decltype(literal), bool>) item.bool_literal = literal;
          gather.items.push_back(item);
          return {};
        };
        if (type == A::SymIntListArg) {
          gather.kind = GatherStep::Kind::kInts;
          const auto* items = static_cast<const fb::SymIntListArg*>(arg)->items();
          for (uint32_t i = 0; i < vector_size(items); ++i) {
            NRT_RETURN_IF_ERROR(add_item(items->Get(i)->value(), items->Get(i)->literal()));
          }
        } else if (type == A::SymFloatListArg) {
          gather.kind = GatherStep::Kind::kFloats;
          const auto* items = static_cast<const fb::SymFloatListArg*>(arg)->items();
          for (uint32_t i = 0; i < vector_size(items); ++i) {
            NRT_RETURN_IF_ERROR(add_item(items->Get(i)->value(), items->Get(i)->literal()));
          }
        } else {
          gather.kind = GatherStep::Kind::kBools;
          const auto* items = static_cast<const fb::SymBoolListArg*>(arg)->items();
          for (uint32_t i = 0; i < vector_size(items); ++i) {
            NRT_RETURN_IF_ERROR(add_item(items->Get(i)->value(), items->Get(i)->literal() != 0));
          }
        }
        if (all_literal) {
          // Lists of literals are constants like any other.
          switch (gather.kind) {
            case GatherStep::Kind::kInts: {
              std::vector<int64_t> out;
              for (const auto& item : gather.items) out.push_back(item.int_literal);
              return constant_slot(RuntimeValue{std::move(out)});
            }
            case GatherStep::Kind::kFloats: {
              std::vector<double> out;
              for (const auto& item : gather.items) out.push_back(item.float_literal);
              return constant_slot(RuntimeValue{std::move(out)});
            }
            default: {
              std::vector<bool> out;
              for (const auto& item : gather.items) out.push_back(item.bool_literal);
              return constant_slot(RuntimeValue{std::move(out)});
            }
          }
        }
        gather.target_slot = new_slot();
        gathers->push_back(std::move(gather));
        return gathers->back().target_slot;
      }
      default:
        break;
    }
    NRT_TRY(value, constant(type, arg, what));
    if (!value->has_value()) return fail(what + ": unexpected reference");  // covered above
    return constant_slot(std::move(**value));
  }

  Status plan_inputs() {
    const auto* sig = graph_.signature();
    for (uint32_t i = 0; i < vector_size(graph_.inputs()); ++i) {
      const auto* holder = graph_.inputs()->Get(i);
      PlannedInput input;
      if (sig != nullptr) {
        const auto* spec = sig->inputs()->Get(i);
        input.kind = spec->kind();
        if (spec->target()) input.target = spec->target()->str();
        if (spec->constant()) {
          NRT_TRY(c, constant(spec->constant()->arg_type(), spec->constant()->arg(), "constant input " + std::to_string(i)));
          if (!c->has_value()) return fail("constant input " + std::to_string(i) + " refers to a value");
          input.constant = std::move(**c);
        }
      }
      const int64_t v = single_value_of(holder->arg_type(), holder->arg());
      if (v >= 0) {
        input.value = static_cast<int32_t>(v);
        define(static_cast<uint32_t>(v), new_slot(), -1);
      } else if (!input.constant) {
        NRT_TRY(c, constant(holder->arg_type(), holder->arg(), "graph input " + std::to_string(i)));
        if (c->has_value()) input.constant = std::move(**c);
      }
      plan_.inputs.push_back(std::move(input));
    }
    return {};
  }

  Status plan_node(uint32_t n) {
    node_ = n;
    const auto* node = graph_.nodes()->Get(n);
    const int64_t step = n;
    PlannedNode planned;
    planned.node_index = n;
    planned.name = node->name() ? node->name()->str() : "#" + std::to_string(n);
    planned.target = targets_[n];
    planned.kernel = kernels_[n];

    std::vector<int32_t> tensor_refs;
    const std::optional<ResolvedKernel>& in_place = in_place_[n];
    const int64_t mutated_arg = in_place ? mutated_argument(*node, in_place->mutation) : -1;
    if (in_place && mutated_arg < 0) {
      return fail(std::string(in_place->mutation == MutationKind::kOut ? "an out= variant" : "an in-place op") +
                  " run as " + in_place->functional_target + " needs its " +
                  (in_place->mutation == MutationKind::kOut ? "'out'" : "'self'") + " argument to name a tensor");
    }
    int32_t mutated_value = -1, mutated_slot = -1;
    for (uint32_t i = 0; i < vector_size(node->inputs()); ++i) {
      const auto* named = node->inputs()->Get(i);
      const std::string name = named->name() ? named->name()->str() : "";
      const std::string what = "argument " + std::to_string(i) + (name.empty() ? "" : " '" + name + "'");
      std::vector<int32_t> refs;
      NRT_TRY(slot, argument_slot(named->arg_type(), named->arg(), step, what, &planned.gathers, &refs));
      if (static_cast<int64_t>(i) == mutated_arg) {
        mutated_value = refs.front();
        mutated_slot = *slot;
        // The functional op has no `out` parameter: it must not see one.
        if (in_place->mutation == MutationKind::kOut) continue;
      }
      tensor_refs.insert(tensor_refs.end(), refs.begin(), refs.end());
      // The functional op may name its first parameter otherwise (dropout_'s `self` is dropout's
      // `input`): passed by position, the kernel finds it under any name.
      const bool positional_self = in_place && in_place->mutation == MutationKind::kInPlace && i == 0 && mutated_arg == 0;
      planned.arg_names.push_back(positional_self ? std::string() : name);
      planned.arg_slots.push_back(*slot);
    }

    // Output slots are contiguous so that the kernel sees them as one span; list elements get
    // their own slots after them.
    const uint32_t num_outputs = vector_size(node->outputs());
    planned.first_output_slot = plan_.num_slots;
    plan_.num_slots += static_cast<int32_t>(num_outputs);
    std::vector<int32_t> defined;
    for (uint32_t o = 0; o < num_outputs; ++o) {
      const auto* holder = node->outputs()->Get(o);
      PlannedOutput out;
      out.slot = planned.first_output_slot + static_cast<int32_t>(o);
      if (holder->arg_type() == fb::Argument::TensorListArg) {
        out.kind = OutputSlotKind::kList;
        const auto* values = holder->arg_as_TensorListArg()->values();
        for (uint32_t e = 0; e < vector_size(values); ++e) out.elements.push_back(static_cast<int32_t>(values->Get(e)));
      } else if (holder->arg_type() == fb::Argument::CustomObjArg) {
        return unsupported("output " + std::to_string(o) + " is a custom object, which the executor does not support");
      } else {
        const int64_t v = single_value_of(holder->arg_type(), holder->arg());
        if (v >= 0) {
          out.kind = OutputSlotKind::kValue;
          out.value = static_cast<int32_t>(v);
          define(static_cast<uint32_t>(v), out.slot, step);
          defined.push_back(out.value);
        }
      }
      planned.outputs.push_back(std::move(out));
    }
    for (auto& out : planned.outputs) {
      for (int32_t element : out.elements) {
        define(static_cast<uint32_t>(element), new_slot(), step);
        plan_.values[static_cast<size_t>(element)].defined_by_list = true;
        defined.push_back(element);
      }
    }

    if (in_place) {
      NRT_RETURN_IF_ERROR(plan_in_place(planned, *in_place, mutated_value, mutated_slot, defined, step));
    } else if (planned.kernel.is_view) {
      // Views may alias any tensor they were given (conservative: a view of a list aliases every
      // element); their roots must live as long as they do.
      std::set<int32_t> roots;
      for (int32_t ref : tensor_refs) {
        const auto& info = plan_.values[static_cast<size_t>(ref)];
        if (info.alias_roots.empty()) {
          roots.insert(ref);
        } else {
          roots.insert(info.alias_roots.begin(), info.alias_roots.end());
        }
      }
      for (int32_t v : defined) plan_.values[static_cast<size_t>(v)].alias_roots.assign(roots.begin(), roots.end());
    }
    for (int32_t v : defined) {
      ValueInfo& info = plan_.values[static_cast<size_t>(v)];
      info.planned = !planned.kernel.is_view && !in_place && !info.defined_by_list && plannable(info);
    }
    plan_.nodes.push_back(std::move(planned));
    node_ = -1;
    return {};
  }

  static bool plannable(const ValueInfo& info) {
    return info.has_meta && (info.kind == fb::ValueKind::TENSOR || info.kind == fb::ValueKind::DTENSOR) &&
           nrt::element_size(info.dtype) > 0;
  }

  // The input a mutating node writes into: `self` (in-place) or `out`, by name, else `self` at
  // position 0. -1 when there is none or it is not a tensor reference.
  static int64_t mutated_argument(const fb::Node& node, MutationKind mutation) {
    const std::string_view wanted = mutation == MutationKind::kOut ? "out" : "self";
    int64_t found = -1;
    for (uint32_t i = 0; i < vector_size(node.inputs()); ++i) {
      const auto* named = node.inputs()->Get(i);
      if (named->name() != nullptr && named->name()->string_view() == wanted) found = i;
    }
    if (found < 0 && mutation == MutationKind::kInPlace && vector_size(node.inputs()) > 0) {
      const auto* first = node.inputs()->Get(0);
      if (first->name() == nullptr || first->name()->size() == 0) found = 0;
    }
    if (found < 0) return -1;
    const auto type = node.inputs()->Get(static_cast<uint32_t>(found))->arg_type();
    return type == fb::Argument::TensorArg ? found : -1;
  }

  // The node's one output is the mutated tensor: a view of its roots, which live as long as it
  // does. Graph inputs among them are marked; the functional result gets scratch memory.
  Status plan_in_place(PlannedNode& planned, const ResolvedKernel& resolved, int32_t mutated_value,
                       int32_t mutated_slot, const std::vector<int32_t>& defined, int64_t step) {
    if (planned.outputs.size() != 1 || defined.size() != 1 || planned.outputs[0].kind != OutputSlotKind::kValue) {
      return unsupported("an in-place op run as " + resolved.functional_target + " must have exactly one tensor output");
    }
    const ValueInfo& target = plan_.values[static_cast<size_t>(mutated_value)];
    std::vector<int32_t> roots = target.alias_roots;
    if (roots.empty()) roots.push_back(mutated_value);
    for (int32_t root : roots) {
      if (plan_.values[static_cast<size_t>(root)].def_step == -1) plan_.values[static_cast<size_t>(root)].mutated_in_place = true;
    }
    ValueInfo& output = plan_.values[static_cast<size_t>(defined[0])];
    output.alias_roots = roots;

    InPlaceWrite write;
    write.target_slot = mutated_slot;
    write.functional_target = resolved.functional_target;
    write.functional_is_view = resolved.kernel->is_view;
    write.write_back = resolved.write_back;
    write.into_self = resolved.mutation == MutationKind::kInPlace && computes_into_self(resolved.functional_target);
    if (plannable(output)) {
      ValueInfo scratch = output;
      scratch.name = output.name + " (in-place result)";
      scratch.slot = -1;
      scratch.def_step = step;
      scratch.last_use = step;
      scratch.alias_roots.clear();
      scratch.planned = true;
      write.scratch_value = static_cast<int32_t>(plan_.values.size());
      plan_.values.push_back(std::move(scratch));
    }
    planned.kernel.is_view = true;  // its output aliases the mutated tensor
    planned.in_place = std::move(write);
    return {};
  }

  Status plan_outputs() {
    const auto* sig = graph_.signature();
    const int64_t end = static_cast<int64_t>(vector_size(graph_.nodes()));
    for (uint32_t i = 0; i < vector_size(graph_.outputs()); ++i) {
      const auto* holder = graph_.outputs()->Get(i);
      PlannedGraphOutput out;
      if (sig != nullptr) out.kind = sig->outputs()->Get(i)->kind();
      const int64_t v = single_value_of(holder->arg_type(), holder->arg());
      if (holder->arg_type() == fb::Argument::TensorListArg) {
        return unsupported("graph output " + std::to_string(i) + " is a tensor list, which the executor does not return");
      }
      if (v >= 0) {
        const ValueInfo& info = plan_.values[static_cast<size_t>(v)];
        if (info.slot < 0) return fail("graph output " + std::to_string(i) + " names a value that is never defined");
        out.value = static_cast<int32_t>(v);
        out.name = info.name;
        use(v, end);
      } else {
        out.name = "output" + std::to_string(i);
        NRT_TRY(c, constant(holder->arg_type(), holder->arg(), "graph output " + std::to_string(i)));
        out.constant = c->has_value() ? std::move(**c) : RuntimeValue{};
      }
      plan_.outputs.push_back(std::move(out));
    }
    return {};
  }

  void finish_lifetimes() {
    for (auto& info : plan_.values) info.lifetime_end = info.last_use;
    for (const auto& info : plan_.values) {
      for (int32_t root : info.alias_roots) {
        auto& r = plan_.values[static_cast<size_t>(root)];
        r.lifetime_end = std::max(r.lifetime_end, info.last_use);
      }
    }
    const int64_t end = plan_.num_steps();
    for (size_t v = 0; v < plan_.values.size(); ++v) {
      const ValueInfo& info = plan_.values[v];
      if (info.def_step < 0 || info.slot < 0) continue;  // graph inputs, undefined and scratch values
      const int64_t release = info.alias_roots.empty() ? info.lifetime_end : info.last_use;
      if (release < end) plan_.nodes[static_cast<size_t>(release)].releases.push_back(static_cast<int32_t>(v));
    }
  }

  // A functional collective may return with its operation in flight when wait_tensor reads its
  // output and nothing else does (executor/comm/pending_collectives.h): nothing can then see the
  // output before it is complete, and its memory lives until the wait.
  void mark_deferred_waits() {
    std::vector<int32_t> producer(static_cast<size_t>(plan_.num_slots), -1);  // by slot: a deferring node
    std::vector<bool> waited(static_cast<size_t>(plan_.num_slots), false);
    std::vector<bool> waits(plan_.nodes.size(), false);  // by node: a wait_tensor
    for (size_t n = 0; n < plan_.nodes.size(); ++n) {
      PlannedNode& node = plan_.nodes[n];
      const OpFacts* facts = op_facts(node.target);
      node.collective = facts != nullptr && facts->collective;
      if (facts != nullptr && facts->seeded_draw) node.random_stream = random_stream_of(plan_.graph_name, node.name);
      waits[n] = facts != nullptr && facts->waits;
      if (facts != nullptr && facts->defers_wait && node.outputs.size() == 1 &&
          node.outputs[0].kind == OutputSlotKind::kValue && !node.in_place) {
        node.defer_collective_wait = true;
        producer[static_cast<size_t>(node.outputs[0].slot)] = static_cast<int32_t>(n);
      }
    }
    auto refuse = [&](int32_t slot) {
      if (slot >= 0 && producer[static_cast<size_t>(slot)] >= 0) {
        plan_.nodes[static_cast<size_t>(producer[static_cast<size_t>(slot)])].defer_collective_wait = false;
      }
    };
    for (size_t n = 0; n < plan_.nodes.size(); ++n) {
      const PlannedNode& node = plan_.nodes[n];
      for (int32_t slot : node.arg_slots) {
        if (!waits[n]) refuse(slot);
        else if (slot >= 0) waited[static_cast<size_t>(slot)] = true;
      }
      for (const GatherStep& gather : node.gathers) {
        for (const auto& item : gather.items) refuse(item.slot);
      }
    }
    for (const PlannedGraphOutput& out : plan_.outputs) {
      if (out.value >= 0) refuse(plan_.values[static_cast<size_t>(out.value)].slot);
    }
    for (PlannedNode& node : plan_.nodes) {
      if (node.defer_collective_wait && !waited[static_cast<size_t>(node.outputs[0].slot)]) {
        node.defer_collective_wait = false;
      }
    }
  }

  const fb::Program& program_;
  const fb::Graph& graph_;
  const KernelRegistry& registry_;
  ExecutionPlan plan_;
  std::vector<KernelInfo> kernels_;
  std::vector<std::string> targets_;
  std::vector<std::optional<ResolvedKernel>> in_place_;  // nodes run through their functional op
  int64_t node_ = -1;
};

// Targets used by `root` and every subgraph it reaches (iteratively: subgraph chains may be long).
std::set<std::string> collect_targets(const fb::Program& program, uint32_t root) {
  std::set<std::string> targets;
  std::set<uint32_t> visited{root};
  std::vector<uint32_t> pending{root};
  while (!pending.empty()) {
    const auto* graph = program.graphs()->Get(pending.back());
    pending.pop_back();
    for (uint32_t n = 0; n < vector_size(graph->nodes()); ++n) {
      const auto* node = graph->nodes()->Get(n);
      targets.insert(operator_target(*program.operators()->Get(node->op())));
      for (uint32_t i = 0; i < vector_size(node->inputs()); ++i) {
        const auto* named = node->inputs()->Get(i);
        if (named->arg_type() != fb::Argument::GraphArg) continue;
        const uint32_t sub = named->arg_as_GraphArg()->graph();
        if (visited.insert(sub).second) pending.push_back(sub);
      }
    }
  }
  return targets;
}

}  // namespace

Error node_error(std::string_view graph, const PlannedNode& node, const std::string& message, ErrorCode code) {
  return make_error(code, "graph '" + std::string(graph) + "' node " + std::to_string(node.node_index) + " '" +
                              node.name + "' (" + node.target + "): " + message);
}

std::string describe_meta(const ValueInfo& info) {
  std::string s(nrt::short_name(info.dtype));
  s += "[";
  for (size_t i = 0; i < info.sizes.size(); ++i) {
    if (i) s += ",";
    s += info.sizes[i].expr.empty() ? std::to_string(info.sizes[i].literal) : info.sizes[i].expr;
  }
  return s + "]";
}

Result<uint32_t> find_graph(const fb::Program& program, std::string_view name) {
  if (name.empty()) {
    if (vector_size(program.entry_points()) == 0) return make_error(ErrorCode::NoEntryPoint, "program lists no entry point");
    return program.entry_points()->Get(0);
  }
  for (uint32_t g = 0; g < vector_size(program.graphs()); ++g) {
    if (program.graphs()->Get(g)->name()->string_view() == name) return g;
  }
  std::string names;
  for (uint32_t g = 0; g < vector_size(program.graphs()); ++g) names += (g ? ", " : "") + program.graphs()->Get(g)->name()->str();
  return make_error(ErrorCode::InvalidArgument, "no graph named '" + std::string(name) + "' (graphs: " + names + ")");
}

Result<ExecutionPlan> build_execution_plan(const fb::Program& program, std::string_view graph_name, Device device,
                                           const KernelRegistry& registry) {
  NRT_TRY(graph, find_graph(program, graph_name));
  PlanBuilder builder(program, *graph, device, registry);
  return builder.build();
}

Result<std::vector<std::string>> missing_kernels(const fb::Program& program, std::string_view graph_name, Device device,
                                                 const KernelRegistry& registry) {
  NRT_TRY(graph, find_graph(program, graph_name));
  std::vector<std::string> missing;
  for (const auto& target : collect_targets(program, *graph)) {
    if (resolve_kernel(registry, target, device.kind).kernel == nullptr) missing.push_back(target);
  }
  return missing;
}

}  // namespace nrt::exec
