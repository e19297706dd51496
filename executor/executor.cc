#include "executor/executor.h"

#include <array>
#include <chrono>
#include <cstring>
#include <set>

#include "executor/memory_budget.h"
#include "executor/single_process_group.h"
#include "executor/tensor_copy.h"
#include "serializer/scalar_type_info.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::string meta_text(const ValueInfo& info) {
  std::string s(nrt::short_name(info.dtype));
  s += "[";
  for (size_t i = 0; i < info.sizes.size(); ++i) {
    if (i) s += ",";
    s += info.sizes[i].expr.empty() ? std::to_string(info.sizes[i].literal) : info.sizes[i].expr;
  }
  return s + "]";
}

int64_t literal_of(const fb::SymDim* dim) { return dim ? dim->literal() : 0; }

// Binds process group references (constants and graph values) to the registry's groups.
void bind_group(ProcessGroupRef& ref, const ProcessGroupRegistry& registry) { ref.group = registry.find(ref.name); }

}  // namespace

Result<std::unique_ptr<Executor>> Executor::load(ProgramFile file, ExecutorOptions options) {
  return load(std::make_shared<const ProgramFile>(std::move(file)), std::move(options));
}

Result<std::unique_ptr<Executor>> Executor::load(std::shared_ptr<const ProgramFile> file, ExecutorOptions options) {
  return load_graph(std::move(file), std::move(options), nullptr);
}

Result<std::unique_ptr<Executor>> Executor::load_graph(std::shared_ptr<const ProgramFile> file,
                                                       ExecutorOptions options, SubgraphRunners* runners) {
  if (options.device.kind != DeviceKind::kCpu) {
    return make_error(ErrorCode::NotSupported,
                      "device " + options.device.to_string() + " is not supported by this build (cpu only)");
  }
  std::unique_ptr<Executor> executor(new Executor());
  executor->runners_ = runners != nullptr ? runners : &executor->owned_runners_;
  executor->file_ = std::move(file);
  executor->options_ = std::move(options);
  const fb::Program& program = executor->file_->program();
  // Targets without a kernel in the graph and every subgraph it reaches, reported together.
  auto missing = missing_kernels(program, executor->options_.graph, executor->options_.device);
  if (!missing) return missing.error();
  auto plan = build_execution_plan(program, executor->options_.graph, executor->options_.device);
  if (!plan) {
    if (plan.error().code != ErrorCode::MissingKernel) return plan.error();
    // The plan names the graph's own targets with their nodes; add those only subgraphs use.
    std::string extra;
    for (const auto& target : *missing) {
      if (plan.error().message.find("\n  " + target + " (") == std::string::npos) extra += "\n  " + target;
    }
    if (extra.empty()) return plan.error();
    return make_error(ErrorCode::MissingKernel, plan.error().message + "\nand in its subgraphs:" + extra);
  }
  executor->plan_ = std::move(*plan);
  if (!missing->empty()) {
    std::string message = "graph '" + executor->plan_.graph_name + "': no " + executor->options_.device.to_string() +
                          " kernel for " + std::to_string(missing->size()) + " target(s) its subgraphs use:";
    for (const auto& target : *missing) message += "\n  " + target;
    return make_error(ErrorCode::MissingKernel, message);
  }

  executor->groups_ = executor->options_.process_groups;
  if (!executor->groups_) executor->groups_ = std::make_shared<const ProcessGroupRegistry>(single_process_registry(program));
  for (auto& constant : executor->plan_.constants) {
    if (auto* ref = std::get_if<ProcessGroupRef>(&constant.value)) bind_group(*ref, *executor->groups_);
  }
  for (auto& value : executor->plan_.values) {
    if (value.process_group) bind_group(*value.process_group, *executor->groups_);
  }
  if (Status s = executor->bind_collective_groups(); !s) return s.error();
  if (Status s = executor->bind_subgraphs(); !s) return s.error();

  FrameOptions frame_options;
  frame_options.poison_freed = executor->options_.poison_freed.value_or(poison_requested_by_environment());
  executor->frame_ = std::make_unique<ExecutionFrame>(executor->plan_, frame_options);
  if (Status s = executor->bind_weights(); !s) return s.error();
  executor->build_compact_nodes();
  for (const InputDescription& input : executor->user_inputs()) executor->user_input_names_.push_back(input.name);
  // Static shapes are planned now, so the first run allocates nothing either.
  if (Status s = executor->frame_->prepare({}); !s) return s.error();
  return executor;
}

