#include "executor/comm/rank_agreement.h"

#include <utility>

namespace nrt::exec {
std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
  return text;
}

std::optional<std::string> rank_disagreement(const std::vector<std::string>& per_rank, std::string_view what) {
  // Groups in order of first appearance: the first is rank 0's.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (size_t r = 0; r < per_rank.size(); ++r) {
    size_t g = 0;
    while (g < groups.size() && groups[g].first != per_rank[r]) ++g;
    if (g == groups.size()) groups.push_back({per_rank[r], {}});
    groups[g].second.push_back(static_cast<int>(r));
  }
  if (groups.size() <= 1) return std::nullopt;
  if (groups.size() == 2) {
    return "ranks [" + rank_list(groups[1].second) + "] hold a different " + std::string(what) + " than ranks [" +
           rank_list(groups[0].second) + "]: " + groups[1].first + " vs " + groups[0].first;
  }
  std::string text = "ranks hold " + std::to_string(groups.size()) + " different " + std::string(what) + "s:";
  for (size_t g = 0; g < groups.size(); ++g) {
    text += (g ? "; ranks [" : " ranks [") + rank_list(groups[g].second) + "]: " + groups[g].first;
  }
  return text;
}

}  // namespace nrt::exec
