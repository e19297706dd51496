#include "executor/runtime/execution_frame.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "executor/runtime/allocator.h"
#include "executor/runtime/memory_budget.h"
#include "executor/runtime/reduced_float.h"
#include "core/number_text.h"
#include "core/schema_enums.h"

namespace nrt::exec {

Result<bool> poison_requested_by_environment() {
  const char* value = std::getenv("NRT_POISON_FREED");
  if (value == nullptr) return false;
  return parse_switch_text("NRT_POISON_FREED", value);
}

void poison_bytes(uint8_t* data, size_t bytes, ScalarType dtype) {
  auto fill = [&](const void* pattern, size_t size) {
    size_t i = 0;
    for (; i + size <= bytes; i += size) std::memcpy(data + i, pattern, size);
    std::memset(data + i, 0xA5, bytes - i);
  };
  switch (dtype) {
    case ScalarType::FLOAT32:
    case ScalarType::COMPLEX64: {
      const uint32_t nan = 0x7fc0a5a5u;
      fill(&nan, sizeof nan);
      return;
    }
    case ScalarType::FLOAT64:
    case ScalarType::COMPLEX128: {
      const uint64_t nan = 0x7ff8a5a5a5a5a5a5ull;
      fill(&nan, sizeof nan);
      return;
    }
    case ScalarType::FLOAT16: {
      const uint16_t nan = 0x7ea5u;
      fill(&nan, sizeof nan);
      return;
    }
    case ScalarType::BFLOAT16: {
      const uint16_t nan = 0x7fa5u;
      fill(&nan, sizeof nan);
      return;
    }
    default:
      std::memset(data, 0xA5, bytes);
  }
}

namespace {

// The recorded strides when they lay `sizes` out densely (a permutation of a contiguous
// layout, as torch gives e.g. attention outputs whose transpose is contiguous), so that later
// views see torch's layout; contiguous strides otherwise.
std::vector<int64_t> planned_strides(const ValueInfo& info, const std::vector<int64_t>& sizes,
                                     const SymbolBindings& bindings) {
  if (info.strides.size() != sizes.size()) return Tensor::contiguous_strides(sizes);
  std::vector<int64_t> strides;
  for (const auto& dim : info.strides) {
    auto value = dim.expr.empty() ? std::optional<int64_t>(dim.literal) : evaluate_sym_expr(dim.expr, bindings);
    if (!value || *value < 0) return Tensor::contiguous_strides(sizes);
    strides.push_back(*value);
  }
  std::vector<std::pair<int64_t, int64_t>> order;  // (stride, size) of dimensions longer than 1
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return Tensor::contiguous_strides(sizes);
    if (sizes[d] > 1) order.emplace_back(strides[d], sizes[d]);
  }
  std::sort(order.begin(), order.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : order) {
    if (stride != expected) return Tensor::contiguous_strides(sizes);
    expected *= size;
  }
  return strides;
}

}  // namespace

ExecutionFrame::ExecutionFrame(const ExecutionPlan& plan, FrameOptions options)
    : plan_(plan), options_(options), slots_(static_cast<size_t>(plan.num_slots)) {
  for (const auto& constant : plan.constants) slots_[static_cast<size_t>(constant.slot)] = constant.value;
  // slots_ never changes size from here on, so pointers into it stay valid.
  // Every node's arguments in one array, their names interned: a kernel looking its arguments up
  // reads a few hot names rather than one string per node.
  size_t total = 0;
  for (const PlannedNode& node : plan.nodes) total += node.arg_slots.size();
  arguments_.reserve(total);
  argument_begin_.reserve(plan.nodes.size() + 1);
  for (const PlannedNode& node : plan.nodes) {
    argument_begin_.push_back(arguments_.size());
    for (size_t a = 0; a < node.arg_slots.size(); ++a) {
      const std::string& name = *argument_names_.insert(node.arg_names[a]).first;
      arguments_.push_back(NamedValue{name, &slots_[static_cast<size_t>(node.arg_slots[a])]});
    }
  }
  argument_begin_.push_back(arguments_.size());
  kernel_states_.resize(plan.nodes.size());
  sizes_.resize(plan.values.size());
  sizes_known_.assign(plan.values.size(), false);
  planned_.resize(plan.values.size());
  planned_bytes_.assign(plan.values.size(), 0);
}

