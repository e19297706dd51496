// DTensor parameters of a per-rank torch.export archive (`use_pickle` weights rebuilt as
// DTensors, serializer/torch_export/torch_saved_tensor.h) made into nrt's DTensor vocabulary:
// each parameter's graph input becomes a DTENSOR value (its DTensorSpec: mesh, placements, global
// sizes and strides; its `Value.tensor` the shard of mesh coordinate 0, docs/FORMAT.md), the mesh
// is added once to Program.meshes, and a process group the graph's collectives name that is one of
// the mesh's dim groups (torch's `_dim_group_names`) is tied to that mesh dim, listing the group
// of coordinate 0 along it; the sharding pass binds each rank to its own group along the dim.
// torch's own names of the mesh dims' groups, which differ between ranks, are kept in the program's
// metadata under dim_group_names_key(rank) ("4,3"-style, one per mesh dim), for writing each rank's
// archive back. The weights themselves (each rank's local shard, WeightTensor.shard_coordinate) are
// the importer's.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "schema/nrt_generated.h"
#include "serializer/torch_export/torch_saved_tensor.h"

namespace nrt::torch_export {

// fqn -> the spec its pickle holds.
using DTensorParameters = std::map<std::string, SavedDTensorSpec>;

Status apply_dtensor_parameters(const DTensorParameters& parameters, fb::ProgramT* program);

// "torch.dtensor/dim_group_names/rank<r>".
std::string dim_group_names_key(int64_t rank);

// The index of a mesh equal to `spec`'s in `program` (added when there is none).
uint32_t mesh_for(const SavedDTensorSpec& spec, fb::ProgramT* program);

}  // namespace nrt::torch_export
