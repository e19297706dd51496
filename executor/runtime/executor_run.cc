// Running a loaded graph in a frame (the loading half is executor.cc).
#include <array>
#include <chrono>
#include <set>

#include "executor/runtime/allocator.h"
#include "executor/runtime/executor.h"
#include "executor/runtime/memory_budget.h"
#include "executor/runtime/tensor_copy.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace

Result<GraphOutputs> Executor::run_graph(std::span<const RuntimeValue> inputs) {
  if (inputs.size() != user_input_names_.size()) {
    return make_error(ErrorCode::InputMismatch, "graph '" + plan_->graph_name + "' takes " +
                                                      std::to_string(user_input_names_.size()) + " inputs, given " +
                                                      std::to_string(inputs.size()));
  }
  NamedInputs named;
  for (size_t i = 0; i < inputs.size(); ++i) named.emplace(user_input_names_[i], inputs[i]);
  NRT_TRY(frame, acquire_frame());
  // The frame goes back to the pool when the caller drops `hold`, not before: the outputs view it.
  GraphOutputs results;
  results.hold = std::shared_ptr<void>(*frame, [this](void* f) { release_frame(static_cast<ExecutionFrame*>(f)); });
  NRT_TRY(outputs, run_in(**frame, named));
  results.values.reserve(outputs->size());
  for (auto& output : *outputs) results.values.push_back(std::move(output.value));
  return results;
}

