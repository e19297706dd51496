#include "executor/runtime/executor.h"

#include <cstring>

#include "executor/runtime/allocator.h"
#include "executor/runtime/memory_budget.h"
#include "executor/comm/single_process_group.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

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
  // A device this build has no allocator for cannot hold a tensor: NotSupported, naming it. One it
  // has goes on to the kernel check, which lists every target without a kernel for it.
  Allocator* allocator = allocator_for(options.device.kind);
  if (allocator == nullptr) {
    return make_error(ErrorCode::NotSupported, "device " + options.device.to_string() +
                                                   " is not available in this build (no allocator is registered "
                                                   "for it; this build has cpu)");
  }
  NRT_RETURN_IF_ERROR(allocator->check_device(options.device));
  std::unique_ptr<Executor> executor(new Executor());
  executor->runners_ = runners != nullptr ? runners : &executor->owned_runners_;
  executor->file_ = std::move(file);
  executor->options_ = std::move(options);
  executor->device_context_ = allocator->execution_context(executor->options_.device);
  const fb::Program& program = executor->file_->program();
  // Targets without a kernel in the graph and every subgraph it reaches, reported together.
  NRT_TRY(missing, missing_kernels(program, executor->options_.graph, executor->options_.device));
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
  ExecutionPlan& bound = *plan;  // bound here, then frozen
  if (!missing->empty()) {
    std::string message = "graph '" + bound.graph_name + "': no " + executor->options_.device.to_string() +
                          " kernel for " + std::to_string(missing->size()) + " target(s) its subgraphs use:";
    for (const auto& target : *missing) message += "\n  " + target;
    return make_error(ErrorCode::MissingKernel, message);
  }

  executor->groups_ = executor->options_.process_groups;
  if (!executor->groups_) executor->groups_ = std::make_shared<const ProcessGroupRegistry>(single_process_registry(program));
  for (auto& constant : bound.constants) {
    if (auto* ref = std::get_if<ProcessGroupRef>(&constant.value)) bind_group(*ref, *executor->groups_);
  }
  for (auto& value : bound.values) {
    if (value.process_group) bind_group(*value.process_group, *executor->groups_);
  }
  NRT_RETURN_IF_ERROR(executor->bind_collective_groups(bound));
  NRT_RETURN_IF_ERROR(executor->bind_subgraphs(bound));
  executor->plan_ = std::make_shared<const ExecutionPlan>(std::move(bound));

  if (executor->options_.poison_freed) {
    executor->frame_options_.poison_freed = *executor->options_.poison_freed;
  } else {
    NRT_TRY(poison, poison_requested_by_environment());
    executor->frame_options_.poison_freed = *poison;
  }
  NRT_RETURN_IF_ERROR(executor->bind_weights(*executor->plan_));
  executor->build_compact_nodes();
  if (executor->plan_->device.kind == DeviceKind::kCpu) executor->constant_nodes_ = find_constant_nodes(*executor->plan_);
  for (const InputDescription& input : executor->user_inputs()) executor->user_input_names_.push_back(input.name);
  NRT_TRY(frame, executor->make_frame());
  executor->first_frame_ = frame->get();
  executor->frames_.push_back(std::move(*frame));
  executor->idle_frames_.push_back(executor->first_frame_);
  return executor;
}

Result<std::unique_ptr<ExecutionFrame>> Executor::make_frame() const {
  auto frame = std::make_unique<ExecutionFrame>(*plan_, frame_options_);
  auto& slots = frame->slots();
  for (const ConstantSlot& bound : bound_slots_) slots[static_cast<size_t>(bound.slot)] = bound.value;
  for (const MutableWeight& weight : mutable_weights_) {
    std::shared_ptr<Storage> own;
    try {
      own = Storage::allocate(weight.source->bytes(), plan_->device);
    } catch (const std::bad_alloc& failure) {
      return memory_error("graph '" + plan_->graph_name + "': a weight the graph mutates (copied for a run)", failure);
    }
    for (int32_t s : weight.slots) {
      auto& slot = slots[static_cast<size_t>(s)];
      const Tensor& t = std::get<Tensor>(slot);
      slot = Tensor(own, t.dtype(), t.sizes(), t.strides(), t.storage_offset());
    }
    frame->add_mutable_weight(std::move(own), weight.source);
  }
  auto& placed = frame->placed_outputs();
  placed.resize(compact_outputs_.size());
  for (size_t o = 0; o < compact_outputs_.size(); ++o) {
    const int32_t value = compact_outputs_[o].value;
    placed[o].planned = value >= 0 ? &frame->planned_cell(static_cast<size_t>(value)) : nullptr;
  }
  // Static shapes are planned now, so the first run allocates nothing either.
  NRT_RETURN_IF_ERROR(frame->prepare({}));
  return frame;
}

