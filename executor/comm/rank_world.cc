#include "executor/comm/rank_world.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "executor/comm/collective_hooks.h"
#include "executor/comm/collective_schedule.h"
#include "executor/comm/mpi_process_group.h"
#include "executor/comm/rank_agreement.h"
#include "serializer/structure_hash.h"

namespace nrt::exec {

Result<RankWorld> join_rank_world(std::string group_name) {
  RankWorld world;
  auto launcher = detect_mpi_launcher();
  if (!launcher) return world;
  world.launcher = *launcher;
  if (Status s = init_mpi(); !s) {
    return make_error(s.error().code, "started by a launcher (" + *launcher + " is set) but " + s.error().message);
  }
  NRT_TRY(mpi, mpi_world());
  world.rank = mpi->rank;
  world.size = mpi->size;
  NRT_TRY(group, create_mpi_world_group(std::move(group_name)));
  world.group = std::move(*group);
  // A bad value is the session's to report (every rank stops at its first agreement); until then
  // the default holds.
  if (auto hooks = collective_hooks_from_env()) world.stage_timeout = hooks->timeout;
  return world;
}

std::unique_ptr<StageDeadline> RankWorld::deadline(std::string_view stage) const {
  if (!launched()) return nullptr;
  return std::make_unique<StageDeadline>(
      stage_timeout, [error = stage_timeout_error(rank, std::string(stage), stage_timeout), handler = on_stage_timeout] {
        if (handler) {
          handler(error);
        } else {
          spdlog::error("{}", error.to_string());
          std::fflush(stderr);
          abort_mpi_world(2);
        }
      });
}

Result<std::vector<int>> RankWorld::failed_ranks(bool ok, std::string_view stage) const {
  if (!launched()) return ok ? std::vector<int>{} : std::vector<int>{rank};
  const auto watched = deadline(stage);
  Tensor mine = Tensor::empty(ScalarType::UINT8, {1});
  mine.data<uint8_t>()[0] = ok ? 0 : 1;
  Tensor all = Tensor::empty(ScalarType::UINT8, {size});
  NRT_RETURN_IF_ERROR(wait_for(group->all_gather_into_tensor(mine, all)));
  std::vector<int> failed;
  for (int r = 0; r < size; ++r) {
    if (all.data<uint8_t>()[r] != 0) failed.push_back(r);
  }
  return failed;
}

Result<std::vector<std::string>> RankWorld::gather_texts(const std::string& text, std::string_view stage) const {
  if (!launched()) return std::vector<std::string>{text};
  const auto watched = deadline(stage);
  // Lengths first, then every text padded to the longest (all_gather takes equal blocks).
  Tensor length = Tensor::empty(ScalarType::INT64, {1});
  length.data<int64_t>()[0] = static_cast<int64_t>(text.size());
  Tensor lengths = Tensor::empty(ScalarType::INT64, {size});
  NRT_RETURN_IF_ERROR(wait_for(group->all_gather_into_tensor(length, lengths)));
  const int64_t* all_lengths = lengths.data<int64_t>();
  const int64_t longest = *std::max_element(all_lengths, all_lengths + size);
  Tensor padded = Tensor::empty(ScalarType::UINT8, {longest});
  if (!text.empty()) std::memcpy(padded.raw_data(), text.data(), text.size());
  Tensor gathered = Tensor::empty(ScalarType::UINT8, {longest * size});
  NRT_RETURN_IF_ERROR(wait_for(group->all_gather_into_tensor(padded, gathered)));
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r) {
    const char* begin = reinterpret_cast<const char*>(gathered.raw_data()) + r * longest;
    texts.emplace_back(begin, static_cast<size_t>(all_lengths[r]));
  }
  return texts;
}

Result<std::optional<Error>> failed_stage(const RankWorld& world, bool ok, std::string_view stage) {
  NRT_TRY(failed, world.failed_ranks(ok, "agreeing after " + std::string(stage)));
  if (failed->empty()) return std::optional<Error>();
  return std::optional<Error>(make_error(ErrorCode::InvalidArgument, std::string("not running: rank") +
                                                                         (failed->size() > 1 ? "s " : " ") +
                                                                         rank_list(*failed) + " failed " +
                                                                         std::string(stage)));
}

namespace {

// Collective: every rank's `text` compared during `stage`; nullopt when all are equal, else the
// RankMismatch naming who holds which `what`.
Result<std::optional<Error>> text_mismatch(const RankWorld& world, const std::string& text, std::string_view stage,
                                           std::string_view what) {
  NRT_TRY(texts, world.gather_texts(text, stage));
  auto disagreement = rank_disagreement(*texts, what);
  if (!disagreement) return std::optional<Error>();
  return std::optional<Error>(make_error(ErrorCode::RankMismatch, "not running: " + *disagreement));
}

}  // namespace

Result<std::optional<Error>> program_mismatch(const RankWorld& world, const fb::Program& program,
                                              bool per_rank_programs) {
  if (!world.launched()) return std::optional<Error>();
  const std::string text = per_rank_programs
                               ? collective_schedule_line(collective_schedule(program))
                               : "structure " + hash_structure(program, HashAlgorithm::kXxh3).program.to_string();
  return text_mismatch(world, text, "agreeing on the program", per_rank_programs ? "collective schedule" : "program");
}

Result<std::optional<Error>> communication_mismatch(const RankWorld& world, const fb::Program& program) {
  if (!world.launched()) return std::optional<Error>();
  const std::string text = "process groups " + process_groups_line(program) + "; " +
                           collective_schedule_line(collective_schedule(program));
  return text_mismatch(world, text, "agreeing on what each rank communicates", "communication plan");
}

std::string with_rank(std::string text, int rank) {
  static constexpr std::string_view kPlaceholder = "{rank}";
  const std::string value = std::to_string(rank);
  for (size_t at = text.find(kPlaceholder); at != std::string::npos; at = text.find(kPlaceholder, at + value.size())) {
    text.replace(at, kPlaceholder.size(), value);
  }
  return text;
}

}  // namespace nrt::exec