Status Executor::bind_inputs(ExecutionFrame& frame, const NamedInputs& inputs, SymbolBindings* bindings) const {
  const std::string where = "graph '" + plan_->graph_name + "': ";
  auto fail = [&](const std::string& message) { return make_error(ErrorCode::InputMismatch, where + message); };
  auto& slots = frame.slots();
  auto& user_input_slots = frame.user_input_slots();
  std::set<std::string_view> expected;
  std::vector<std::string> missing;
  struct Deferred {
    const ValueInfo* info;
    size_t dim;
    int64_t actual;
  };
  std::vector<Deferred> deferred;
  user_input_slots.clear();

  auto bind_symbol = [&](const std::string& symbol, int64_t actual, const std::string& what) -> Status {
    auto [it, inserted] = bindings->emplace(symbol, actual);
    if (!inserted && it->second != actual) {
      return fail(what + " is " + std::to_string(actual) + " but symbol " + symbol + " is already " +
                  std::to_string(it->second) + " from another input");
    }
    return {};
  };

  for (const PlannedInput& input : plan_->inputs) {
    if (input.kind != fb::InputKind::USER_INPUT || input.value < 0) continue;
    const ValueInfo& info = plan_->values[static_cast<size_t>(input.value)];
    if (info.kind == fb::ValueKind::PROCESS_GROUP) continue;
    expected.insert(info.name);
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      missing.push_back(info.name);
      continue;
    }
    const RuntimeValue& given = it->second;
    const std::string what = "input '" + info.name + "'";
    if (is_tensor_kind(info.kind)) {
      const auto* tensor = std::get_if<Tensor>(&given);
      if (tensor == nullptr || !tensor->defined()) {
        if (info.kind == fb::ValueKind::OPTIONAL_TENSOR && std::holds_alternative<std::monostate>(given)) {
          slots[static_cast<size_t>(info.slot)] = given;
          user_input_slots.push_back(info.slot);
          continue;
        }
        return fail(what + " must be a tensor");
      }
      if (!(tensor->device() == plan_->device) && tensor->device().kind != DeviceKind::kCpu) {
        return fail(what + " is on " + tensor->device().to_string() + ", the graph runs on " + plan_->device.to_string());
      }
      if (info.has_meta) {
        if (info.dtype != ScalarType::UNKNOWN && tensor->dtype() != info.dtype) {
          return fail(what + " is " + tensor->type_string() + " but the graph declares " + describe_meta(info));
        }
        if (static_cast<size_t>(tensor->dim()) != info.sizes.size()) {
          return fail(what + " is " + tensor->type_string() + " but the graph declares " + describe_meta(info));
        }
        for (size_t d = 0; d < info.sizes.size(); ++d) {
          const PlannedDim& dim = info.sizes[d];
          const int64_t actual = tensor->sizes()[d];
          if (dim.expr.empty()) {
            if (dim.literal != actual) {
              return fail(what + " is " + tensor->type_string() + " but the graph declares " + describe_meta(info));
            }
          } else if (auto symbol = lone_symbol(dim.expr)) {
            NRT_RETURN_IF_ERROR(bind_symbol(*symbol, actual, what + " dimension " + std::to_string(d)));
          } else {
            deferred.push_back({&info, d, actual});
          }
        }
      }
    } else if (info.kind == fb::ValueKind::SYM_INT) {
      const auto* i = std::get_if<int64_t>(&given);
      if (i == nullptr) return fail(what + " must be an int");
      if (auto symbol = lone_symbol(info.sym_expr)) {
        NRT_RETURN_IF_ERROR(bind_symbol(*symbol, *i, what));
      }
    } else if (info.kind == fb::ValueKind::SYM_FLOAT) {
      if (!std::holds_alternative<double>(given)) return fail(what + " must be a float");
    } else if (info.kind == fb::ValueKind::SYM_BOOL) {
      if (!std::holds_alternative<bool>(given)) return fail(what + " must be a bool");
    }
    slots[static_cast<size_t>(info.slot)] = given;
    user_input_slots.push_back(info.slot);
    const auto* tensor = std::get_if<Tensor>(&given);
    if (tensor && tensor->defined() && !(tensor->device() == plan_->device)) {
      // A host tensor for a graph on a device: copied there (the run's edge; a copy of its own, so
      // the graph may also mutate it).
      try {
        auto copied = copy_to_device(*tensor, plan_->device);
        if (!copied) return fail(what + " could not be copied to " + plan_->device.to_string() + ": " + copied.error().message);
        slots[static_cast<size_t>(info.slot)] = std::move(*copied);
      } catch (const std::bad_alloc& failure) {
        return memory_error(where + "input '" + info.name + "' (copied to " + plan_->device.to_string() + ")", failure);
      }
    } else if (tensor && info.mutated_in_place) {
      // The graph writes into this input. It writes into a copy: a run never changes the caller's
      // tensors (which may be read-only, or reused for the next run).
      try {
        slots[static_cast<size_t>(info.slot)] = contiguous_copy(*tensor);
      } catch (const std::bad_alloc& failure) {
        return memory_error(where + "input '" + info.name + "' (copied: the graph mutates it)", failure);
      }
    }
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "'" : ", '") + m + "'";
    return fail("missing " + std::string(missing.size() == 1 ? "input " : "inputs ") + names);
  }
  for (const auto& [name, value] : inputs) {
    if (!expected.count(name)) {
      std::string names;
      for (auto e : expected) names += (names.empty() ? "" : ", ") + std::string(e);
      return fail("no user input is named '" + name + "' (user inputs: " + names + ")");
    }
  }
  for (const auto& d : deferred) {
    auto want = evaluate_sym_expr(d.info->sizes[d.dim].expr, *bindings);
    if (want && *want != d.actual) {
      return fail("input '" + d.info->name + "' dimension " + std::to_string(d.dim) + " is " +
                  std::to_string(d.actual) + " but " + d.info->sizes[d.dim].expr + " = " + std::to_string(*want));
    }
  }
  const fb::Program& program = file_->program();
  for (uint32_t r = 0; r < vector_size(program.range_constraints()); ++r) {
    const auto* constraint = program.range_constraints()->Get(r);
    if (constraint->symbol() == nullptr) continue;
    auto it = bindings->find(constraint->symbol()->string_view());
    if (it == bindings->end()) continue;
    if ((constraint->min() && it->second < *constraint->min()) || (constraint->max() && it->second > *constraint->max())) {
      return fail("symbol " + it->first + " = " + std::to_string(it->second) + " is outside its range [" +
                  (constraint->min() ? std::to_string(*constraint->min()) : "-inf") + ", " +
                  (constraint->max() ? std::to_string(*constraint->max()) : "inf") + "]");
    }
  }
  return {};
}

