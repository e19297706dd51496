#include "cli/convert_command.h"

#include <spdlog/spdlog.h>

#include "cli/exit_status.h"
#include "executor/dtensor/merge_rank_programs.h"
#include "serializer/open_program.h"
#include "serializer/program_text.h"

namespace nrt::cli {

CLI::App* add_convert_command(CLI::App& app, ConvertCommand& command) {
  CLI::App* sub = app.add_subcommand("convert", "Convert a program between .nrt, .nrt.json, .pt2 and torch.export JSON");
  sub->footer(
      "Formats: nrt (.nrt), nrt.json (.nrt.json), pt2 (torch.export archive, .pt2), torch.json "
      "(ExportedProgram JSON, .json). The input format comes from --from, else the content, else the "
      "name; the output format from --to, else the name. Several inputs are the per-rank archives of one "
      "DTensor program (nrt-inspect convert model_rank0.pt2 model_rank1.pt2 -o model.nrt): the graphs must be "
      "equal apart from their weights, every mesh coordinate present once, and the shards must tile each global "
      "tensor. The program is verified before anything is "
      "written; the output is replaced atomically.");
  sub->add_option("input", command.in_paths,
                  "Input program file; several: the per-rank archives of one DTensor program (torch.export.save on "
                  "each rank), merged into one program whose DTensor weights are global tensors")
      ->required()
      ->expected(1, -1);
  sub->add_option("-o,--output", command.out_path,
                  "Output file, replaced atomically; with {rank} (a DTensor program): one file per rank of its mesh, "
                  "each holding that rank's shards (torch's per-rank archives: -o 'model_rank{rank}.pt2')")
      ->required();
  sub->add_option("--from", command.from, "Input format (default: from the content, then the name)")
      ->check(CLI::IsMember({"nrt", "nrt.json", "pt2", "torch.json"}));
  sub->add_option("--to", command.to, "Output format (default: from the output name)")
      ->check(CLI::IsMember({"nrt", "nrt.json", "pt2", "torch.json"}));
  sub->add_option("--model", command.model,
                  "pt2 input: import only this model; torch output: export only this entry point");
  sub->add_flag("--deep", command.deep, "Also check the input's storage checksums (reads all weights)");
  return sub;
}

namespace {

int fail(const Error& e) {
  spdlog::error("{}", printable(e.to_string()));
  return exit_status_for(e);
}

// The input: one program, or the ranks' archives merged into one.
Result<ProgramFile> open_inputs(const ConvertCommand& command, const OpenOptions& open) {
  if (command.in_paths.size() == 1) return open_program(command.in_paths[0], open);
  std::vector<ProgramFile> files;
  for (const auto& path : command.in_paths) {
    NRT_TRY(file, open_program(path, open));
    files.push_back(std::move(*file));
  }
  std::vector<dist::RankProgram> ranks;
  for (size_t i = 0; i < files.size(); ++i) ranks.push_back({command.in_paths[i], &files[i]});
  NRT_TRY(merged, dist::merge_rank_programs(ranks));
  return verify_in_memory(std::move(*merged));
}

constexpr std::string_view kRankPlaceholder = "{rank}";

// -o with {rank}: each rank's own program (its shards of the DTensor weights), one file per rank.
int save_per_rank(const ProgramFile& file, const ConvertCommand& command, const SaveOptions& save) {
  auto ranks = dist::dtensor_weight_ranks(file);
  if (!ranks) return fail(ranks.error());
  for (const int32_t rank : *ranks) {
    std::string path = command.out_path;
    for (size_t at = path.find(kRankPlaceholder); at != std::string::npos; at = path.find(kRankPlaceholder)) {
      path.replace(at, kRankPlaceholder.size(), std::to_string(rank));
    }
    auto program = dist::rank_program(file, rank);
    if (!program) return fail(program.error());
    auto verified = verify_in_memory(std::move(*program));
    if (!verified) return fail(verified.error());
    if (Status status = save_program(*verified, path, save); !status) return fail(status.error());
    spdlog::info("wrote rank {}'s program to {}", rank, path);
  }
  return kExitOk;
}

int merge_or_split(const ConvertCommand& command, const OpenOptions& open, const SaveOptions& save) {
  auto file = open_inputs(command, open);
  if (!file) return fail(file.error());
  if (command.out_path.find(kRankPlaceholder) != std::string::npos) return save_per_rank(*file, command, save);
  if (Status status = save_program(*file, command.out_path, save); !status) return fail(status.error());
  spdlog::info("merged {} per-rank archives into {}", command.in_paths.size(), command.out_path);
  return kExitOk;
}

}  // namespace

int run_convert_command(const ConvertCommand& command) {
  OpenOptions open;
  SaveOptions save;
  if (!command.from.empty()) open.format = format_from_name(command.from);
  if (!command.to.empty()) save.format = format_from_name(command.to);
  open.verify.deep = command.deep;
  open.model = command.model;
  save.model = command.model;
  open.warn = [](const std::string& warning) { spdlog::warn("{}", printable(warning)); };
  if (command.in_paths.size() > 1 || command.out_path.find(kRankPlaceholder) != std::string::npos) {
    return merge_or_split(command, open, save);
  }
  if (Status status = convert_program(command.in_paths[0], command.out_path, open, save); !status) {
    spdlog::error("{}", printable(status.error().to_string()));
    return exit_status_for(status.error());
  }
  spdlog::info("wrote {}", command.out_path);
  return kExitOk;
}

}  // namespace nrt::cli
