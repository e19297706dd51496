#include "executor/dtensor/sharded_program.h"

#include "executor/dtensor/redistribute.h"

namespace nrt::dist {

Result<ShardedProgram> shard_program_file(const ProgramFile& file, const ShardingOptions& options) {
  NRT_TRY(plan, shard_for_rank(file.program(), options));
  NRT_TRY(rewritten, ProgramFile::with_program(file, plan->program));
  return ShardedProgram{std::move(*rewritten), std::move(*plan)};
}

Status shard_user_inputs(const ShardingResult& plan, exec::NamedInputs& inputs) {
  for (const ShardedValue& input : plan.inputs) {
    auto it = inputs.find(input.name);
    if (it == inputs.end()) continue;
    auto* tensor = std::get_if<exec::Tensor>(&it->second);
    if (tensor == nullptr) continue;
    if (tensor->sizes() != input.global_sizes) {
      std::string want;
      for (auto s : input.global_sizes) want += (want.empty() ? "" : ",") + std::to_string(s);
      return make_error(ErrorCode::InvalidArgument, "input '" + input.name + "': got " + tensor->type_string() +
                                                        ", the DTensor's global sizes are [" + want +
                                                        "] (inputs are given whole; each rank takes its shard)");
    }
    NRT_TRY(local, local_from_global(*tensor, input.placements, plan.mesh.shape, plan.coordinate));
    it->second = std::move(*local);
  }
  return {};
}

std::vector<exec::InputDescription> global_input_descriptions(const ShardingResult& plan,
                                                              std::vector<exec::InputDescription> declared) {
  for (auto& d : declared) {
    for (const ShardedValue& input : plan.inputs) {
      if (input.name != d.name) continue;
      d.sizes.clear();
      for (int64_t s : input.global_sizes) d.sizes.push_back(exec::PlannedDim{s, {}, {}});
    }
  }
  return declared;
}

}  // namespace nrt::dist