Error Executor::node_error(const PlannedNode& node, const std::string& message, ErrorCode code) const {
  return exec::node_error(plan_->graph_name, node, message, code);
}

// A kernel's result must match the graph's metadata, and only views may alias planned memory.
Status Executor::check_result(const ExecutionFrame& frame, const PlannedNode& node, size_t value,
                              const RuntimeValue& result) const {
  const ValueInfo& info = plan_->values[value];
  if (!is_tensor_kind(info.kind)) {
    if (std::holds_alternative<std::monostate>(result) && info.kind != fb::ValueKind::NONE) {
      return node_error(node, "the kernel did not set value '" + info.name + "'", ErrorCode::KernelResultMismatch);
    }
    return {};
  }
  const auto* t = std::get_if<Tensor>(&result);
  if (t == nullptr || !t->defined()) {
    if (info.kind == fb::ValueKind::OPTIONAL_TENSOR) return {};
    return node_error(node, "the kernel did not produce tensor '" + info.name + "'", ErrorCode::KernelResultMismatch);
  }
  if (info.has_meta) {
    const auto* sizes = frame.concrete_sizes(value);
    if ((info.dtype != ScalarType::UNKNOWN && t->dtype() != info.dtype) || (sizes && *sizes != t->sizes())) {
      return node_error(node,
                        "produced " + t->type_string() + " for '" + info.name + "', the graph records " +
                            (sizes ? std::string(nrt::short_name(info.dtype)) + sizes_text(*sizes) : describe_meta(info)),
                        ErrorCode::KernelResultMismatch);
    }
  }
  // Every planned tensor shares the arena's one Storage, so aliasing shows as that storage at
  // an offset other than the value's own.
  if (!node.kernel.is_view && frame.is_arena(t->storage().get())) {
    const Tensor* planned = frame.planned_tensor(value);
    if (planned == nullptr || planned->storage_offset() != t->storage_offset()) {
      return node_error(node,
                        "output '" + info.name + "' aliases memory planned for another value; a kernel returning a "
                        "view of an input must be registered with KernelInfo::is_view",
                        ErrorCode::KernelResultMismatch);
    }
  }
  return {};
}

namespace {

// `t` is the view `planned` describes: the kernel wrote into the planned tensor it was given.
bool is_planned_view(const Tensor& t, const Tensor& planned) {
  return t.storage() == planned.storage() && t.storage_offset() == planned.storage_offset() &&
         t.dtype() == planned.dtype() && t.sizes() == planned.sizes();
}

}  // namespace

