// The kernel interface. A kernel is a function of a KernelContext, registered per target
// ("aten::add.Tensor") and device kind; it dispatches on dtype itself. The executor resolves a
// node's arguments once, at plan time, into RuntimeValues (constants converted, references
// pointing into the execution frame) and calls the kernel with them.
//
// Outputs: when the graph gives an output a static shape, the executor places a tensor of that
// shape, in planned arena memory, in `outputs[i]` before the call, and the kernel writes into it.
// Its strides are those the graph records when they lay the shape out densely (a permutation of
// a contiguous layout, as torch's attention outputs), else contiguous: kernels honour the output's
// strides (or replace it with a fresh tensor). Otherwise `outputs[i]` is empty and the kernel
// allocates. View kernels (KernelInfo::is_view) replace `outputs[i]` with a view of an input;
// the planner gives them no memory. A kernel that is not a view must never return (a view of) an
// input: the input's planned memory may be reused while the output is live (the executor reports
// an output aliasing planned memory other than its own).
#pragma once

#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string_view>

#include "executor/runtime/kernel_state.h"
#include "executor/runtime/runtime_value.h"
#include "core/error.h"

namespace nrt::exec {

struct NamedValue {
  std::string_view name;       // schema argument name ("self", "other", "alpha", ...)
  const RuntimeValue* value;   // never null; a None argument points at a monostate
};

class PendingCollectives;

class KernelContext {
 public:
  KernelContext(std::string_view target, std::span<const NamedValue> inputs, std::span<RuntimeValue> outputs,
                Device device)
      : target_(target), inputs_(inputs), outputs_(outputs), device_(device) {}

  std::string_view target() const { return target_; }
  Device device() const { return device_; }
  std::span<const NamedValue> inputs() const { return inputs_; }
  std::span<RuntimeValue> outputs() const { return outputs_; }

  // The device's opaque execution context (Allocator::execution_context: a CUDA stream, say);
  // nullptr on the host.
  void* device_context() const { return device_context_; }
  void set_device_context(void* context) { device_context_ = context; }

  // The run's collectives in flight (executor/comm/pending_collectives.h), set for `_c10d_functional::*`
  // nodes; nullptr otherwise (a collective kernel then waits for its Work itself). A collective
  // may leave its Work there only when `may_defer_wait()`: the plan found that only wait_tensor
  // reads its output.
  PendingCollectives* pending_collectives() const { return pending_; }
  bool may_defer_wait() const { return may_defer_wait_; }
  void set_pending_collectives(PendingCollectives* pending, bool may_defer_wait) {
    pending_ = pending;
    may_defer_wait_ = may_defer_wait;
  }

  // The run's seed and this node's random stream (a hash of its graph's and its own name, so that
  // no schedule changes it): the seeded random ops (OpFacts::seeded_draw) derive their key from
  // both (docs/RANDOM.md). Both 0 for other ops.
  uint64_t seed() const { return seed_; }
  uint64_t random_stream() const { return random_stream_; }
  void set_random(uint64_t seed, uint64_t stream) {
    seed_ = seed;
    random_stream_ = stream;
  }

  // The node's slot in the run's frame for what the kernel keeps between calls (kernel_state.h);
  // nullptr where the caller gives none.
  KernelStateSlot* kernel_state() const { return kernel_state_; }
  void set_kernel_state(KernelStateSlot* slot) { kernel_state_ = slot; }

  // The argument called `name`, else the one at `position`; nullptr when absent (a default applies).
  const RuntimeValue* find(std::string_view name, int position) const;

  // Typed access; an absent argument gives the default, a wrong type a KernelError
  // naming the target and argument.
  Result<Tensor> tensor(std::string_view name, int position) const;
  Result<std::optional<Tensor>> optional_tensor(std::string_view name, int position) const;
  Result<std::vector<Tensor>> tensor_list(std::string_view name, int position) const;
  Result<int64_t> int64(std::string_view name, int position, std::optional<int64_t> fallback = std::nullopt) const;
  Result<double> real(std::string_view name, int position, std::optional<double> fallback = std::nullopt) const;
  Result<bool> boolean(std::string_view name, int position, std::optional<bool> fallback = std::nullopt) const;
  Result<std::vector<int64_t>> int_list(std::string_view name, int position,
                                        std::optional<std::vector<int64_t>> fallback = std::nullopt) const;
  Result<std::optional<ScalarType>> scalar_type(std::string_view name, int position) const;

  Error error(const std::string& message) const;  // KernelError, prefixed with the target

 private:
  std::string_view target_;
  std::span<const NamedValue> inputs_;
  std::span<RuntimeValue> outputs_;
  Device device_;
  PendingCollectives* pending_ = nullptr;
  bool may_defer_wait_ = false;
  void* device_context_ = nullptr;
  uint64_t seed_ = 0;
  uint64_t random_stream_ = 0;
  KernelStateSlot* kernel_state_ = nullptr;
};

using KernelFn = Status (*)(KernelContext&);

// The MemoryBudgetExceeded error of a kernel whose allocation was refused.
Error kernel_memory_error(const KernelContext& context, const std::bad_alloc& failure);

// Runs a kernel. An allocation it cannot make (past the memory budget, or refused by the
// system) ends it with an error naming the target and the bytes, never an exception.
inline Status call_kernel(KernelFn fn, KernelContext& context) {
  try {
    return fn(context);
  } catch (const std::bad_alloc& failure) {
    return kernel_memory_error(context, failure);
  }
}

struct KernelInfo {
  KernelFn fn = nullptr;
  bool is_view = false;  // output aliases an input; needs no planned memory
};

// Kernels by target and device kind. Registries are separate: a test or a library user may
// build one of their own; the built-in kernels register in global() at static initialisation.
// Each kernel remembers who registered it (its origin: a source file, a library path).
class KernelRegistry {
 public:
  KernelRegistry();
  ~KernelRegistry();
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  static KernelRegistry& global();

  // Registers `info` for `target` on `device`. A target the device already has is an error naming
  // both origins, unless the same origin registers the same function again (a no-op), or
  // `replace` is set: then the new kernel wins and `replaced` (when given) gets the old origin.
  Status add(std::string_view target, DeviceKind device, KernelInfo info, std::string_view origin = "nrt",
             bool replace = false, std::string* replaced = nullptr);
  // Stable while the registry lives (a replaced kernel updates the same entry).
  const KernelInfo* find(std::string_view target, DeviceKind device) const;
  std::string origin(std::string_view target, DeviceKind device) const;  // empty when absent
  std::vector<std::string> targets(DeviceKind device) const;  // sorted

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct NamedKernel {
  const char* target;
  KernelInfo info;
};

// Registers each kernel of `kernels` for every device of `devices` at static initialisation: the
// kernels that read no element on the host (views, creation made on the host and copied, metadata)
// serve every device. Returns true, for a namespace-scope initialiser.
bool register_for_devices(std::span<const NamedKernel> kernels, std::initializer_list<DeviceKind> devices,
                          const char* origin = __builtin_FILE());

// Registers a built-in kernel at static-initialisation time (link kernel libraries with
// alwayslink = True). Two built-in registrations of one target are a bug of the build: the
// process stops at start-up, naming both files.
struct KernelRegistration {
  KernelRegistration(std::string_view target, DeviceKind device, KernelInfo info,
                     const char* origin = __builtin_FILE());
};

}  // namespace nrt::exec
