// nrt-inspect: look into nrt programs from the command line. Each subcommand lives in its own
// file; this one parses flags, sets up logging and color, and dispatches. Exit statuses are
// those of exit_status.h; a command line CLI11 rejects exits 2, --help and --version exit 0.
#include <CLI/CLI.hpp>

#include <string>

#include "cli/convert_command.h"
#include "cli/shard_command.h"
#include "cli/diff_command.h"
#include "cli/exit_status.h"
#include "cli/flag_checks.h"
#include "cli/fr_analyze_command.h"
#include "cli/hash_command.h"
#include "cli/info_command.h"
#include "cli/log_level.h"
#include "cli/print_command.h"
#include "cli/terminal_style.h"
#include "cli/verify_command.h"
#include "serializer/verify_program.h"

namespace {

std::string version_text() {
  return "nrt-inspect 0.1.0 (schema " + std::to_string(nrt::kSchemaMajor) + "." + std::to_string(nrt::kSchemaMinor) +
         ")";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace nrt::cli;
  CLI::App app{"Inspect, verify, convert, hash and diff nrt programs (.nrt, .nrt.json, torch.export .pt2 and ExportedProgram JSON);\n"
               "analyze the flight recorder dumps of nrt-run (fr-analyze).\n"
               "Exit status: 0 ok/valid/same, 1 invalid input/different, 2 usage or I/O trouble.",
               "nrt-inspect"};
  app.set_version_flag("--version", version_text(), "Print the version and exit");
  app.require_subcommand(1);
  app.fallthrough();  // global flags are accepted after the subcommand too

  int verbosity = 0;
  bool quiet = false;
  auto* verbose_flag =
      app.add_flag("-v,--verbose", verbosity, "More diagnostics on stderr: -v info, -vv debug, -vvv trace");
  app.add_flag("-q,--quiet", quiet, "Only errors on stderr")->excludes(verbose_flag);

  InfoCommand info;
  PrintCommand print;
  VerifyCommand verify;
  ConvertCommand convert;
  HashCommand hash;
  DiffCommand diff;
  FrAnalyzeCommand fr_analyze;
  ShardCommand shard;
  PlanCommand plan;
  CLI::App* info_app = add_info_command(app, info);
  CLI::App* print_app = add_print_command(app, print);
  CLI::App* verify_app = add_verify_command(app, verify);
  CLI::App* convert_app = add_convert_command(app, convert);
  CLI::App* hash_app = add_hash_command(app, hash);
  CLI::App* diff_app = add_diff_command(app, diff);
  CLI::App* fr_analyze_app = add_fr_analyze_command(app, fr_analyze);
  CLI::App* shard_app = add_shard_command(app, shard);
  CLI::App* plan_app = add_plan_command(app, plan);
  app.footer("Diagnostics go to stderr (level: warn, NRT_LOG_LEVEL, -v/-q). Color only on a terminal, "
             "never with NO_COLOR set.");

  print_usage_errors_with_code(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with status 0; every other parse failure is usage trouble.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  configure_logging("nrt-inspect", verbosity, quiet);
  const TerminalStyle style = TerminalStyle::for_stdout();
  try {
    if (info_app->parsed()) return run_info_command(info, style);
    if (print_app->parsed()) return run_print_command(print, style);
    if (verify_app->parsed()) return run_verify_command(verify, style);
    if (convert_app->parsed()) return run_convert_command(convert);
    if (hash_app->parsed()) return run_hash_command(hash, style);
    if (diff_app->parsed()) return run_diff_command(diff, style);
    if (fr_analyze_app->parsed()) return run_fr_analyze_command(fr_analyze);
    if (shard_app->parsed()) return run_shard_command(shard);
    if (plan_app->parsed()) return run_plan_command(plan);
  } catch (const std::bad_alloc& failure) {
    report_escaped_bad_alloc("nrt-inspect", failure);
    return kExitUsage;
  }
  return kExitUsage;  // unreachable: require_subcommand(1)
}
