#include "cli/run_world.h"

#include <algorithm>
#include <cstring>

#include "executor/mpi_process_group.h"

namespace nrt::cli {

Result<RunWorld> join_run_world() {
  RunWorld world;
  auto launcher = exec::detect_mpi_launcher();
  if (!launcher) return world;
  world.launcher = *launcher;
  if (Status s = exec::init_mpi(); !s) {
    return make_error(s.error().code, "started by a launcher (" + *launcher + " is set) but " + s.error().message);
  }
  auto mpi = exec::mpi_world();
  if (!mpi) return mpi.error();
  world.rank = mpi->rank;
  world.size = mpi->size;
  auto group = exec::create_mpi_world_group("nrt-run world");
  if (!group) return group.error();
  world.group = std::move(*group);
  return world;
}

Result<std::vector<int>> RunWorld::failed_ranks(bool ok) const {
  if (!launched()) return ok ? std::vector<int>{} : std::vector<int>{rank};
  exec::Tensor mine = exec::Tensor::empty(fb::ScalarType::UINT8, {1});
  mine.data<uint8_t>()[0] = ok ? 0 : 1;
  exec::Tensor all = exec::Tensor::empty(fb::ScalarType::UINT8, {size});
  if (Status s = exec::wait_for(group->all_gather_into_tensor(mine, all)); !s) return s.error();
  std::vector<int> failed;
  for (int r = 0; r < size; ++r) {
    if (all.data<uint8_t>()[r] != 0) failed.push_back(r);
  }
  return failed;
}

Result<std::vector<std::string>> RunWorld::gather_texts(const std::string& text) const {
  if (!launched()) return std::vector<std::string>{text};
  // Lengths first, then every text padded to the longest (all_gather takes equal blocks).
  exec::Tensor length = exec::Tensor::empty(fb::ScalarType::INT64, {1});
  length.data<int64_t>()[0] = static_cast<int64_t>(text.size());
  exec::Tensor lengths = exec::Tensor::empty(fb::ScalarType::INT64, {size});
  if (Status s = exec::wait_for(group->all_gather_into_tensor(length, lengths)); !s) return s.error();
  const int64_t* all_lengths = lengths.data<int64_t>();
  const int64_t longest = *std::max_element(all_lengths, all_lengths + size);
  exec::Tensor padded = exec::Tensor::empty(fb::ScalarType::UINT8, {longest});
  if (!text.empty()) std::memcpy(padded.raw_data(), text.data(), text.size());
  exec::Tensor gathered = exec::Tensor::empty(fb::ScalarType::UINT8, {longest * size});
  if (Status s = exec::wait_for(group->all_gather_into_tensor(padded, gathered)); !s) return s.error();
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r) {
    const char* begin = reinterpret_cast<const char*>(gathered.raw_data()) + r * longest;
    texts.emplace_back(begin, static_cast<size_t>(all_lengths[r]));
  }
  return texts;
}

std::string with_rank(std::string text, int rank) {
  static constexpr std::string_view kPlaceholder = "{rank}";
  const std::string value = std::to_string(rank);
  for (size_t at = text.find(kPlaceholder); at != std::string::npos; at = text.find(kPlaceholder, at + value.size())) {
    text.replace(at, kPlaceholder.size(), value);
  }
  return text;
}

}  // namespace nrt::cli