Status Executor::bind_collective_groups() {
  std::map<int32_t, RuntimeValue*> constant_at;
  for (auto& constant : plan_.constants) constant_at[constant.slot] = &constant.value;
  const fb::Program& program = file_->program();
  auto ranks_of = [&](const std::string& name) {
    for (uint32_t g = 0; g < vector_size(program.process_groups()); ++g) {
      const auto* group = program.process_groups()->Get(g);
      if (group->name()->string_view() != name) continue;
      std::string text = " (ranks [";
      for (uint32_t r = 0; r < vector_size(group->ranks()); ++r) text += (r ? ", " : "") + std::to_string(group->ranks()->Get(r));
      return text + (vector_size(group->ranks()) ? "])" : "the whole world])");
    }
    return std::string(" (not a process group of the program)");
  };
  for (const PlannedNode& node : plan_.nodes) {
    if (!node.target.starts_with("_c10d_functional::")) continue;
    for (size_t i = 0; i < node.arg_slots.size(); ++i) {
      auto it = constant_at.find(node.arg_slots[i]);
      if (it == constant_at.end()) continue;
      RuntimeValue& value = *it->second;
      // torch's functional collectives take the group as `str group_name`, always the last
      // parameter; a file may carry it as a plain string rather than a ProcessGroupArg.
      const bool names_group =
          node.arg_names[i] == "group_name" || (node.arg_names[i].empty() && i + 1 == node.arg_slots.size());
      if (const auto* name = std::get_if<std::string>(&value); name != nullptr && names_group) {
        value = ProcessGroupRef{*name, groups_->find(*name)};
      }
      const auto* ref = std::get_if<ProcessGroupRef>(&value);
      if (ref != nullptr && ref->group == nullptr) {
        return node_error(node,
                          "process group '" + ref->name + "'" + ranks_of(ref->name) +
                              " is not bound in this process; run the program under mpirun with the ranks its "
                              "groups name (nrt-run binds them to MPI there)",
                          ErrorCode::CollectiveFailed);
      }
    }
  }
  return {};
}

Status Executor::bind_subgraphs() {
  for (auto& constant : plan_.constants) {
    auto* ref = std::get_if<GraphRef>(&constant.value);
    if (ref == nullptr) continue;
    // One runner per subgraph for the whole tree: a graph passed twice (both branches of a cond,
    // or at every level of a nest) is loaded once. Runners never run re-entrantly (no cycles).
    if (auto it = runners_->find(ref->graph); it != runners_->end()) {
      ref->runner = it->second.get();
      continue;
    }
    ExecutorOptions options;
    options.graph = ref->name;
    options.device = options_.device;
    options.poison_freed = options_.poison_freed;
    options.copy_outputs = false;  // the control-flow kernel copies what it keeps
    options.process_groups = groups_;
    auto child = load_graph(file_, std::move(options), runners_);
    if (!child) {
      return make_error(child.error().code, "graph '" + plan_.graph_name + "': subgraph '" + ref->name +
                                                "': " + child.error().message);
    }
    ref->runner = child->get();
    runners_->emplace(ref->graph, std::move(*child));
  }
  return {};
}

Result<std::vector<RuntimeValue>> Executor::run_graph(std::span<const RuntimeValue> inputs) {
  if (inputs.size() != user_input_names_.size()) {
    return make_error(ErrorCode::InputMismatch, "graph '" + plan_.graph_name + "' takes " +
                                                      std::to_string(user_input_names_.size()) + " inputs, given " +
                                                      std::to_string(inputs.size()));
  }
  NamedInputs named;
  for (size_t i = 0; i < inputs.size(); ++i) named.emplace(user_input_names_[i], inputs[i]);
  auto outputs = run(named);
  if (!outputs) return outputs.error();
  std::vector<RuntimeValue> values;
  values.reserve(outputs->size());
  for (auto& output : *outputs) values.push_back(std::move(output.value));
  return values;
}

