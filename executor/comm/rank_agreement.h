// What the ranks of one job must hold alike before the first collective (the program's
// structure digest, today): one text per rank, compared, and a sentence naming who differs.
// A job whose ranks run different programs would otherwise run to completion, each rank's
// collectives meeting another program's, and give answers no single program gives.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nrt::exec {

// `per_rank[r]` is rank r's text. Nothing when all are equal; otherwise, with two groups,
// "ranks [1] hold a different <what> than ranks [0]: <theirs> vs <rank 0's>", with more,
// "ranks hold 3 different <what>s: ranks [0, 2]: <a>; ranks [1]: <b>; ranks [3]: <c>".
// "0, 2, 3".
std::string rank_list(const std::vector<int>& ranks);

std::optional<std::string> rank_disagreement(const std::vector<std::string>& per_rank, std::string_view what);

}  // namespace nrt::exec
