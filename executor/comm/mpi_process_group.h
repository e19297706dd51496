// ProcessGroups over MPI communicators, and the MPI lifecycle of a process started by a launcher
// (mpirun, srun, mpiexec). MPI stays behind this header: it exposes the ProcessGroup interface
// only, so code that includes it needs no MPI headers (it links //executor/comm:mpi_process_group).
//
// Lifecycle: detect_mpi_launcher() reads the environment; init_mpi() initialises MPI once per
// process (MPI_Init_thread, MPI_THREAD_MULTIPLE requested: a progress thread drives nonblocking
// collectives while the graph computes, executor/comm/mpi_work.h; with less, calls are serialised),
// sets MPI_ERRORS_RETURN on the world so a failing MPI call returns to us as a Status, and
// registers MPI_Finalize to run at exit. Every other function needs init_mpi() first.
//
// Binding rules of mpi_process_registry(program):
// - Every entry of Program.process_groups is bound by its name to a communicator over its ranks,
//   created with MPI_Comm_create_group in program order (the group's index is the tag), so every
//   member takes part in the same creations in the same order; non-members take no part.
// - `ranks` are world ranks and group rank i is ranks[i] (ranks [1, 0] make world rank 1 the
//   group's rank 0). A group with empty ranks is the whole world.
// - A group naming a rank outside the world is a CollectiveFailed error naming the group,
//   its ranks and the world size; all groups are checked before any communicator is created, so
//   every rank fails the same way without waiting on the others.
// - On a rank that is not a member a group stays unbound: a program with a collective on it fails
//   to load there (Executor::load, CollectiveFailed), as a collective on it would fail in torch.
//
// Collectives follow process_group.h and are nonblocking (MPI_Iallreduce, MPI_Iallgather,
// MPI_Ireduce_scatter_block, MPI_Ialltoallv, MPI_Ibcast, MPI_Ibarrier); their Work completes on
// MPI_Test. Dtypes: f32, f64, f16, bf16, i8, i16, i32, i64, u8, bool.
// Reductions: SUM, PRODUCT, MIN, MAX for every dtype; AVG (the sum divided by the group size, in
// f64 for f64 and f32 otherwise) for floating dtypes; BAND, BOR, BXOR for integers and bool. f16
// and bf16 reduce through user-defined MPI ops computing in f32 and rounding each partial result
// back (to nearest even). bool reduces as torch's NCCL backend does: SUM and MAX are a logical or,
// PRODUCT and MIN a logical and. PREMUL_SUM, and any pairing not listed, is an error, as is a
// tensor off the CPU. Non-contiguous tensors go through contiguous staging copies. Element counts
// must fit MPI's int. Errors are CollectiveFailed (NRT-E1007) and name the group and collective;
// a failing MPI call returns one too (MPI_ERRORS_RETURN) rather than aborting.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "executor/comm/process_group.h"
#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::exec {

// The environment variable through which a launcher announced itself: OMPI_COMM_WORLD_SIZE
// (Open MPI's mpirun), PMIX_RANK (PMIx launchers: srun, prterun), PMI_SIZE (MPICH's Hydra,
// Slurm's PMI); nullopt when the process was started without one.
std::optional<std::string> detect_mpi_launcher();

// Initialises MPI once; later calls return the first call's outcome. Does not require a
// launcher (Open MPI then runs a world of one), but callers normally check detect_mpi_launcher().
Status init_mpi();

struct MpiWorld {
  int rank = 0;
  int size = 1;
};
Result<MpiWorld> mpi_world();

// A group over the whole world (its own communicator, a duplicate of MPI_COMM_WORLD, so its
// traffic never meets another group's). Collective over the world.
Result<std::shared_ptr<ProcessGroup>> create_mpi_world_group(std::string name);

// A group over `ranks` (world ranks, group rank i is ranks[i]; empty: the world). Collective over
// its members only, with `tag` telling creations apart (members must agree on it). A rank that is
// not a member takes no part and gets nullptr. Ranks outside the world or repeated are errors.
Result<std::shared_ptr<ProcessGroup>> create_mpi_process_group(std::string name, std::span<const int32_t> ranks,
                                                               int tag);

// Binds every process group of `program` as the header describes.
Result<ProcessGroupRegistry> mpi_process_registry(const fb::Program& program);

// Ends every rank of the job with `exit_code` (MPI_Abort). For a rank that failed while others
// may be waiting for it inside a collective, where returning would leave them blocked forever.
[[noreturn]] void abort_mpi_world(int exit_code);

}  // namespace nrt::exec