Status Executor::bind_weights() {
  const fb::Program& program = file_->program();
  std::map<std::string_view, uint32_t> by_fqn;
  for (uint32_t w = 0; w < vector_size(program.weights()); ++w) by_fqn[program.weights()->Get(w)->fqn()->string_view()] = w;
  std::map<uint32_t, std::shared_ptr<Storage>> storages;
  std::map<uint32_t, std::shared_ptr<Storage>> mutable_storages;  // owned copies, by file storage
  std::vector<std::string> missing;
  auto& slots = frame_->slots();

  for (const PlannedInput& input : plan_.inputs) {
    if (input.value < 0) continue;
    const ValueInfo& info = plan_.values[static_cast<size_t>(input.value)];
    RuntimeValue& slot = slots[static_cast<size_t>(info.slot)];
    if (info.kind == fb::ValueKind::PROCESS_GROUP && info.process_group) {
      slot = *info.process_group;
      continue;
    }
    switch (input.kind) {
      case fb::InputKind::USER_INPUT:
        continue;
      case fb::InputKind::CONSTANT_INPUT:
        slot = input.constant.value_or(RuntimeValue{});
        continue;
      case fb::InputKind::TOKEN:
        slot = RuntimeValue{};
        continue;
      case fb::InputKind::PARAMETER:
      case fb::InputKind::BUFFER:
      case fb::InputKind::TENSOR_CONSTANT:
        break;
      default:
        return make_error(ErrorCode::NotSupported,
                          "graph '" + plan_.graph_name + "': input '" + info.name + "' of kind " +
                              fb::EnumNameInputKind(input.kind) + " is not supported by the executor");
    }
    auto it = by_fqn.find(input.target);
    if (it == by_fqn.end()) {
      missing.push_back(std::string(fb::EnumNameInputKind(input.kind)) + " '" + input.target + "' (value '" +
                        info.name + "')");
      continue;
    }
    const auto* weight = program.weights()->Get(it->second);
    const auto* meta = weight->meta();
    const size_t elem = nrt::element_size(meta->dtype());
    std::vector<int64_t> sizes, strides;
    for (uint32_t d = 0; d < vector_size(meta->sizes()); ++d) {
      sizes.push_back(meta->sizes()->Get(d)->literal());
      strides.push_back(meta->strides()->Get(d)->literal());
    }
    const int64_t offset = literal_of(meta->storage_offset());
    auto& storage = storages[weight->storage()];
    if (!storage) {
      const auto bytes = file_->storage_bytes(weight->storage());
      auto* data = const_cast<uint8_t*>(bytes.data());  // read-only by contract (storage.h)
      storage = Storage::borrow(data, bytes.size(), file_);
    }
    if (elem > 0 && reinterpret_cast<uintptr_t>(storage->data() + offset * static_cast<int64_t>(elem)) % elem != 0) {
      // A storage aligned below its element size: kernels may not read it in place.
      std::shared_ptr<Storage> copy;
      try {
        copy = Storage::allocate(storage->bytes());
      } catch (const std::bad_alloc& failure) {
        return memory_error("weight '" + input.target + "' (copied: its storage is aligned below its element size)", failure);
      }
      if (storage->bytes()) std::memcpy(copy->data(), storage->data(), storage->bytes());
      storage = std::move(copy);
    }
    if (info.mutated_in_place) {
      // The graph writes into this weight: it gets bytes of its own, reset from the file before
      // every run (each run sees the program's weights, as the functional form of the program would).
      auto& own = mutable_storages[weight->storage()];
      if (!own) {
        try {
          own = Storage::allocate(storage->bytes());
        } catch (const std::bad_alloc& failure) {
          return memory_error("weight '" + input.target + "' (copied: the graph mutates it)", failure);
        }
        mutable_weights_.push_back({own, storage});
      }
      storage = own;
    }
    Tensor tensor(storage, meta->dtype(), sizes, strides, offset);
    if (info.has_meta) {
      bool matches = info.dtype == meta->dtype() && info.sizes.size() == sizes.size();
      for (size_t d = 0; matches && d < sizes.size(); ++d) {
        matches = !info.sizes[d].expr.empty() || info.sizes[d].literal == sizes[d];
      }
      if (!matches) {
        return make_error(ErrorCode::WeightMismatch, "graph '" + plan_.graph_name + "': weight '" + input.target +
                                                       "' is " + tensor.type_string() + " but value '" + info.name +
                                                       "' is declared " + meta_text(info));
      }
    }
    slot = std::move(tensor);
  }
  if (!missing.empty()) {
    std::string message = "graph '" + plan_.graph_name + "': the file holds no data for " +
                          std::to_string(missing.size()) + (missing.size() == 1 ? " input:" : " inputs:");
    for (const auto& m : missing) message += "\n  " + m;
    return make_error(ErrorCode::WeightMismatch, message);
  }
  return {};
}