Status Executor::execute_compact(ExecutionFrame& frame, size_t n) const {
  const CompactNode& node = compact_nodes_[n];
  RuntimeValue* slots = frame.slots().data();
  const CompactOutput* outputs = compact_outputs_.data() + node.outputs_begin;
  ExecutionFrame::PlacedOutput* placed_outputs = frame.placed_outputs().data() + node.outputs_begin;
  const uint64_t generation = frame.plan_generation();
  // What the slot held before the call, to tell afterwards whether the kernel left it alone:
  // Tensor has no mutators, so an untouched slot still has the same sizes buffer.
  struct Placed {
    const Storage* storage;
    const int64_t* sizes;
  };
  std::array<Placed, 4> placed{};
  for (uint32_t i = 0; i < node.num_outputs; ++i) {
    RuntimeValue& slot = slots[outputs[i].slot];
    const Tensor* planned = placed_outputs[i].planned;
    if (planned != nullptr && planned->defined()) {
      const auto* current = std::get_if<Tensor>(&slot);
      if (current == nullptr ||
          (placed_outputs[i].generation != generation && !is_planned_view(*current, *planned))) {
        slot = *planned;
        current = std::get_if<Tensor>(&slot);
      }
      if (i < placed.size()) placed[i] = {current->storage().get(), current->sizes().data()};
    } else if (!std::holds_alternative<std::monostate>(slot)) {
      slot = RuntimeValue{};
    }
  }
  KernelContext context(node.target, frame.arguments(n),
                        std::span<RuntimeValue>(slots + node.first_output_slot, node.num_outputs), plan_->device);
  context.set_kernel_state(frame.kernel_state(n));
  std::optional<CollectiveOrigin> origin;
  if (node.context_extras) {
    if (node.collective) {
      context.set_pending_collectives(&frame.pending_collectives(), node.defer_collective_wait);
      origin.emplace(plan_->nodes[n].name, !node.defer_collective_wait);
    }
    context.set_device_context(device_context_);
    if (node.random_stream) context.set_random(options_.seed, *node.random_stream);
  }
  if (Status s = call_kernel(node.fn, context); !s) {
    for (uint32_t i = 0; i < node.num_outputs; ++i) placed_outputs[i].generation = 0;
    return node_error(plan_->nodes[n], s.error().message, s.error().code);
  }
  for (uint32_t i = 0; i < node.num_outputs; ++i) {
    if (outputs[i].value < 0) continue;
    const RuntimeValue& slot = slots[outputs[i].slot];
    // A result left in its planned tensor has the recorded dtype and sizes and aliases nothing
    // else: the full check is for the rest.
    const auto* t = std::get_if<Tensor>(&slot);
    const Tensor* planned = placed_outputs[i].planned;
    if (t != nullptr && planned->defined() && i < placed.size() && t->storage().get() == placed[i].storage &&
        t->storage() == planned->storage() && t->sizes().data() == placed[i].sizes &&
        t->storage_offset() == planned->storage_offset() && t->dtype() == planned->dtype()) {
      placed_outputs[i].generation = generation;
      continue;
    }
    placed_outputs[i].generation = 0;
    if (Status s = check_result(frame, plan_->nodes[n], static_cast<size_t>(outputs[i].value), slot); !s) {
      // The slots of this node hold whatever the kernel left: none is trusted on the next run.
      for (uint32_t j = 0; j < node.num_outputs; ++j) placed_outputs[j].generation = 0;
      return s;
    }
  }
  for (uint32_t r = node.releases_begin; r < node.releases_end; ++r) {
    const CompactRelease& release = compact_releases_[r];
    if (!frame.planned_cell(static_cast<size_t>(release.value)).defined()) slots[release.slot] = RuntimeValue{};
  }
  return {};
}

// The mutated tensor, when the node's element-wise functional kernel may compute straight into it
// instead of into `scratch`, its planned result: writable, of scratch's dtype and sizes (else the
// kernel would replace it), and sharing storage with no argument but itself (a.add_(a.t()) would
// read what it writes). nullptr otherwise.
const Tensor* Executor::computes_into_target(ExecutionFrame& frame, const PlannedNode& node,
                                             const Tensor* scratch) const {
  const InPlaceWrite& write = *node.in_place;
  if (!write.into_self) return nullptr;
  const auto* target = std::get_if<Tensor>(&frame.slots()[static_cast<size_t>(write.target_slot)]);
  if (target == nullptr || !target->defined() || target->storage()->read_only() || scratch == nullptr ||
      scratch->dtype() != target->dtype() || scratch->sizes() != target->sizes()) {
    return nullptr;
  }
  for (size_t d = 0; d < target->sizes().size(); ++d) {
    if (target->strides()[d] == 0 && target->sizes()[d] > 1) return nullptr;  // elements that overlap
  }
  for (int32_t slot : node.arg_slots) {
    if (slot == write.target_slot || slot < 0) continue;
    const RuntimeValue& value = frame.slots()[static_cast<size_t>(slot)];
    if (const auto* t = std::get_if<Tensor>(&value); t != nullptr && t->defined() && t->storage() == target->storage()) {
      return nullptr;
    }
    if (const auto* list = std::get_if<std::vector<Tensor>>(&value)) {
      for (const Tensor& t : *list) {
        if (t.defined() && t.storage() == target->storage()) return nullptr;
      }
    }
  }
  return target;
}

