// Control flow: torch's higher-order operators that run subgraphs.
//   higher_order::cond(pred, true_fn, false_fn, operands)           -> the branch's outputs
//   higher_order::while_loop(cond_fn, body_fn, carried, additional)  -> the final carried values
//   higher_order::wrap_with_set_grad_enabled(enable_grad, body, *args) -> the body's outputs
// Grad mode means nothing at inference, so wrap_with_set_grad_enabled runs its body as it is,
// with grad enabled or not.
// Subgraphs arrive as GraphRef arguments whose runners the executor bound at load time
// (executor/runtime/graph_runner.h). A predicate is a bool, an int, or a one-element tensor of any dtype
// (non-zero is true). Results are copied out of the subgraph's memory into the node's outputs
// (the planned tensors where the graph gives static shapes), so they never alias it.
#include <string>
#include <variant>
#include <vector>

#include "executor/runtime/graph_runner.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

Result<GraphRunner*> runner_of(const KernelContext& ctx, std::string_view name, int position) {
  const RuntimeValue* value = ctx.find(name, position);
  const auto* ref = value ? std::get_if<GraphRef>(value) : nullptr;
  if (ref == nullptr) return ctx.error("argument '" + std::string(name) + "' must be a subgraph");
  if (ref->runner == nullptr) return ctx.error("subgraph '" + ref->name + "' is not bound to a runner");
  return ref->runner;
}

Result<bool> predicate_of(const KernelContext& ctx, const RuntimeValue& value, const std::string& what) {
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* i = std::get_if<int64_t>(&value)) return *i != 0;
  if (const auto* t = std::get_if<Tensor>(&value); t && t->defined()) {
    if (t->numel() != 1) return ctx.error(what + " must have one element, got " + t->type_string());
    // A predicate on a device is read through a copy to the host (the branch is chosen here).
    NRT_TRY(host, t->device().kind == DeviceKind::kCpu ? Result<Tensor>(*t) : copy_to_device(*t, Device{}));
    const Tensor value = Tensor::empty(ScalarType::FLOAT64, t->sizes());
    if (!copy_into(value, *host)) return ctx.error(what + " is " + t->type_string() + ", which is not a number");
    return value.data<double>()[0] != 0;
  }
  return ctx.error(what + " must be a bool, an int or a one-element tensor");
}

// The values of a list argument (tensors, or anything else as a single value).
Result<std::vector<RuntimeValue>> values_of(const KernelContext& ctx, std::string_view name, int position) {
  std::vector<RuntimeValue> out;
  const RuntimeValue* value = ctx.find(name, position);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return out;
  if (const auto* tensors = std::get_if<std::vector<Tensor>>(value)) {
    for (const Tensor& t : *tensors) out.emplace_back(t);
  } else if (const auto* ints = std::get_if<std::vector<int64_t>>(value)) {
    for (int64_t i : *ints) out.emplace_back(i);
  } else {
    return ctx.error("argument '" + std::string(name) + "' must be a list of tensors or ints");
  }
  return out;
}

Result<GraphOutputs> run(const KernelContext& ctx, GraphRunner& runner, std::span<const RuntimeValue> inputs) {
  if (inputs.size() != runner.num_graph_inputs()) {
    return ctx.error("subgraph '" + runner.graph_name() + "' takes " + std::to_string(runner.num_graph_inputs()) +
                     " inputs, given " + std::to_string(inputs.size()));
  }
  auto results = runner.run_graph(inputs);
  if (!results) {
    return make_error(results.error().code, std::string(ctx.target()) + ": in subgraph '" + runner.graph_name() +
                                                "': " + results.error().message);
  }
  return results;
}

// A copy of `value` that no longer refers to a subgraph's memory.
RuntimeValue owned(const RuntimeValue& value) {
  if (const auto* t = std::get_if<Tensor>(&value); t && t->defined()) return contiguous_copy(*t);
  return value;
}