std::vector<InputDescription> Executor::user_inputs() const {
  std::vector<InputDescription> out;
  for (const PlannedInput& input : plan_.inputs) {
    if (input.kind != fb::InputKind::USER_INPUT || input.value < 0) continue;
    const ValueInfo& info = plan_.values[static_cast<size_t>(input.value)];
    if (info.kind == fb::ValueKind::PROCESS_GROUP) continue;
    InputDescription d;
    d.name = info.name;
    d.kind = info.kind;
    d.dtype = info.dtype;
    d.sizes = info.sizes;
    d.sym_hint = info.sym_hint;
    out.push_back(std::move(d));
  }
  return out;
}

void Executor::refresh_mutated_weights() {
  for (const auto& [own, source] : mutable_weights_) {
    if (source->bytes()) std::memcpy(own->data(), source->data(), source->bytes());
  }
}

Status Executor::bind_inputs(const NamedInputs& inputs, SymbolBindings* bindings) {
  const std::string where = "graph '" + plan_.graph_name + "': ";
  auto fail = [&](const std::string& message) { return make_error(ErrorCode::InputMismatch, where + message); };
  auto& slots = frame_->slots();
  std::set<std::string_view> expected;
  std::vector<std::string> missing;
  struct Deferred {
    const ValueInfo* info;
    size_t dim;
    int64_t actual;
  };
  std::vector<Deferred> deferred;
  user_input_slots_.clear();

  auto bind_symbol = [&](const std::string& symbol, int64_t actual, const std::string& what) -> Status {
    auto [it, inserted] = bindings->emplace(symbol, actual);
    if (!inserted && it->second != actual) {
      return fail(what + " is " + std::to_string(actual) + " but symbol " + symbol + " is already " +
                  std::to_string(it->second) + " from another input");
    }
    return {};
  };

  for (const PlannedInput& input : plan_.inputs) {
    if (input.kind != fb::InputKind::USER_INPUT || input.value < 0) continue;
    const ValueInfo& info = plan_.values[static_cast<size_t>(input.value)];
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
          user_input_slots_.push_back(info.slot);
          continue;
        }
        return fail(what + " must be a tensor");
      }
      if (!(tensor->device() == plan_.device)) {
        return fail(what + " is on " + tensor->device().to_string() + ", the graph runs on " + plan_.device.to_string());
      }
      if (info.has_meta) {
        if (info.dtype != ScalarType::UNKNOWN && tensor->dtype() != info.dtype) {
          return fail(what + " is " + tensor->type_string() + " but the graph declares " + meta_text(info));
        }
        if (static_cast<size_t>(tensor->dim()) != info.sizes.size()) {
          return fail(what + " is " + tensor->type_string() + " but the graph declares " + meta_text(info));
        }
        for (size_t d = 0; d < info.sizes.size(); ++d) {
          const PlannedDim& dim = info.sizes[d];
          const int64_t actual = tensor->sizes()[d];
          if (dim.expr.empty()) {
            if (dim.literal != actual) {
              return fail(what + " is " + tensor->type_string() + " but the graph declares " + meta_text(info));
            }
          } else if (auto symbol = lone_symbol(dim.expr)) {
            if (Status s = bind_symbol(*symbol, actual, what + " dimension " + std::to_string(d)); !s) return s;
          } else {
            deferred.push_back({&info, d, actual});
          }
        }
      }
    } else if (info.kind == fb::ValueKind::SYM_INT) {
      const auto* i = std::get_if<int64_t>(&given);
      if (i == nullptr) return fail(what + " must be an int");
      if (auto symbol = lone_symbol(info.sym_expr)) {
        if (Status s = bind_symbol(*symbol, *i, what); !s) return s;
      }
    } else if (info.kind == fb::ValueKind::SYM_FLOAT) {
      if (!std::holds_alternative<double>(given)) return fail(what + " must be a float");
    } else if (info.kind == fb::ValueKind::SYM_BOOL) {
      if (!std::holds_alternative<bool>(given)) return fail(what + " must be a bool");
    }
    slots[static_cast<size_t>(info.slot)] = given;
    user_input_slots_.push_back(info.slot);
    if (const auto* tensor = std::get_if<Tensor>(&given); tensor && info.mutated_in_place) {
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
  return make_error(code, "graph '" + plan_.graph_name + "' node " + std::to_string(node.node_index) + " '" +
                              node.name + "' (" + node.target + "): " + message);
}