// The functional result in the node's output slot goes into the mutated tensor (through its
// strides, with torch's dtype conversion), which then becomes the node's output.
Status Executor::write_in_place(ExecutionFrame& frame, const PlannedNode& node) const {
  auto& slots = frame.slots();
  const InPlaceWrite& write = *node.in_place;
  RuntimeValue& out = slots[static_cast<size_t>(node.first_output_slot)];
  const RuntimeValue& target_value = slots[static_cast<size_t>(write.target_slot)];
  const auto* result = std::get_if<Tensor>(&out);
  const auto* target = std::get_if<Tensor>(&target_value);
  if (result == nullptr || !result->defined()) {
    return node_error(node, write.functional_target + " produced no tensor to write in place",
                      ErrorCode::KernelResultMismatch);
  }
  if (target == nullptr || !target->defined()) {
    return node_error(node, "the tensor written in place holds no tensor", ErrorCode::KernelResultMismatch);
  }
  if (result->sizes() != target->sizes()) {
    return node_error(node,
                      "the result of " + write.functional_target + ", " + result->type_string() +
                          ", does not have the shape of the tensor it is written into, " + target->type_string(),
                      ErrorCode::KernelResultMismatch);
  }
  const bool is_target = result->storage() == target->storage() && result->storage_offset() == target->storage_offset() &&
                         result->strides() == target->strides() && result->dtype() == target->dtype();
  if (is_target) {
    // A view kernel gave the tensor itself back (dropout_ in inference): nothing to write.
    out = target_value;
    return {};
  }
  if (write.functional_is_view) {
    return node_error(node,
                      "runs as " + write.functional_target + ", whose result is a view of the tensor it would be "
                          "written into: in-place view ops (t_, squeeze_, ...) are not supported",
                      ErrorCode::NotSupported);
  }
  if (target->storage()->read_only()) {
    return node_error(node, "writes into " + target->type_string() + " held in read-only memory",
                      ErrorCode::KernelError);
  }
  const RuntimeValue source = out;
  out = target_value;
  const std::array<NamedValue, 2> arguments{NamedValue{"self", &target_value}, NamedValue{"src", &source}};
  KernelContext context(kWriteBackTarget, arguments, std::span<RuntimeValue>(&out, 1), plan_->device);
  if (device_context_ != nullptr) context.set_device_context(device_context_);
  if (Status s = call_kernel(write.write_back, context); !s) return node_error(node, s.error().message, s.error().code);
  const auto* written = std::get_if<Tensor>(&out);
  if (written == nullptr || written->storage() != target->storage() ||
      written->storage_offset() != target->storage_offset() || written->strides() != target->strides()) {
    return node_error(node, std::string(kWriteBackTarget) + " did not write into the tensor it was given",
                      ErrorCode::KernelResultMismatch);
  }
  return {};
}

