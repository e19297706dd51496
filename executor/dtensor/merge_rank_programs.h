// Per-rank programs and one DTensor program, both ways. Per-rank programs (torch's per-rank .pt2 archives of a DTensor model, each imported with its own
// local shards: WeightTensor.shard_coordinate) merged into one DTensor program whose DTensor
// weights are global tensors, as `nrt-inspect shard` makes them (docs/DISTRIBUTED.md): each
// shard is placed at the region its placements give its mesh coordinate (shard_layout.h).
//
// Checked, each error naming the archive: the programs are equal apart from their weights' bytes
// and local sizes (else the first difference diff_programs finds); each holds one coordinate's
// shards, no coordinate twice, every coordinate of the mesh present (a missing rank is named);
// each local shard has the sizes its coordinate's region has (else the shards do not tile the
// global tensor); replicated copies hold equal bytes. _StridedShard weights are NotSupported.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "serializer/json_form.h"
#include "serializer/program_file.h"

namespace nrt::dist {

struct RankProgram {
  std::string name;  // the archive, for messages
  const ProgramFile* file = nullptr;
};

Result<ProgramWithWeights> merge_rank_programs(std::span<const RankProgram> ranks);

// The inverse: the program rank `rank` of a DTensor program's mesh holds as its own archive, each
// DTensor weight cut to that rank's shard (with its shard_coordinate). torch's export writes it as
// that rank's .pt2 (`nrt-inspect convert model.nrt -o 'model_rank{rank}.pt2'`).
Result<ProgramWithWeights> rank_program(const ProgramFile& file, int32_t rank);

// The ranks of the mesh the program's DTensor weights live on, in mesh order; an error when it has
// none.
Result<std::vector<int32_t>> dtensor_weight_ranks(const ProgramFile& file);

}  // namespace nrt::dist