// A kernel's result must match the graph's metadata, and only views may alias planned memory.
Status Executor::check_result(const PlannedNode& node, size_t value, const RuntimeValue& result) const {
  const ValueInfo& info = plan_.values[value];
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
    const auto* sizes = frame_->concrete_sizes(value);
    if ((info.dtype != ScalarType::UNKNOWN && t->dtype() != info.dtype) || (sizes && *sizes != t->sizes())) {
      return node_error(node,
                        "produced " + t->type_string() + " for '" + info.name + "', the graph records " +
                            (sizes ? std::string(nrt::short_name(info.dtype)) + sizes_text(*sizes) : meta_text(info)),
                        ErrorCode::KernelResultMismatch);
    }
  }
  // Every planned tensor shares the arena's one Storage, so aliasing shows as that storage at
  // an offset other than the value's own.
  if (!node.kernel.is_view && frame_->is_arena(t->storage().get())) {
    const Tensor* planned = frame_->planned_tensor(value);
    if (planned == nullptr || planned->storage_offset() != t->storage_offset()) {
      return node_error(node,
                        "output '" + info.name + "' aliases memory planned for another value; a kernel returning a "
                        "view of an input must be registered with KernelInfo::is_view",
                        ErrorCode::KernelResultMismatch);
    }
  }
  return {};
}

void Executor::build_compact_nodes() {
  compact_nodes_.resize(plan_.nodes.size());
  for (size_t n = 0; n < plan_.nodes.size(); ++n) {
    const PlannedNode& node = plan_.nodes[n];
    CompactNode& compact = compact_nodes_[n];
    compact.fn = node.kernel.fn;
    compact.target = node.target;
    compact.first_output_slot = node.first_output_slot;
    compact.num_outputs = static_cast<uint32_t>(node.outputs.size());
    compact.outputs_begin = static_cast<uint32_t>(compact_outputs_.size());
    compact.compact = node.gathers.empty() && !node.in_place;
    for (const PlannedOutput& out : node.outputs) {
      compact.compact = compact.compact && out.kind != OutputSlotKind::kList;
      CompactOutput o;
      o.slot = out.slot;
      if (out.kind == OutputSlotKind::kValue) {
        o.value = out.value;
        o.planned = &frame_->planned_cell(static_cast<size_t>(out.value));
      }
      compact_outputs_.push_back(o);
    }
    compact.releases_begin = static_cast<uint32_t>(compact_releases_.size());
    for (int32_t v : node.releases) {
      const auto value = static_cast<size_t>(v);
      compact_releases_.push_back({plan_.values[value].slot, &frame_->planned_cell(value)});
    }
    compact.releases_end = static_cast<uint32_t>(compact_releases_.size());
  }
}

namespace {

// `t` is the view `planned` describes: the kernel wrote into the planned tensor it was given.
bool is_planned_view(const Tensor& t, const Tensor& planned) {
  return t.storage() == planned.storage() && t.storage_offset() == planned.storage_offset() &&
         t.dtype() == planned.dtype() && t.sizes() == planned.sizes();
}

}  // namespace