Status Executor::execute_node(ExecutionFrame& frame, size_t n) const {
  const PlannedNode& node = plan_->nodes[n];
  auto& slots = frame.slots();

  for (const GatherStep& gather : node.gathers) {
    RuntimeValue& target = slots[static_cast<size_t>(gather.target_slot)];
    switch (gather.kind) {
      case GatherStep::Kind::kTensors: {
        std::vector<Tensor> list;
        list.reserve(gather.items.size());
        for (const auto& item : gather.items) {
          const auto* t = std::get_if<Tensor>(&slots[static_cast<size_t>(item.slot)]);
          if (t == nullptr) return node_error(node, "a tensor list item holds no tensor", ErrorCode::KernelResultMismatch);
          list.push_back(*t);
        }
        target = std::move(list);
        break;
      }
      case GatherStep::Kind::kOptionalTensors: {
        std::vector<std::optional<Tensor>> list;
        for (const auto& item : gather.items) {
          const Tensor* t = item.slot >= 0 ? std::get_if<Tensor>(&slots[static_cast<size_t>(item.slot)]) : nullptr;
          list.push_back(t ? std::optional<Tensor>(*t) : std::nullopt);
        }
        target = std::move(list);
        break;
      }
      case GatherStep::Kind::kInts: {
        std::vector<int64_t> list;
        for (const auto& item : gather.items) {
          if (item.slot < 0) {
            list.push_back(item.int_literal);
          } else if (const auto* i = std::get_if<int64_t>(&slots[static_cast<size_t>(item.slot)])) {
            list.push_back(*i);
          } else {
            return node_error(node, "a SymInt list item holds no int", ErrorCode::KernelResultMismatch);
          }
        }
        target = std::move(list);
        break;
      }
      case GatherStep::Kind::kFloats: {
        std::vector<double> list;
        for (const auto& item : gather.items) {
          const RuntimeValue* v = item.slot >= 0 ? &slots[static_cast<size_t>(item.slot)] : nullptr;
          if (v == nullptr) {
            list.push_back(item.float_literal);
          } else if (const auto* d = std::get_if<double>(v)) {
            list.push_back(*d);
          } else if (const auto* i = std::get_if<int64_t>(v)) {
            list.push_back(static_cast<double>(*i));
          } else {
            return node_error(node, "a SymFloat list item holds no number", ErrorCode::KernelResultMismatch);
          }
        }
        target = std::move(list);
        break;
      }
      case GatherStep::Kind::kBools: {
        std::vector<bool> list;
        for (const auto& item : gather.items) {
          if (item.slot < 0) {
            list.push_back(item.bool_literal);
          } else if (const auto* b = std::get_if<bool>(&slots[static_cast<size_t>(item.slot)])) {
            list.push_back(*b);
          } else {
            return node_error(node, "a SymBool list item holds no bool", ErrorCode::KernelResultMismatch);
          }
        }
        target = std::move(list);
        break;
      }
    }
  }

  // Output slots: the planned tensor where there is one, else empty for the kernel to fill.
  for (const PlannedOutput& out : node.outputs) {
    RuntimeValue& slot = slots[static_cast<size_t>(out.slot)];
    const Tensor* planned = out.kind == OutputSlotKind::kValue ? frame.planned_tensor(static_cast<size_t>(out.value))
                                                               : nullptr;
    if (planned != nullptr) {
      const auto* current = std::get_if<Tensor>(&slot);
      if (current == nullptr || current->storage() != planned->storage() ||
          current->storage_offset() != planned->storage_offset() || current->sizes() != planned->sizes() ||
          current->dtype() != planned->dtype()) {
        slot = *planned;
      }
    } else if (!std::holds_alternative<std::monostate>(slot)) {
      slot = RuntimeValue{};
    }
  }

  if (node.in_place) {
    // The functional kernel writes into scratch; write_in_place moves the result into place. An
    // element-wise one may write into the mutated tensor itself (execution_plan.h).
    const int32_t scratch = node.in_place->scratch_value;
    const Tensor* planned = scratch >= 0 ? frame.planned_tensor(static_cast<size_t>(scratch)) : nullptr;
    const Tensor* target = computes_into_target(frame, node, planned);
    slots[static_cast<size_t>(node.first_output_slot)] =
        target ? RuntimeValue{*target} : planned ? RuntimeValue{*planned} : RuntimeValue{};
  }

  KernelContext context(node.target, frame.arguments(n),
                        std::span<RuntimeValue>(slots.data() + node.first_output_slot, node.outputs.size()),
                        plan_->device);
  context.set_kernel_state(frame.kernel_state(n));
  std::optional<CollectiveOrigin> origin;
  if (node.collective) {
    context.set_pending_collectives(&frame.pending_collectives(), node.defer_collective_wait);
    origin.emplace(node.name, !node.defer_collective_wait);
  }
  if (device_context_ != nullptr) context.set_device_context(device_context_);
  if (node.random_stream) context.set_random(options_.seed, *node.random_stream);
  if (Status s = call_kernel(node.kernel.fn, context); !s) return node_error(node, s.error().message, s.error().code);
  if (node.in_place) {
    NRT_RETURN_IF_ERROR(write_in_place(frame, node));
  }

  for (const PlannedOutput& out : node.outputs) {
    RuntimeValue& slot = slots[static_cast<size_t>(out.slot)];
    if (out.kind == OutputSlotKind::kValue) {
      NRT_RETURN_IF_ERROR(check_result(frame, node, static_cast<size_t>(out.value), slot));
    } else if (out.kind == OutputSlotKind::kList) {
      if (auto* list = std::get_if<std::vector<Tensor>>(&slot)) {
        if (list->size() != out.elements.size()) {
          return node_error(node,
                            "produced " + std::to_string(list->size()) + " tensors, the graph expects " +
                                std::to_string(out.elements.size()),
                            ErrorCode::KernelResultMismatch);
        }
        for (size_t e = 0; e < out.elements.size(); ++e) {
          const auto v = static_cast<size_t>(out.elements[e]);
          RuntimeValue& target = slots[static_cast<size_t>(plan_->values[v].slot)];
          target = std::move((*list)[e]);
          NRT_RETURN_IF_ERROR(check_result(frame, node, v, target));
        }
      } else {
        return node_error(node, "the kernel did not produce a tensor list", ErrorCode::KernelResultMismatch);
      }
      slot = RuntimeValue{};
    }
  }

  const bool poisoning = frame.poisoning();
  for (int32_t v : node.releases) {
    const auto value = static_cast<size_t>(v);
    if (poisoning) frame.end_lifetime(value);
    if (frame.planned_tensor(value) == nullptr) slots[static_cast<size_t>(plan_->values[value].slot)] = RuntimeValue{};
  }
  return {};
}

