// torch's functional collectives (`_c10d_functional::*`) over the ProcessGroup the executor bound
// to their `group_name` argument (executor/comm/process_group.h): all_reduce, all_gather_into_tensor,
// reduce_scatter_tensor, all_to_all_single, broadcast, their in-place and coalesced forms, and
// wait_tensor.
//
// The functional forms (all_reduce, all_gather_into_tensor, reduce_scatter_tensor,
// all_to_all_single, broadcast) issue their collective and, when the plan allows it
// (KernelContext::may_defer_wait: only wait_tensor reads the output), return with it in flight,
// its Work left in the run's PendingCollectives; wait_tensor waits for the Work of its input and
// returns it (a view). An input the transport still reads after the kernel returns is first
// copied out of the frame's memory, which later nodes may reuse. Otherwise, and always for the `_`
// and coalesced forms, the kernel waits before it returns. The functional forms write a fresh
// output (a copy of the input reduced or broadcast in place); the `_` forms work on the input and
// return it.
//
// Errors are CollectiveFailed (NRT-E1007): an unbound group (no group of that name in this
// process: a single process running a program whose groups have several ranks, or a rank outside
// the group), a `group_size` other than the bound group's size, an unknown `reduce_op` string, a
// `src` outside the group, and whatever the group itself reports. Malformed arguments (a wrong
// type) are KernelError like any kernel's. Reduce op strings are torch's ("sum", "avg", "product",
// "min", "max", "band", "bor", "bxor"), matched without regard to case.
#include <algorithm>
#include <array>
#include <cctype>

#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/comm/pending_collectives.h"
#include "executor/comm/process_group.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

struct ReduceOpName {
  std::string_view name;
  ReduceOp op;
};

// torch's c10d functional names (torch/csrc/distributed/c10d/Functional.cpp). premul_sum is
// listed so that it is refused as unsupported rather than as unknown.
constexpr std::array<ReduceOpName, 9> kReduceOps = {{
    {"sum", ReduceOp::SUM},
    {"avg", ReduceOp::AVG},
    {"product", ReduceOp::PRODUCT},
    {"min", ReduceOp::MINIMUM},
    {"max", ReduceOp::MAXIMUM},
    {"band", ReduceOp::BAND},
    {"bor", ReduceOp::BOR},
    {"bxor", ReduceOp::BXOR},
    {"premul_sum", ReduceOp::PREMUL_SUM},
}};

// An error of the collective itself (its group, size or reduction), as opposed to a malformed
// argument: CollectiveFailed, prefixed with the target like every kernel error.
Error collective_error(const KernelContext& ctx, const std::string& message) {
  return make_error(ErrorCode::CollectiveFailed, std::string(ctx.target()) + ": " + message);
}

Result<ReduceOp> reduce_op_arg(const KernelContext& ctx, int position) {
  const RuntimeValue* value = ctx.find("reduce_op", position);
  const auto* text = value ? std::get_if<std::string>(value) : nullptr;
  if (text == nullptr) return ctx.error("argument 'reduce_op' must be a string");
  std::string lower = *text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& entry : kReduceOps) {
    if (entry.name != lower) continue;
    if (entry.op == ReduceOp::PREMUL_SUM) {
      return collective_error(ctx, "reduce_op 'premul_sum' needs a factor and is not supported");
    }
    return entry.op;
  }
  std::string known;
  for (const auto& entry : kReduceOps) {
    if (entry.op != ReduceOp::PREMUL_SUM) known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  return collective_error(ctx, "unknown reduce_op '" + *text + "' (expected one of " + known + ")");
}

// In-place forms write into their input, which must not be a weight mapped from the file.
Status check_writable(const KernelContext& ctx, const Tensor& input) {
  if (input.defined() && input.storage()->read_only()) {
    return ctx.error("cannot work in place on " + input.type_string() +
                     ": its bytes are read-only (a weight mapped from the program file)");
  }
  return {};
}