Status write_results(KernelContext& ctx, const std::string& graph, std::vector<RuntimeValue>& results) {
  auto outputs = ctx.outputs();
  if (results.size() != outputs.size()) {
    return ctx.error("subgraph '" + graph + "' returned " + std::to_string(results.size()) + " values, the node has " +
                     std::to_string(outputs.size()) + " outputs");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const auto* result = std::get_if<Tensor>(&results[i]);
    auto* planned = std::get_if<Tensor>(&outputs[i]);
    if (result != nullptr && result->defined() && planned != nullptr && planned->defined()) {
      if (result->dtype() != planned->dtype() || result->sizes() != planned->sizes()) {
        return ctx.error("subgraph '" + graph + "' output " + std::to_string(i) + " is " + result->type_string() +
                         ", the node records " + planned->type_string());
      }
      if (Status s = copy_elements(*result, *planned); !s) return ctx.error(s.error().message);
    } else {
      outputs[i] = owned(results[i]);
    }
  }
  return {};
}

Status cond(KernelContext& ctx) {
  const RuntimeValue* pred = ctx.find("pred", 0);
  if (pred == nullptr) return ctx.error("missing argument 'pred'");
  NRT_TRY(take_true, predicate_of(ctx, *pred, "pred"));
  NRT_TRY(branch, runner_of(ctx, *take_true ? "true_fn" : "false_fn", *take_true ? 1 : 2));
  NRT_TRY(operands, values_of(ctx, "operands", 3));
  NRT_TRY(results, run(ctx, **branch, *operands));
  return write_results(ctx, (*branch)->graph_name(), results->values);
}

Status while_loop(KernelContext& ctx) {
  NRT_TRY(cond_fn, runner_of(ctx, "cond_fn", 0));
  NRT_TRY(body_fn, runner_of(ctx, "body_fn", 1));
  NRT_TRY(carried, values_of(ctx, "carried_inputs", 2));
  NRT_TRY(additional, values_of(ctx, "additional_inputs", 3));

  std::vector<RuntimeValue> inputs = *carried;
  inputs.insert(inputs.end(), additional->begin(), additional->end());
  for (;;) {
    NRT_TRY(verdict, run(ctx, **cond_fn, inputs));
    if (verdict->values.size() != 1) {
      return ctx.error("cond_fn '" + (*cond_fn)->graph_name() + "' returned " +
                       std::to_string(verdict->values.size()) + " values, expected 1");
    }
    NRT_TRY(go_on, predicate_of(ctx, verdict->values.front(), "the result of cond_fn"));
    if (!*go_on) break;
    NRT_TRY(next, run(ctx, **body_fn, inputs));
    if (next->values.size() != carried->size()) {
      return ctx.error("body_fn '" + (*body_fn)->graph_name() + "' returned " + std::to_string(next->values.size()) +
                       " values for " + std::to_string(carried->size()) + " carried inputs");
    }
    // The body's memory is released with `next`, so the carried values are copied out first.
    for (size_t i = 0; i < next->values.size(); ++i) inputs[i] = owned(next->values[i]);
  }
  inputs.resize(carried->size());
  return write_results(ctx, (*body_fn)->graph_name(), inputs);
}

// wrap_with_set_grad_enabled(bool enable_grad, GraphModule body, *args): the body on args (the
// node's inputs after the first two, in order).
Status wrap_with_set_grad_enabled(KernelContext& ctx) {
  const RuntimeValue* enable = ctx.find("enable_grad", 0);
  if (enable == nullptr || !std::holds_alternative<bool>(*enable)) {
    return ctx.error("the first argument (enable_grad) must be a bool");
  }
  NRT_TRY(body, runner_of(ctx, "wrapped_func", 1));
  std::vector<RuntimeValue> args;
  for (size_t i = 2; i < ctx.inputs().size(); ++i) args.push_back(*ctx.inputs()[i].value);
  NRT_TRY(results, run(ctx, **body, args));
  return write_results(ctx, (*body)->graph_name(), results->values);
}

// Subgraphs run on the node's device (their executors are loaded for it), and a predicate is
// read through a copy to the host: these serve CUDA too.
const NamedKernel kControlFlowKernels[] = {
    {"higher_order::cond", {cond, false}},
    {"higher_order::while_loop", {while_loop, false}},
    {"higher_order::wrap_with_set_grad_enabled", {wrap_with_set_grad_enabled, false}},
};
const bool kControlFlowKernelsRegistered = register_for_devices(kControlFlowKernels, {DeviceKind::kCpu, DeviceKind::kCuda});

}  // namespace
}  // namespace nrt::exec::cpu
