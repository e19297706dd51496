// nrt::Session — the library's one entry point to run a program, on one rank or on every rank of
// a launched world (mpirun). It owns the sequence every front end needs (cli/, bench/, python/):
//
//   open (any format, verified once: serializer/open_program.h)
//   -> agree across ranks (all hold the same program, or the same collective schedule)
//   -> shard a DTensor program for this rank (executor/dtensor/sharded_program.h)
//   -> bind the program's process groups (MPI under a launcher) and trace them (sequence numbers,
//      NaN check, flight recorder, watchdog: executor/comm/traced_process_group.h)
//   -> load (execution plan, memory plan)
//   -> run with global or local inputs, giving global or local outputs.
//
// Under a launcher, open() is collective: every rank calls it, and either all ranks get a session
// or all get an error (a rank's bad file stops every rank before any collective, instead of
// leaving the others waiting). A session runs one call at a time per thread; runs may overlap
// (Executor's frames are pooled).
//
// Under a launcher a session also installs the process's SIGTERM/SIGUSR1 flight-recorder dumps
// (executor/comm/dump_on_signal.h): one handler per process, so the session opened last owns it,
// and destroying any launched session removes it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/comm/rank_world.h"
#include "executor/comm/traced_process_group.h"
#include "executor/dtensor/shard_plan.h"
#include "executor/dtensor/sharding_pass.h"
#include "executor/runtime/executor.h"
#include "serializer/open_program.h"

namespace nrt {

struct SessionOptions {
  OpenOptions open;                    // format, verification, import warnings
  std::string graph;                   // empty: the first entry point
  // Ranks open files of their own (a FILE with {rank}): they must agree on what they communicate
  // (their collective schedules), not on the whole program.
  bool per_rank_program = false;
  // Makes a plain program a DTensor program before sharding (the plans of `nrt-inspect shard`).
  std::optional<dist::ShardPlan> shard_plan;
  // DTensor outputs: each rank's local tensor in its placements, instead of the global value.
  bool local_outputs = false;
  // Freed intermediate memory is filled with NaN (default: NRT_POISON_FREED).
  std::optional<bool> poison_freed;
  // Where the program runs: the host, or a CUDA device (inputs are copied there and outputs back).
  Device device;
  // float32 matrix products may use TF32 on the device (process-wide: executor/runtime/matmul_precision.h).
  bool allow_tf32 = false;
  // Threads inside ops (process-wide: executor/runtime/intra_op_threads.h): 0 leaves them unset
  // (ops on the calling thread, OpenBLAS at its own default), N splits large element-wise maps and
  // per-channel convolutions over N threads and runs the GEMMs on N OpenBLAS threads.
  int threads = 0;
  // The seed of the seeded random ops (rand, randn, randint, normal, bernoulli, dropout in
  // training): each node draws from fold_in(key(seed), its stream), every element from its own
  // index, so the values are the same on any schedule, sharding or rank count (docs/RANDOM.md).
  // torch's stateless _philox_* ops take their key from the graph instead.
  uint64_t seed = 0;
  // Kernel libraries (custom ops, executor/runtime/kernel_library.h) loaded before opening.
  std::vector<std::string> kernel_libraries;
  bool kernel_library_override = false;
  // Called instead of returning when the world cannot go on and other ranks may be waiting
  // forever: an agreement collective itself failed, or (after the flight recorder's dump) a
  // collective passed the watchdog's timeout. Default: log, flush and end every rank
  // (exec::abort_mpi_world, exit status 2). Must not return; it may run on the watchdog's thread.
  std::function<void(const Error&)> abandon;
};

// Whether inputs are given as global tensors (cut to this rank's shards by the session) or as
// this rank's local tensors already. Plain (non-DTensor) programs have no difference.
enum class InputsAre { kGlobal, kLocal };

class Session {
 public:
  // Opens `path` for this process alone: a world of one.
  static Result<std::unique_ptr<Session>> open(const std::string& path, const SessionOptions& options = {});
  // Collective under a launcher: every rank of `world` calls it.
  static Result<std::unique_ptr<Session>> open(const std::string& path, const exec::RankWorld& world,
                                               const SessionOptions& options = {});
  // The same for a program already open (nrt.Runner(program)): `options.open` is not used.
  static Result<std::unique_ptr<Session>> open(ProgramFile file, const SessionOptions& options = {});
  static Result<std::unique_ptr<Session>> open(ProgramFile file, const exec::RankWorld& world,
                                               const SessionOptions& options = {});
  ~Session();

  // The inputs a caller gives: DTensor inputs with their global sizes (kGlobal) or local ones.
  std::vector<exec::InputDescription> inputs(InputsAre are = InputsAre::kGlobal) const;
  // Global inputs cut to this rank's shards (a copy per sharded input): for callers that run the
  // same inputs many times, once, then run(..., kLocal). Plain programs: `global` itself.
  Result<exec::NamedInputs> local_inputs(exec::NamedInputs global) const;
  Result<std::vector<exec::NamedOutput>> run(const exec::NamedInputs& inputs, InputsAre are = InputsAre::kGlobal);

  bool is_dtensor() const { return sharding_.has_value(); }
  // Outputs are the same on every rank (a DTensor program's global outputs).
  bool outputs_are_global() const { return sharding_.has_value() && !local_outputs_; }
  const exec::RankWorld& world() const { return world_; }
  const exec::ExecutionPlan& plan() const { return executor_->plan(); }
  const exec::MemoryPlan& memory_plan() const { return executor_->memory_plan(); }
  // The sharding pass's decisions for this rank (nullptr: not a DTensor program).
  const dist::ShardingResult* sharding() const { return sharding_ ? &*sharding_ : nullptr; }
  // This rank's collective tracing (counts, flight recorder); nullptr without a launcher.
  exec::CollectiveTracing* tracing() const { return tracing_.get(); }
  // Writes the flight recorder's dump for `reason` and logs where it went (nothing without one):
  // what a caller ending the job for a stage past its deadline leaves behind.
  void dump_flight_recorder(const char* reason) const;
  // Makes the executor's frames up to `count`, so that as many runs at once allocate none.
  Status reserve_frames(size_t count);
  // Times every node of the following runs (nullptr: stop); see Executor::set_profile.
  void set_profile(exec::RunProfile* profile) { executor_->set_profile(profile); }

 private:
  Session() = default;
  static Result<std::unique_ptr<Session>> start(Result<ProgramFile> file, const exec::RankWorld& world,
                                                const SessionOptions& options);

  exec::RankWorld world_;
  bool local_outputs_ = false;
  std::optional<dist::ShardingResult> sharding_;
  std::shared_ptr<exec::CollectiveTracing> tracing_;
  std::unique_ptr<exec::Executor> executor_;
};

// Ends the job from a rank that cannot go on while others may wait for it: `abandon` when given
// (it must not return), else log, flush and end every rank (exec::abort_mpi_world, exit status 2).
[[noreturn]] void abandon_job(const std::function<void(const Error&)>& abandon, const Error& error);

// Collective under a launcher: every rank learns whether any failed `stage`, so that all stop
// together. Returns this rank's `problem`, else the error naming the ranks that failed, else
// nullopt; an agreement that itself fails ends the job (abandon_job). Without a launcher: `problem`.
std::optional<Error> agree_on_stage(const exec::RankWorld& world, const std::optional<Error>& problem,
                                    const char* stage, const std::function<void(const Error&)>& abandon);

// Whether an error of a collective leaves the other ranks of a launched world stuck.
bool is_collective_failure(ErrorCode code);

}  // namespace nrt