// The group the executor bound to `group_name`.
Result<ProcessGroup*> group_arg(const KernelContext& ctx, int position) {
  const RuntimeValue* value = ctx.find("group_name", position);
  if (value == nullptr) return ctx.error("missing argument 'group_name'");
  if (const auto* name = std::get_if<std::string>(value)) {
    return collective_error(ctx, "group_name '" + *name +
                                     "' is a plain string the executor did not bind (it binds the last argument of "
                                     "a _c10d_functional node, or one named group_name, when it names a group of "
                                     "Program.process_groups)");
  }
  const auto* ref = std::get_if<ProcessGroupRef>(value);
  if (ref == nullptr) return ctx.error("argument 'group_name' is not a process group");
  if (ref->group == nullptr) {
    return collective_error(ctx,
                            "process group '" + ref->name +
                                "' is not bound in this process: its ranks need a launcher (mpirun) with enough ranks, "
                                "and this process must be one of its members");
  }
  return ref->group;
}

Status check_group_size(const KernelContext& ctx, const ProcessGroup& group, int position) {
  NRT_TRY(group_size, ctx.int64("group_size", position));
  if (*group_size != group.size()) {
    return collective_error(ctx, "group_size " + std::to_string(*group_size) + " differs from the size " +
                                     std::to_string(group.size()) + " of process group '" + group.name() + "'");
  }
  return Status::Ok();
}

Status check_source(const KernelContext& ctx, const ProcessGroup& group, int64_t src) {
  if (src < 0 || src >= group.size()) {
    return collective_error(ctx, "src " + std::to_string(src) + " is not a rank of process group '" + group.name() +
                                     "' (size " + std::to_string(group.size()) + ")");
  }
  return Status::Ok();
}

// What the group reported, as this kernel's error: CollectiveFailed, except the reliability hooks'
// own codes (a NaN in a send buffer, a timeout), which stay what they are.
Error group_error(const KernelContext& ctx, const Error& reported) {
  Error e = collective_error(ctx, reported.message);
  if (reported.code == ErrorCode::NanInCollective || reported.code == ErrorCode::CollectiveTimeout) e.code = reported.code;
  return e;
}

Status collective_status(const KernelContext& ctx, Status s) {
  if (s) return s;
  return group_error(ctx, s.error());
}

// The kernel may return with its collective in flight (the plan allows it for this node).
bool defers_wait(const KernelContext& ctx) { return ctx.may_defer_wait() && ctx.pending_collectives() != nullptr; }

// An issued collective writing `output`: left in flight for wait_tensor when the kernel defers its
// wait, else waited for here.
Status issued(KernelContext& ctx, WorkResult work, const Tensor& output) {
  if (!work) return group_error(ctx, work.error());
  if (defers_wait(ctx)) {
    ctx.pending_collectives()->add(output, std::move(*work));
    return {};
  }
  return collective_status(ctx, (*work)->wait());
}

// `input` as a collective may read it after the kernel returns: out of the frame's memory.
Tensor read_after_return(const KernelContext& ctx, const Tensor& input) {
  return defers_wait(ctx) ? contiguous_copy(input) : input;
}

// A fresh output `index` holding the input's values, for collectives that work in place.
Result<Tensor> copy_to_output(KernelContext& ctx, size_t index, const Tensor& input) {
  NRT_TRY(out, bind_output(ctx, index, input.dtype(), input.sizes()));
  copy_into(*out, input);
  return *out;
}

// Output `index` of the node, or (coalesced forms, whose outputs are lists) a fresh tensor.
Result<Tensor> output_for(KernelContext& ctx, std::optional<size_t> index, ScalarType dtype,
                          const std::vector<int64_t>& sizes) {
  if (index) return bind_output(ctx, *index, dtype, sizes);
  return Tensor::empty(dtype, sizes, ctx.device());
}

// The coalesced forms: `one` applied to each tensor of the list argument `inputs`, the results
// forming the node's list output.
template <typename One>
Status for_each_input(KernelContext& ctx, One&& one) {
  NRT_TRY(inputs, ctx.tensor_list("inputs", 0));
  std::vector<Tensor> results;
  results.reserve(inputs->size());
  for (const Tensor& input : *inputs) {
    Result<Tensor> out = one(input);
    if (!out) return out.error();
    results.push_back(std::move(*out));
  }
  return set_output(ctx, 0, std::move(results));
}

std::vector<int64_t> scaled_rows(std::vector<int64_t> sizes, int64_t factor) {
  if (sizes.empty()) sizes.push_back(1);
  sizes[0] *= factor;
  return sizes;
}

