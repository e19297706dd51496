// DTensor programs from untrusted bytes: a file that verifies must shard for each rank of its
// mesh (the sharding pass nrt-run runs at load, executor/dtensor/sharding_pass.h) into a plan
// or an error, never a crash, a hang or an unbounded allocation. Ranks 0 to 3 of the mesh's
// world are tried. Built and run by scripts/fuzz.sh.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "executor/dtensor/sharding_pass.h"
#include "serializer/program_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = nrt::ProgramFile::from_bytes(std::vector<uint8_t>(data, data + size));
  if (!file || !nrt::dist::is_dtensor_program(file->program())) return 0;
  const int32_t world = nrt::dist::mesh_world_size(file->program());
  for (int32_t rank = 0; rank < std::min(world, 4); ++rank) {
    auto sharded = nrt::dist::shard_for_rank(file->program(), {rank, world, "", rank % 2 == 0});
    (void)sharded;
  }
  return 0;
}
