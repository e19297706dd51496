// Bounds on what a file may declare, in one place (docs/FORMAT.md §Limits lists them). A file
// that declares more is refused before anything of that size is allocated.
#pragma once

#include <cstdint>

namespace nrt {

// A value or storage whose byte size exceeds this cannot be addressed by any process: it is the
// 48-bit virtual address space of x86-64 and AArch64 (256 TiB).
inline constexpr uint64_t kMaxAddressableBytes = uint64_t{1} << 48;

// A storage's alignment is a power of two no larger than a page: more would make a small file
// need padding of any size when it is written.
inline constexpr uint64_t kMaxStorageAlignment = 4096;

// torch.export JSON (a bare ExportedProgram JSON, a .pt2's model and payload configs): text
// beyond this is refused before it is read. Exports of large models stay far below it.
inline constexpr uint64_t kMaxTorchJsonBytes = uint64_t{256} << 20;

// .nrt.json text beyond this is refused before it is read (the binary form is for large programs).
inline constexpr uint64_t kMaxNrtJsonBytes = uint64_t{1} << 30;

// A device mesh holds at most this many ranks and dimensions. Planning a sharded run is linear in
// the ranks times the dimensions for each dimension; beyond these a file is hostile, not a job (the
// largest meshes run have a few dims and 10^5 ranks).
inline constexpr uint64_t kMaxMeshRanks = uint64_t{1} << 20;
inline constexpr uint32_t kMaxMeshDims = 16;

}  // namespace nrt