// all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor
Status all_reduce(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(op, reduce_op_arg(ctx, 1));
  NRT_TRY(group, group_arg(ctx, 2));
  NRT_TRY(out, copy_to_output(ctx, 0, *input));
  return issued(ctx, (*group)->all_reduce(*out, *op), *out);
}

// all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)
Status all_reduce_in_place(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(op, reduce_op_arg(ctx, 1));
  NRT_TRY(group, group_arg(ctx, 2));
  NRT_RETURN_IF_ERROR(check_writable(ctx, *input));
  NRT_RETURN_IF_ERROR(collective_status(ctx, wait_for((*group)->all_reduce(*input, *op))));
  return set_output(ctx, 0, *input);
}

// all_reduce_coalesced(Tensor[] inputs, str reduce_op, str group_name) -> Tensor[], and the `_`
// form working on the inputs.
Status all_reduce_coalesced(KernelContext& ctx, bool in_place) {
  NRT_TRY(inputs, ctx.tensor_list("inputs", 0));
  NRT_TRY(op, reduce_op_arg(ctx, 1));
  NRT_TRY(group, group_arg(ctx, 2));
  if (in_place) {
    for (const Tensor& input : *inputs) {
      NRT_RETURN_IF_ERROR(check_writable(ctx, input));
    }
  }
  return for_each_input(ctx, [&](const Tensor& input) -> Result<Tensor> {
    Tensor target = in_place ? input : contiguous_copy(input);
    NRT_RETURN_IF_ERROR(collective_status(ctx, wait_for((*group)->all_reduce(target, *op))));
    return target;
  });
}

Result<Tensor> gather_one(KernelContext& ctx, ProcessGroup& group, const Tensor& input, std::optional<size_t> index) {
  const auto sizes = scaled_rows(input.sizes(), group.size());
  NRT_TRY(out, output_for(ctx, index, input.dtype(), sizes));
  // Coalesced forms never defer (their nodes have list outputs): issued() waits for them.
  NRT_RETURN_IF_ERROR(issued(ctx, group.all_gather_into_tensor(read_after_return(ctx, input), *out), *out));
  return out;
}

// all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor
Status all_gather_into_tensor(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(group, group_arg(ctx, 2));
  NRT_RETURN_IF_ERROR(check_group_size(ctx, **group, 1));
  auto out = gather_one(ctx, **group, *input, 0);
  return out ? Status::Ok() : Status(out.error());
}

// all_gather_into_tensor_coalesced(Tensor[] inputs, int group_size, str group_name) -> Tensor[]
Status all_gather_into_tensor_coalesced(KernelContext& ctx) {
  NRT_TRY(group, group_arg(ctx, 2));
  NRT_RETURN_IF_ERROR(check_group_size(ctx, **group, 1));
  return for_each_input(ctx, [&](const Tensor& input) { return gather_one(ctx, **group, input, std::nullopt); });
}

Result<Tensor> scatter_one(KernelContext& ctx, ProcessGroup& group, const Tensor& input, ReduceOp op,
                           std::optional<size_t> index) {
  if (input.dim() == 0 || input.size(0) % group.size() != 0) {
    return ctx.error("input " + input.type_string() + " does not split into " + std::to_string(group.size()) +
                     " equal blocks along dim 0 (process group '" + group.name() + "')");
  }
  std::vector<int64_t> sizes = input.sizes();
  sizes[0] /= group.size();
  NRT_TRY(out, output_for(ctx, index, input.dtype(), sizes));
  // Coalesced forms never defer (their nodes have list outputs): issued() waits for them.
  NRT_RETURN_IF_ERROR(issued(ctx, group.reduce_scatter_tensor(read_after_return(ctx, input), *out, op), *out));
  return out;
}

// reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor
Status reduce_scatter_tensor(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(op, reduce_op_arg(ctx, 1));
  NRT_TRY(group, group_arg(ctx, 3));
  NRT_RETURN_IF_ERROR(check_group_size(ctx, **group, 2));
  auto out = scatter_one(ctx, **group, *input, *op, 0);
  return out ? Status::Ok() : Status(out.error());
}