Status Executor::execute_compact(size_t n) {
  const CompactNode& node = compact_nodes_[n];
  RuntimeValue* slots = frame_->slots().data();
  CompactOutput* outputs = compact_outputs_.data() + node.outputs_begin;
  const uint64_t generation = frame_->plan_generation();
  // What the slot held before the call, to tell afterwards whether the kernel left it alone:
  // Tensor has no mutators, so an untouched slot still has the same sizes buffer.
  struct Placed {
    const Storage* storage;
    const int64_t* sizes;
  };
  std::array<Placed, 4> placed{};
  for (uint32_t i = 0; i < node.num_outputs; ++i) {
    RuntimeValue& slot = slots[outputs[i].slot];
    const Tensor* planned = outputs[i].planned;
    if (planned != nullptr && planned->defined()) {
      const auto* current = std::get_if<Tensor>(&slot);
      if (current == nullptr ||
          (outputs[i].placed_generation != generation && !is_planned_view(*current, *planned))) {
        slot = *planned;
        current = std::get_if<Tensor>(&slot);
      }
      if (i < placed.size()) placed[i] = {current->storage().get(), current->sizes().data()};
    } else if (!std::holds_alternative<std::monostate>(slot)) {
      slot = RuntimeValue{};
    }
  }
  KernelContext context(node.target, frame_->arguments(n),
                        std::span<RuntimeValue>(slots + node.first_output_slot, node.num_outputs), plan_.device);
  if (Status s = call_kernel(node.fn, context); !s) {
    for (uint32_t i = 0; i < node.num_outputs; ++i) outputs[i].placed_generation = 0;
    return node_error(plan_.nodes[n], s.error().message, s.error().code);
  }
  for (uint32_t i = 0; i < node.num_outputs; ++i) {
    if (outputs[i].value < 0) continue;
    const RuntimeValue& slot = slots[outputs[i].slot];
    // A result left in its planned tensor has the recorded dtype and sizes and aliases nothing
    // else: the full check is for the rest.
    const auto* t = std::get_if<Tensor>(&slot);
    const Tensor* planned = outputs[i].planned;
    if (t != nullptr && planned->defined() && i < placed.size() && t->storage().get() == placed[i].storage &&
        t->storage() == planned->storage() && t->sizes().data() == placed[i].sizes &&
        t->storage_offset() == planned->storage_offset() && t->dtype() == planned->dtype()) {
      outputs[i].placed_generation = generation;
      continue;
    }
    outputs[i].placed_generation = 0;
    if (Status s = check_result(plan_.nodes[n], static_cast<size_t>(outputs[i].value), slot); !s) {
      // The slots of this node hold whatever the kernel left: none is trusted on the next run.
      for (uint32_t j = 0; j < node.num_outputs; ++j) outputs[j].placed_generation = 0;
      return s;
    }
  }
  for (uint32_t r = node.releases_begin; r < node.releases_end; ++r) {
    const CompactRelease& release = compact_releases_[r];
    if (!release.planned->defined()) slots[release.slot] = RuntimeValue{};
  }
  return {};
}

// The functional result in the node's output slot goes into the mutated tensor (through its
// strides, with torch's dtype conversion), which then becomes the node's output.
Status Executor::write_in_place(const PlannedNode& node) {
  auto& slots = frame_->slots();
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
  KernelContext context(kWriteBackTarget, arguments, std::span<RuntimeValue>(&out, 1), plan_.device);
  if (Status s = call_kernel(write.write_back, context); !s) return node_error(node, s.error().message, s.error().code);
  const auto* written = std::get_if<Tensor>(&out);
  if (written == nullptr || written->storage() != target->storage() ||
      written->storage_offset() != target->storage_offset() || written->strides() != target->strides()) {
    return node_error(node, std::string(kWriteBackTarget) + " did not write into the tensor it was given",
                      ErrorCode::KernelResultMismatch);
  }
  return {};
}