std::string Executor::argument_shapes(const ExecutionFrame& frame, size_t n) const {
  std::string shapes;
  for (const NamedValue& argument : frame.arguments(n)) {
    if (const auto* t = std::get_if<Tensor>(argument.value); t && t->defined()) {
      shapes += (shapes.empty() ? "" : ", ") + t->type_string();
    } else if (const auto* list = std::get_if<std::vector<Tensor>>(argument.value)) {
      shapes += (shapes.empty() ? "" : ", ") + std::string("[") + std::to_string(list->size()) + " tensors]";
    }
  }
  return shapes;
}

Status Executor::execute_profiled(ExecutionFrame& frame, size_t n, bool compact) const {
  // Shapes are read before the call: list arguments are gathered by execute_node itself.
  std::string shapes = profile_->record_shapes() ? argument_shapes(frame, n) : std::string();
  // On a device whose kernels run asynchronously, each node is waited for, so that its time is its
  // own (a profiled run is slower there, as with torch's profiler in synchronising mode).
  Allocator* device = plan_->device.kind == DeviceKind::kCpu ? nullptr : allocator_for(plan_->device.kind);
  if (device != nullptr) NRT_RETURN_IF_ERROR(device->synchronize(plan_->device));
  const auto start = std::chrono::steady_clock::now();
  Status status = compact ? execute_compact(frame, n) : execute_node(frame, n);
  if (device != nullptr && status) status = device->synchronize(plan_->device);
  const auto end = std::chrono::steady_clock::now();
  profile_->record(static_cast<uint32_t>(n), start, end, std::move(shapes));
  return status;
}

// After constant node `n` ran in a frame's first run: the frame keeps the values later runs read
// of it. Planned memory is reused by the nodes that follow, so a value there is copied out.
Status Executor::keep_constants(ExecutionFrame& frame, size_t n) const {
  for (int32_t v : constant_nodes_.kept_values[n]) {
    const int32_t slot = plan_->values[static_cast<size_t>(v)].slot;
    RuntimeValue value = frame.slots()[static_cast<size_t>(slot)];
    if (auto* t = std::get_if<Tensor>(&value); t != nullptr && t->defined() && frame.is_arena(t->storage().get())) {
      try {
        value = contiguous_copy(*t);
      } catch (const std::bad_alloc& failure) {
        return memory_error("graph '" + plan_->graph_name + "': keeping constant '" + plan_->values[static_cast<size_t>(v)].name + "'", failure);
      }
    }
    frame.kept_constants().values.emplace_back(slot, std::move(value));
  }
  return {};
}