// reduce_scatter_tensor_coalesced(Tensor[] inputs, str reduce_op, int group_size, str group_name) -> Tensor[]
Status reduce_scatter_tensor_coalesced(KernelContext& ctx) {
  NRT_TRY(op, reduce_op_arg(ctx, 1));
  NRT_TRY(group, group_arg(ctx, 3));
  NRT_RETURN_IF_ERROR(check_group_size(ctx, **group, 2));
  return for_each_input(ctx, [&](const Tensor& input) { return scatter_one(ctx, **group, input, *op, std::nullopt); });
}

// all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes,
// str group_name) -> Tensor. Empty output splits: as many rows as the input (equal blocks).
Status all_to_all_single(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(output_splits, ctx.int_list("output_split_sizes", 1));
  NRT_TRY(input_splits, ctx.int_list("input_split_sizes", 2));
  NRT_TRY(group, group_arg(ctx, 3));
  if (input->dim() == 0) return ctx.error("input must have at least one dimension");
  std::vector<int64_t> sizes = input->sizes();
  if (!output_splits->empty()) {
    int64_t rows = 0;
    for (int64_t s : *output_splits) {
      if (s < 0 || __builtin_add_overflow(rows, s, &rows)) {
        return ctx.error("output split " + std::to_string(s) + " is negative or too large");
      }
    }
    sizes[0] = rows;
  }
  NRT_TRY(out, bind_output(ctx, 0, input->dtype(), sizes));
  return issued(ctx, (*group)->all_to_all_single(read_after_return(ctx, *input), *out, *output_splits, *input_splits),
                *out);
}

// broadcast(Tensor input, int src, str group_name) -> Tensor
Status broadcast(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(src, ctx.int64("src", 1));
  NRT_TRY(group, group_arg(ctx, 2));
  NRT_RETURN_IF_ERROR(check_source(ctx, **group, *src));
  NRT_TRY(out, copy_to_output(ctx, 0, *input));
  return issued(ctx, (*group)->broadcast(*out, static_cast<int>(*src)), *out);
}

// broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)
Status broadcast_in_place(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(src, ctx.int64("src", 1));
  NRT_TRY(group, group_arg(ctx, 2));
  NRT_RETURN_IF_ERROR(check_source(ctx, **group, *src));
  NRT_RETURN_IF_ERROR(check_writable(ctx, *input));
  Tensor target = *input;
  NRT_RETURN_IF_ERROR(collective_status(ctx, wait_for((*group)->broadcast(target, static_cast<int>(*src)))));
  return set_output(ctx, 0, *input);
}

// wait_tensor(Tensor tensor) -> Tensor: waits for the collective in flight writing `tensor`
// (none: it completed in its kernel) and returns it.
Status wait_tensor(KernelContext& ctx) {
  NRT_TRY(tensor, ctx.tensor("tensor", 0));
  if (auto* pending = ctx.pending_collectives()) {
    NRT_RETURN_IF_ERROR(collective_status(ctx, pending->wait(*tensor)));
  }
  return set_output(ctx, 0, *tensor);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"_c10d_functional::all_reduce.default", kCpu, {&all_reduce, false}},
    {"_c10d_functional::all_reduce_.default", kCpu, {&all_reduce_in_place, true}},
    {"_c10d_functional::all_reduce_coalesced.default",
     kCpu,
     {[](KernelContext& ctx) { return all_reduce_coalesced(ctx, false); }, false}},
    {"_c10d_functional::all_reduce_coalesced_.default",
     kCpu,
     {[](KernelContext& ctx) { return all_reduce_coalesced(ctx, true); }, true}},
    {"_c10d_functional::all_gather_into_tensor.default", kCpu, {&all_gather_into_tensor, false}},
    {"_c10d_functional::all_gather_into_tensor_coalesced.default", kCpu, {&all_gather_into_tensor_coalesced, false}},
    {"_c10d_functional::reduce_scatter_tensor.default", kCpu, {&reduce_scatter_tensor, false}},
    {"_c10d_functional::reduce_scatter_tensor_coalesced.default", kCpu, {&reduce_scatter_tensor_coalesced, false}},
    {"_c10d_functional::all_to_all_single.default", kCpu, {&all_to_all_single, false}},
    {"_c10d_functional::broadcast.default", kCpu, {&broadcast, false}},
    {"_c10d_functional::broadcast_.default", kCpu, {&broadcast_in_place, true}},
    {"_c10d_functional::wait_tensor.default", kCpu, {&wait_tensor, true}},
};

}  // namespace
}  // namespace nrt::exec::cpu