Result<ExecutionFrame*> Executor::acquire_frame() {
  {
    std::lock_guard<std::mutex> lock(frames_mutex_);
    if (!idle_frames_.empty()) {
      ExecutionFrame* frame = idle_frames_.back();
      idle_frames_.pop_back();
      return frame;
    }
  }
  // Every frame is running: this run gets one of its own (made outside the lock), kept for later runs.
  NRT_TRY(frame, make_frame());
  std::lock_guard<std::mutex> lock(frames_mutex_);
  frames_.push_back(std::move(*frame));
  return frames_.back().get();
}

void Executor::release_frame(ExecutionFrame* frame) {
  std::lock_guard<std::mutex> lock(frames_mutex_);
  idle_frames_.push_back(frame);
}

Status Executor::reserve_frames(size_t count) {
  while (frame_count() < count) {
    NRT_TRY(frame, make_frame());
    std::lock_guard<std::mutex> lock(frames_mutex_);
    idle_frames_.push_back(frame->get());
    frames_.push_back(std::move(*frame));
  }
  return Status::Ok();
}

size_t Executor::frame_count() const {
  std::lock_guard<std::mutex> lock(frames_mutex_);
  return frames_.size();
}

Status Executor::bind_collective_groups(ExecutionPlan& plan) const {
  std::map<int32_t, RuntimeValue*> constant_at;
  for (auto& constant : plan.constants) constant_at[constant.slot] = &constant.value;
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
  for (const PlannedNode& node : plan.nodes) {
    if (!is_collective_target(node.target)) continue;
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
        return exec::node_error(plan.graph_name, node,
                          "process group '" + ref->name + "'" + ranks_of(ref->name) +
                              " is not bound in this process; run the program under mpirun with the ranks its "
                              "groups name (nrt-run binds them to MPI there)",
                          ErrorCode::CollectiveFailed);
      }
    }
  }
  return {};
}

Status Executor::bind_subgraphs(ExecutionPlan& plan) {
  for (auto& constant : plan.constants) {
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
    options.seed = options_.seed;
    options.copy_outputs = false;  // the control-flow kernel copies what it keeps
    options.process_groups = groups_;
    auto child = load_graph(file_, std::move(options), runners_);
    if (!child) {
      return make_error(child.error().code, "graph '" + plan.graph_name + "': subgraph '" + ref->name +
                                                "': " + child.error().message);
    }
    ref->runner = child->get();
    runners_->emplace(ref->graph, std::move(*child));
  }
  return {};
}