Result<std::vector<NamedOutput>> Executor::run(const NamedInputs& inputs) {
  std::unique_lock<std::mutex> profiling(profile_mutex_, std::defer_lock);
  if (profile_ != nullptr) profiling.lock();
  NRT_TRY(frame, acquire_frame());
  auto outputs = run_in(**frame, inputs);
  release_frame(*frame);
  return outputs;
}

Result<std::vector<NamedOutput>> Executor::run_in(ExecutionFrame& frame, const NamedInputs& inputs) {
  SymbolBindings bindings;
  Status status = bind_inputs(frame, inputs, &bindings);
  if (status) status = frame.prepare(bindings);
  if (status) status = frame.refresh_mutable_weights();
  const bool poisoning = frame.poisoning();
  // Constant nodes run in the frame's first run, which keeps what later nodes read of them; later
  // runs start from those values and skip the nodes. Poisoning runs every node (it checks lifetimes).
  ExecutionFrame::KeptConstants& kept = frame.kept_constants();
  const bool folding = constant_nodes_.count > 0 && !poisoning;
  const bool skip_constants = folding && kept.complete;
  const bool keep_constants_now = folding && !kept.complete;
  if (keep_constants_now) kept.values.clear();
  if (status && skip_constants) {
    for (const auto& [slot, value] : kept.values) frame.slots()[static_cast<size_t>(slot)] = value;
  }
  if (profile_ != nullptr) profile_->begin_run();
  for (size_t n = 0; status && n < plan_->nodes.size(); ++n) {
    if (skip_constants && constant_nodes_.node_is_constant[n]) continue;
    const bool compact = !poisoning && compact_nodes_[n].compact;
    if (profile_ == nullptr) {
      status = compact ? execute_compact(frame, n) : execute_node(frame, n);
    } else {
      status = execute_profiled(frame, n, compact);
    }
    if (status && keep_constants_now && !constant_nodes_.kept_values[n].empty()) status = keep_constants(frame, n);
  }
  if (keep_constants_now) {
    kept.complete = status.ok();
    if (!kept.complete) kept.values.clear();
  }

  // A collective still in flight (its wait never ran: an earlier node failed) completes before the
  // frame's memory, which it may be writing, is used again.
  if (!frame.pending_collectives().empty()) {
    Status waited = frame.pending_collectives().wait_all();
    if (status) status = waited;
  }
  std::vector<NamedOutput> outputs;
  if (status) {
    auto& slots = frame.slots();
    for (const PlannedGraphOutput& out : plan_->outputs) {
      if (out.kind != fb::OutputKind::USER_OUTPUT && out.kind != fb::OutputKind::LOSS_OUTPUT) continue;
      RuntimeValue value = out.value >= 0 ? slots[static_cast<size_t>(plan_->values[static_cast<size_t>(out.value)].slot)]
                                          : out.constant.value_or(RuntimeValue{});
      if (options_.copy_outputs) {
        // A view of any size costs nothing until here; its copy is within the budget or an error.
        try {
          if (auto* t = std::get_if<Tensor>(&value); t && t->defined()) {
            // Off the host, the caller's copy comes back to it (the run's other edge).
            if (t->device().kind == DeviceKind::kCpu) {
              value = contiguous_copy(*t);
            } else if (auto copied = copy_to_device(*t, Device{}); copied) {
              value = std::move(*copied);
            } else {
              status = make_error(copied.error().code, "graph '" + plan_->graph_name + "': output '" + out.name +
                                                           "': " + copied.error().message);
              break;
            }
          }
        } catch (const std::bad_alloc& failure) {
          status = memory_error("graph '" + plan_->graph_name + "': output '" + out.name + "'", failure);
          break;
        }
      }
      outputs.push_back(NamedOutput{out.name, std::move(value)});
    }
  }
  // The caller's inputs are not kept past the run.
  for (int32_t slot : frame.user_input_slots()) frame.slots()[static_cast<size_t>(slot)] = RuntimeValue{};
  frame.user_input_slots().clear();
  if (!status) return status.error();
  return outputs;
}

}  // namespace nrt::exec