Status Executor::execute_node(size_t n) {
  const PlannedNode& node = plan_.nodes[n];
  auto& slots = frame_->slots();

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
    const Tensor* planned = out.kind == OutputSlotKind::kValue ? frame_->planned_tensor(static_cast<size_t>(out.value))
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
    // The functional kernel writes into scratch; write_in_place moves the result into place.
    const int32_t scratch = node.in_place->scratch_value;
    const Tensor* planned = scratch >= 0 ? frame_->planned_tensor(static_cast<size_t>(scratch)) : nullptr;
    slots[static_cast<size_t>(node.first_output_slot)] = planned ? RuntimeValue{*planned} : RuntimeValue{};
  }

  KernelContext context(node.target, frame_->arguments(n),
                        std::span<RuntimeValue>(slots.data() + node.first_output_slot, node.outputs.size()),
                        plan_.device);
  if (Status s = call_kernel(node.kernel.fn, context); !s) return node_error(node, s.error().message, s.error().code);
  if (node.in_place) {
    if (Status s = write_in_place(node); !s) return s;
  }

  for (const PlannedOutput& out : node.outputs) {
    RuntimeValue& slot = slots[static_cast<size_t>(out.slot)];
    if (out.kind == OutputSlotKind::kValue) {
      if (Status s = check_result(node, static_cast<size_t>(out.value), slot); !s) return s;
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
          RuntimeValue& target = slots[static_cast<size_t>(plan_.values[v].slot)];
          target = std::move((*list)[e]);
          if (Status s = check_result(node, v, target); !s) return s;
        }
      } else {
        return node_error(node, "the kernel did not produce a tensor list", ErrorCode::KernelResultMismatch);
      }
      slot = RuntimeValue{};
    }
  }

  const bool poisoning = frame_->poisoning();
  for (int32_t v : node.releases) {
    const auto value = static_cast<size_t>(v);
    if (poisoning) frame_->end_lifetime(value);
    if (frame_->planned_tensor(value) == nullptr) slots[static_cast<size_t>(plan_.values[value].slot)] = RuntimeValue{};
  }
  return {};
}

std::string Executor::argument_shapes(size_t n) const {
  std::string shapes;
  for (const NamedValue& argument : frame_->arguments(n)) {
    if (const auto* t = std::get_if<Tensor>(argument.value); t && t->defined()) {
      shapes += (shapes.empty() ? "" : ", ") + t->type_string();
    } else if (const auto* list = std::get_if<std::vector<Tensor>>(argument.value)) {
      shapes += (shapes.empty() ? "" : ", ") + std::string("[") + std::to_string(list->size()) + " tensors]";
    }
  }
  return shapes;
}

Status Executor::execute_profiled(size_t n, bool compact) {
  // Shapes are read before the call: list arguments are gathered by execute_node itself.
  std::string shapes = profile_->record_shapes() ? argument_shapes(n) : std::string();
  const auto start = std::chrono::steady_clock::now();
  Status status = compact ? execute_compact(n) : execute_node(n);
  const auto end = std::chrono::steady_clock::now();
  profile_->record(static_cast<uint32_t>(n), start, end, std::move(shapes));
  return status;
}

Result<std::vector<NamedOutput>> Executor::run(const NamedInputs& inputs) {
  SymbolBindings bindings;
  Status status = bind_inputs(inputs, &bindings);
  if (status) status = frame_->prepare(bindings);
  refresh_mutated_weights();
  const bool poisoning = frame_->poisoning();
  if (profile_ == nullptr) {
    for (size_t n = 0; status && n < plan_.nodes.size(); ++n) {
      status = !poisoning && compact_nodes_[n].compact ? execute_compact(n) : execute_node(n);
    }
  } else {
    profile_->begin_run();
    for (size_t n = 0; status && n < plan_.nodes.size(); ++n) {
      status = execute_profiled(n, !poisoning && compact_nodes_[n].compact);
    }
  }

  std::vector<NamedOutput> outputs;
  if (status) {
    auto& slots = frame_->slots();
    for (const PlannedGraphOutput& out : plan_.outputs) {
      if (out.kind != fb::OutputKind::USER_OUTPUT && out.kind != fb::OutputKind::LOSS_OUTPUT) continue;
      RuntimeValue value = out.value >= 0 ? slots[static_cast<size_t>(plan_.values[static_cast<size_t>(out.value)].slot)]
                                          : out.constant.value_or(RuntimeValue{});
      if (options_.copy_outputs) {
        // A view of any size costs nothing until here; its copy is within the budget or an error.
        try {
          if (auto* t = std::get_if<Tensor>(&value); t && t->defined()) value = contiguous_copy(*t);
        } catch (const std::bad_alloc& failure) {
          status = memory_error("graph '" + plan_.graph_name + "': output '" + out.name + "'", failure);
          break;
        }
      }
      outputs.push_back(NamedOutput{out.name, std::move(value)});
    }
  }
  // The caller's inputs are not kept past the run.
  for (int32_t slot : user_input_slots_) frame_->slots()[static_cast<size_t>(slot)] = RuntimeValue{};
  user_input_slots_.clear();
  if (!status) return status.error();
  return outputs;
}

}  // namespace nrt::exec
