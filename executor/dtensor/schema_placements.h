// Placements and meshes between the file's schema and nrt's runtime forms (placement.h,
// shard_layout.h), checked both ways.
#pragma once

#include <vector>

#include "core/error.h"
#include "executor/dtensor/placement.h"
#include "executor/dtensor/shard_layout.h"
#include "schema/nrt_generated.h"

namespace nrt::dist {

Result<Placement> from_schema(const fb::Placement& placement);
// A DTensorSpec's placements, each through from_schema.
Result<Placements> from_schema(const std::vector<fb::Placement>& placements);
fb::Placement to_schema(const Placement& placement);
Mesh mesh_from_schema(const fb::DeviceMeshT& mesh, int64_t index);

}  // namespace nrt::dist
