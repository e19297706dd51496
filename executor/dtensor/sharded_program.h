// A DTensor program file made ready for one rank: the sharding pass's program (sharding_pass.h)
// over the file's own storages (weights stay mapped; each rank views only its shards), and the
// user inputs a caller gives as global tensors cut to this rank's shards.
#pragma once

#include <vector>

#include "core/error.h"
#include "executor/dtensor/sharding_pass.h"
#include "executor/runtime/executor.h"
#include "serializer/program_file.h"

namespace nrt::dist {

struct ShardedProgram {
  ProgramFile file;       // the program this rank runs
  ShardingResult plan;    // its decisions (plan.program is the unpacked form of file's program)
};

Result<ShardedProgram> shard_program_file(const ProgramFile& file, const ShardingOptions& options);

// Replaces every sharded user input of `inputs` (global tensors) by this rank's local tensor;
// a global tensor of other sizes than the program's is an InvalidArgument naming the input.
Status shard_user_inputs(const ShardingResult& plan, exec::NamedInputs& inputs);

// `declared` with each sharded user input's sizes made global (what a caller must supply).
std::vector<exec::InputDescription> global_input_descriptions(const ShardingResult& plan,
                                                              std::vector<exec::InputDescription> declared);

}  // namespace nrt::dist
