#include "cli/run_options.h"

#include "cli/flag_checks.h"

namespace nrt::cli {

void add_run_options(CLI::App& app, RunOptions& options) {
  app.add_option("FILE", options.job.file,
                 "Program to run: .nrt, .nrt.json, or torch.export .pt2 / JSON ({rank} in FILE: each rank runs its own "
                 "program, as torch exports one per rank)")
      ->required();
  app.add_option("--graph", options.job.graph, "Graph to run (default: the first entry point)");
  app.add_option("--input", options.job.inputs,
                 "A user input from a .npy file: NAME=PATH.npy (repeatable; {rank} in PATH is the rank)")
      ->type_name("NAME=PATH");
  app.add_option("--random-inputs", options.job.random_seed,
                 "Generate the user inputs not given with --input, deterministically from SEED "
                 "(SplitMix64; floats uniform in [-1, 1), integers in [0, 10), bools 0/1; symbolic sizes take "
                 "the file's hints)")
      ->type_name("SEED")
      ->check(integer_in(0, INT64_MAX));
  app.add_option("--output-dir", options.job.output_dir,
                 "Write each user output to DIR/<name>.npy ({rank} in DIR is the rank; required with several ranks)")
      ->type_name("DIR");
  app.add_flag("--local-outputs", options.job.local_outputs,
               "DTensor programs: write (and compare) each rank's local shard of every DTensor output, in the "
               "placements the program declares, instead of its global value (docs/DISTRIBUTED.md)");
  app.add_option("--expect", options.job.expect_dir,
                 "Compare each user output with DIR/<name>.npy (fails only where both tolerances are exceeded; "
                 "{rank} in DIR is the rank)")
      ->type_name("DIR");
  app.add_option("--kernel-library", options.job.kernel_libraries,
                 "Load kernels for custom operators from this shared library before loading the program "
                 "(repeatable; docs/EXECUTOR.md)")
      ->type_name("PATH")
      ->check(CLI::ExistingFile);
  app.add_flag("--kernel-library-override", options.job.kernel_library_override,
               "Let --kernel-library replace kernels nrt already has, built-in or from another library (each "
               "replacement is warned about); without it such a library is refused");
  app.add_option("--atol", options.job.atol, "Absolute tolerance, a finite number >= 0 (default 1e-5)")
      ->check(finite_non_negative());
  app.add_option("--rtol", options.job.rtol, "Relative tolerance, a finite number >= 0 (default 1e-5)")
      ->check(finite_non_negative());
  app.add_option("--max-memory", options.job.max_memory,
                 "Memory budget for the tensors of the run, e.g. 512M or 8G (default: NRT_MAX_MEMORY, else the "
                 "machine's available memory); a plan or allocation past it fails with NRT-E1008")
      ->type_name("SIZE")
      ->check(memory_size());
  app.add_option("--repeat", options.job.repeat, "Run N times and report the median time (default 1). On a terminal the runs done are shown as "
                 "they go; SIGINT or SIGTERM stop the repeats after the run in progress and report the runs "
                 "completed (no output written; exit 128 + the signal's number)")
      ->check(integer_in(1, 1'000'000));
  app.add_option("--warmup", options.job.warmup,
                 "Run N times first, untimed and unprofiled (default 0): the first run pays for one-time work "
                 "(oneDNN compiles its kernels, constant nodes are kept) that the times and --profile then leave out")
      ->check(integer_in(0, 1'000'000));
  app.add_flag("--json", options.json,
               "Print one JSON object on stdout instead of text (under mpirun: one line per rank, with \"rank\" "
               "and \"world_size\", all printed by rank 0 in rank order; a rank whose run fails prints its own line "
               "before the job is ended)");
  app.add_option("--device", options.job.device,
                 "Where the program runs: cpu (default), cuda or cuda:N; inputs are copied to the device and outputs "
                 "back (a device this machine or build lacks: NRT-E1014, exit 2; docs/CUDA.md)")
      ->check(device_name());
  app.add_option("--seed", options.job.seed,
                 "Seed of the random ops the program draws with (rand, randn, randint, normal, bernoulli, dropout "
                 "in training), default 0: each node draws from the seed and its own name, each element from its "
                 "index, so the values do not depend on the schedule, sharding or rank count (docs/RANDOM.md)")
      ->type_name("N")
      ->check(integer_in(0, INT64_MAX));
  app.add_flag("--allow-tf32", options.job.allow_tf32,
               "float32 matrix products on CUDA may use TF32 tensor cores (10-bit mantissa inputs, as "
               "torch.backends.cuda.matmul.allow_tf32); off by default, so results stay float32-exact in their inputs");
  app.add_option("--threads", options.job.threads,
                 "Threads inside ops, 1 to 1024: large element-wise maps split over N threads, and the float32 "
                 "matrix products and convolutions run on N oneDNN (OpenMP) threads; results do not depend on N. "
                 "Default: ops on one thread (float64 products at OpenBLAS's own default, OPENBLAS_NUM_THREADS, else "
                 "one per core)")
      ->type_name("N")
      ->check(integer_in(1, 1024));
  app.add_flag("--poison-freed", options.job.poison_freed,
               "Overwrite each planned value's memory when its lifetime ends (debugging; also NRT_POISON_FREED=1)");
  app.add_flag("--profile", options.job.profile,
               "Print the time per op target and per node (count, total, mean, share of all nodes), over every "
               "run of --repeat (not those of --warmup)");
  app.add_option("--profile-trace", options.job.profile_trace,
                 "Write the last run's nodes as Chrome trace-event JSON to FILE (chrome://tracing, Perfetto): one "
                 "event per node with its target, name and argument shapes ({rank} in FILE is the rank)")
      ->type_name("FILE");
  auto* verbose = app.add_flag("-v,--verbose", options.verbosity, "More diagnostics on stderr: -v info, -vv debug, -vvv trace");
  app.add_flag("-q,--quiet", options.quiet, "Only errors on stderr")->excludes(verbose);
}

}  // namespace nrt::cli