Status Executor::bind_weights(const ExecutionPlan& plan) {
  const fb::Program& program = file_->program();
  std::map<std::string_view, uint32_t> by_fqn;
  for (uint32_t w = 0; w < vector_size(program.weights()); ++w) by_fqn[program.weights()->Get(w)->fqn()->string_view()] = w;
  std::map<uint32_t, std::shared_ptr<Storage>> storages;
  std::map<uint32_t, size_t> mutable_by_storage;  // into mutable_weights_, by file storage
  std::map<uint32_t, std::shared_ptr<Storage>> device_storages;  // copies on the plan's device
  std::vector<std::string> missing;

  for (const PlannedInput& input : plan.inputs) {
    if (input.value < 0) continue;
    const ValueInfo& info = plan.values[static_cast<size_t>(input.value)];
    auto bind = [&](RuntimeValue value) { bound_slots_.push_back({info.slot, std::move(value)}); };
    if (info.kind == fb::ValueKind::PROCESS_GROUP && info.process_group) {
      bind(*info.process_group);
      continue;
    }
    switch (input.kind) {
      case fb::InputKind::USER_INPUT:
        continue;
      case fb::InputKind::CONSTANT_INPUT:
        bind(input.constant.value_or(RuntimeValue{}));
        continue;
      case fb::InputKind::TOKEN:
        bind(RuntimeValue{});
        continue;
      case fb::InputKind::PARAMETER:
      case fb::InputKind::BUFFER:
      case fb::InputKind::TENSOR_CONSTANT:
        break;
      default:
        return make_error(ErrorCode::NotSupported,
                          "graph '" + plan.graph_name + "': input '" + info.name + "' of kind " +
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
      storage = file_->mapped() ? Storage::borrow_file_mapping(data, bytes.size(), file_)
                                : Storage::borrow_constant(data, bytes.size(), file_);
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
      // The graph writes into this weight: every frame gives it bytes of its own, reset from the
      // file before every run (each run sees the program's weights, as the functional form of the
      // program would).
      auto [it, added] = mutable_by_storage.emplace(weight->storage(), mutable_weights_.size());
      if (added) mutable_weights_.push_back({storage, {}});
      mutable_weights_[it->second].slots.push_back(info.slot);
    }
    if (plan.device.kind != DeviceKind::kCpu) {
      // Another device: the weight's storage is copied there once, at load.
      auto& on_device = device_storages[weight->storage()];
      if (!on_device) {
        try {
          on_device = Storage::allocate(storage->bytes(), plan.device);
        } catch (const std::bad_alloc& failure) {
          return memory_error("weight '" + input.target + "' (copied to " + plan.device.to_string() + ")", failure);
        }
        NRT_RETURN_IF_ERROR(copy_storage_bytes(*on_device, 0, *storage, 0, storage->bytes()));
      }
      storage = on_device;
    }
    NRT_TRY(dtype, checked_from_schema(meta->dtype(), "weight '" + input.target + "' dtype"));
    Tensor tensor(storage, *dtype, sizes, strides, offset);
    if (info.has_meta) {
      bool matches = info.dtype == *dtype && info.sizes.size() == sizes.size();
      for (size_t d = 0; matches && d < sizes.size(); ++d) {
        matches = !info.sizes[d].expr.empty() || info.sizes[d].literal == sizes[d];
      }
      if (!matches) {
        return make_error(ErrorCode::WeightMismatch, "graph '" + plan.graph_name + "': weight '" + input.target +
                                                       "' is " + tensor.type_string() + " but value '" + info.name +
                                                       "' is declared " + describe_meta(info));
      }
    }
    bind(std::move(tensor));
  }
  if (!missing.empty()) {
    std::string message = "graph '" + plan.graph_name + "': the file holds no data for " +
                          std::to_string(missing.size()) + (missing.size() == 1 ? " input:" : " inputs:");
    for (const auto& m : missing) message += "\n  " + m;
    return make_error(ErrorCode::WeightMismatch, message);
  }
  return {};
}

std::vector<InputDescription> Executor::user_inputs() const {
  std::vector<InputDescription> out;
  for (const PlannedInput& input : plan_->inputs) {
    if (input.kind != fb::InputKind::USER_INPUT || input.value < 0) continue;
    const ValueInfo& info = plan_->values[static_cast<size_t>(input.value)];
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

void Executor::build_compact_nodes() {
  compact_nodes_.resize(plan_->nodes.size());
  for (size_t n = 0; n < plan_->nodes.size(); ++n) {
    const PlannedNode& node = plan_->nodes[n];
    CompactNode& compact = compact_nodes_[n];
    compact.fn = node.kernel.fn;
    compact.target = node.target;
    compact.first_output_slot = node.first_output_slot;
    compact.num_outputs = static_cast<uint32_t>(node.outputs.size());
    compact.outputs_begin = static_cast<uint32_t>(compact_outputs_.size());
    compact.compact = node.gathers.empty() && !node.in_place;
    compact.collective = node.collective;
    compact.defer_collective_wait = node.defer_collective_wait;
    compact.random_stream = node.random_stream;
    compact.context_extras = node.collective || device_context_ != nullptr || node.random_stream.has_value();
    for (const PlannedOutput& out : node.outputs) {
      compact.compact = compact.compact && out.kind != OutputSlotKind::kList;
      CompactOutput o;
      o.slot = out.slot;
      if (out.kind == OutputSlotKind::kValue) o.value = out.value;
      compact_outputs_.push_back(o);
    }
    compact.releases_begin = static_cast<uint32_t>(compact_releases_.size());
    for (int32_t v : node.releases) compact_releases_.push_back({plan_->values[static_cast<size_t>(v)].slot, v});
    compact.releases_end = static_cast<uint32_t>(compact_releases_.size());
  }
}


}  // namespace nrt::exec
