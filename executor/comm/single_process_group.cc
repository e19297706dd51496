#include "executor/comm/single_process_group.h"

#include "executor/runtime/tensor_copy.h"

namespace nrt::exec {
namespace {

Status copy_through(const std::string& group, const char* collective, const Tensor& input, const Tensor& output) {
  if (Status s = copy_elements(input, output); !s) {
    return make_error(ErrorCode::InvalidArgument, "process group '" + group + "' " + collective + ": " + s.error().message);
  }
  return {};
}

}  // namespace

WorkResult SingleProcessGroup::all_reduce(Tensor&, ReduceOp op) {
  // With one rank, sum, avg, product, min, max and the bitwise reductions are all the identity.
  if (op == ReduceOp::PREMUL_SUM) {
    return make_error(ErrorCode::InvalidArgument, "process group '" + name_ + "' all_reduce: PREMUL_SUM needs a factor");
  }
  return completed_work({});
}

WorkResult SingleProcessGroup::all_gather_into_tensor(const Tensor& input, Tensor& output) {
  return completed_work(copy_through(name_, "all_gather_into_tensor", input, output));
}

WorkResult SingleProcessGroup::reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp) {
  return completed_work(copy_through(name_, "reduce_scatter_tensor", input, output));
}

WorkResult SingleProcessGroup::all_to_all_single(const Tensor& input, Tensor& output,
                                                 std::span<const int64_t> output_splits,
                                                 std::span<const int64_t> input_splits) {
  if (output_splits.size() > 1 || input_splits.size() > 1 ||
      (output_splits.size() == 1 && input_splits.size() == 1 && output_splits[0] != input_splits[0])) {
    return make_error(ErrorCode::InvalidArgument,
                      "process group '" + name_ + "' all_to_all_single: splits must describe one rank");
  }
  return completed_work(copy_through(name_, "all_to_all_single", input, output));
}

WorkResult SingleProcessGroup::broadcast(Tensor&, int src) {
  if (src != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      "process group '" + name_ + "' broadcast: source rank " + std::to_string(src) + " of 1");
  }
  return completed_work({});
}

ProcessGroupRegistry single_process_registry(const fb::Program& program) {
  ProcessGroupRegistry registry;
  if (program.process_groups() == nullptr) return registry;
  for (const auto* group : *program.process_groups()) {
    // Empty ranks mean the whole world, which is {0} in a single process.
    const bool world = group->ranks() == nullptr || group->ranks()->size() == 0;
    if (world || (group->ranks()->size() == 1 && group->ranks()->Get(0) == 0)) {
      registry.bind(group->name()->str(), std::make_shared<SingleProcessGroup>(group->name()->str()));
    }
  }
  return registry;
}

}  // namespace nrt::exec