Status ExecutionFrame::prepare(const SymbolBindings& bindings) {
  if (bindings_ && *bindings_ == bindings) return {};
  // From here on the previous plan is gone, whether or not this one succeeds.
  bindings_.reset();
  ++plan_generation_;

  std::vector<BufferRequest> requests;
  std::vector<size_t> requesters;
  for (size_t v = 0; v < plan_.values.size(); ++v) {
    const ValueInfo& info = plan_.values[v];
    sizes_known_[v] = false;
    planned_[v] = Tensor();
    planned_bytes_[v] = 0;
    if (!info.has_meta) continue;
    auto& sizes = sizes_[v];
    sizes.clear();
    bool known = true;
    for (const auto& dim : info.sizes) {
      if (dim.expr.empty()) {
        sizes.push_back(dim.literal);
        continue;
      }
      auto value = evaluate_sym_expr(dim.expr, bindings);
      if (!value || *value < 0) {
        known = false;
        break;
      }
      sizes.push_back(*value);
    }
    if (!known) continue;
    sizes_known_[v] = true;
    if (!info.planned) continue;
    uint64_t bytes = nrt::element_size(info.dtype);
    for (int64_t s : sizes) {
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes) || bytes > (uint64_t{1} << 56)) {
        return make_error(ErrorCode::InvalidShape, "graph '" + plan_.graph_name + "': value '" + info.name +
                                                       "' would need more memory than can be addressed");
      }
    }
    planned_bytes_[v] = bytes;
    requests.push_back(BufferRequest{bytes, info.def_step, info.lifetime_end});
    requesters.push_back(v);
  }

  memory_ = plan_memory(requests);
  if (memory_.arena_bytes > arena_capacity()) {
    // The plan is checked against the budget before any of it is allocated.
    const std::string what = "graph '" + plan_.graph_name + "': the memory plan for these input sizes (" +
                             std::to_string(requests.size()) + " planned values, arena of " +
                             std::to_string(memory_.arena_bytes) + " bytes)";
    arena_.reset();
    try {
      arena_ = Storage::allocate(memory_.arena_bytes, plan_.device);
    } catch (const std::bad_alloc& failure) {
      return memory_error(what, failure);
    }
    ++arena_allocations_;
  }
  for (size_t r = 0; r < requesters.size(); ++r) {
    const size_t v = requesters[r];
    const ValueInfo& info = plan_.values[v];
    const auto elem = static_cast<int64_t>(nrt::element_size(info.dtype));
    std::shared_ptr<Storage> storage = arena_;
    if (!storage) storage = Storage::allocate(0, plan_.device);  // every planned value is empty
    planned_[v] = Tensor(storage, info.dtype, sizes_[v], planned_strides(info, sizes_[v], bindings),
                         static_cast<int64_t>(memory_.offsets[r]) / elem);
  }
  bindings_ = bindings;
  return {};
}

Status ExecutionFrame::refresh_mutable_weights() {
  for (const auto& [own, source] : mutable_weights_) {
    NRT_RETURN_IF_ERROR(copy_storage_bytes(*own, 0, *source, 0, source->bytes()));
  }
  return {};
}

void ExecutionFrame::end_lifetime(size_t value) {
  // Poisoning writes through host pointers: on other devices it is off.
  if (!options_.poison_freed || plan_.device.kind != DeviceKind::kCpu) return;
  if (planned_[value].defined() && planned_bytes_[value] > 0) {
    poison_bytes(planned_[value].raw_data(), planned_bytes_[value], planned_[value].dtype());
    return;
  }
  // Memory a kernel allocated and nothing else holds any more (a view would share the storage).
  auto& slot = slots_[static_cast<size_t>(plan_.values[value].slot)];
  if (const auto* t = std::get_if<Tensor>(&slot); t && t->defined() && t->storage().use_count() == 1 &&
                                                  !is_arena(t->storage().get())) {
    poison_bytes(t->storage()->data(), t->storage()->bytes(), t->dtype());
  }
}

}  // namespace nrt::exec
