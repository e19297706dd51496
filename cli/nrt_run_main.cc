// nrt-run: run an nrt program on the CPU with inputs and outputs as NumPy .npy files, in one
// process or on every rank of an MPI launcher (mpirun), which binds the program's process groups.
// Exit status: 0 ok, 1 an output does not match --expect, 2 usage, I/O, invalid program or a
// failed run. Diagnostics go to stderr as "nrt-run: <level>: <message>" (level warn by default,
// NRT_LOG_LEVEL, -v/-q; "nrt-run: rank R: <level>: ..." under a launcher); --json output is the
// only thing on stdout.
#include <CLI/CLI.hpp>

#include "cli/flag_checks.h"
#include "cli/log_level.h"
#include "cli/run_command.h"
#include "cli/run_options.h"

int main(int argc, char** argv) {
  nrt::cli::RunOptions options;
  CLI::App app{"Run a program (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON) on the CPU, in one "
               "process or under mpirun; inputs and outputs are NumPy .npy files.\n"
               "Exit status: 0 ok, 1 outputs differ from --expect, 2 usage, I/O, invalid program or failed run.",
               "nrt-run"};
  nrt::cli::add_run_options(app, options);
  app.footer(
      "bfloat16 has no NumPy dtype: bf16 outputs are written as float32; a bf16 input accepts a float32 file "
      "(rounded to nearest even) or a uint16 file of raw bf16 bits.\n\n"
      "Several ranks: run under an MPI launcher, e.g.\n"
      "  mpirun -np 2 nrt-run model.nrt --input x=in_{rank}.npy --expect expected_{rank}\n"
      "A launcher is detected from OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE. Every process group of the program "
      "is then bound by name to an MPI communicator over its ranks (world ranks; empty ranks: the whole world); a "
      "group naming a rank beyond the world is an error. {rank} in FILE, --input paths, --output-dir, --expect "
      "and --profile-trace is replaced by the world rank (0 without a launcher); ranks whose output directories "
      "resolve to the same one are refused (they would overwrite each other). "
      "Rank 0 prints the text report; every rank reports its own errors on stderr, prefixed with its rank. A rank "
      "whose run fails ends the whole job (MPI_Abort), since the others may be waiting for it. Collectives are "
      "numbered per group and kept in a flight recorder; a collective past NRT_COLLECTIVE_TIMEOUT_S (default 600) "
      "makes the watchdog log it (NRT-E1012), dump the recorder to <NRT_FR_DUMP_PREFIX><rank>.json and end the job; "
      "NRT_NAN_CHECK=1 refuses send buffers holding a NaN (NRT-E1013); SIGTERM and SIGUSR1 dump too, and "
      "NRT_FR_DUMP_ON_EXIT=1 at the end; nrt-inspect fr-analyze names the rank that diverged (docs/COLLECTIVES.md). "
      "Before the first "
      "collective the ranks compare their programs' structure digests, or with {rank} in FILE (one program per "
      "rank, as torch exports tensor-parallel models) their collective schedules (ops, groups, reduce ops, dtypes; "
      "sizes may differ): ranks that disagree all stop (NRT-E1009), naming which ranks differ. Without a launcher "
      "only groups whose ranks are [0] or empty are bound, and a program with a collective on any other group fails "
      "to load naming it.\n\n"
      "Custom operators: --kernel-library PATH loads a shared library that registers kernels through "
      "nrt_register_kernels (docs/EXECUTOR.md); nrt-inspect info --check-ops --kernel-library PATH checks coverage "
      "without running.");
  nrt::cli::print_usage_errors_with_code(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? nrt::cli::kRunOk : nrt::cli::kRunFailed;
  }
  nrt::cli::configure_logging("nrt-run", options.verbosity, options.quiet);
  try {
    return nrt::cli::run_program_command(options);
  } catch (const std::bad_alloc& failure) {
    nrt::cli::report_escaped_bad_alloc("nrt-run", failure);
    return nrt::cli::kRunFailed;
  }
}
