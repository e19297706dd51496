#include "core/strict_json.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nrt {

Result<nlohmann::json> parse_strict_json(std::string_view text, size_t max_depth) {
  return parse_strict_json(text, JsonTake{}, max_depth);
}

Result<nlohmann::json> parse_strict_json(std::string_view text, const JsonTake& take, size_t max_depth) {
  using Event = nlohmann::json::parse_event_t;
  struct Level {
    bool object = false;
    std::set<std::string> keys;
    std::string name;  // how the error names it: "the top level", "mesh", "entries[3]"
  };
  std::vector<Level> levels;
  std::string pending_key;  // the key whose value comes next
  std::optional<std::string> problem;
  auto name_of_child = [&]() {
    if (levels.empty()) return std::string("the top level");
    if (levels.back().object) return pending_key;
    return levels.back().name + "[]";
  };
  auto callback = [&](int depth, Event event, nlohmann::json& parsed) {
    if (problem) return false;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        levels.push_back({event == Event::object_start, {}, name_of_child()});
        if (levels.size() > max_depth) problem = "nested deeper than " + std::to_string(max_depth) + " levels";
        break;
      case Event::object_end:
      case Event::array_end:
        if (!levels.empty()) levels.pop_back();
        break;
      case Event::key:
        pending_key = parsed.get<std::string>();
        if (!levels.back().keys.insert(pending_key).second) {
          problem = "key \"" + pending_key + "\" appears twice in " + levels.back().name;
        }
        break;
      case Event::value:
        break;
    }
    if (problem) return false;
    return take ? take(depth, event, parsed) : true;
  };
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text.begin(), text.end(), callback);
  } catch (const nlohmann::json::exception& e) {
    if (!problem) return make_error(ErrorCode::InvalidArgument, std::string("not JSON: ") + e.what());
  }
  if (problem) return make_error(ErrorCode::InvalidArgument, *problem);
  return root;
}

}  // namespace nrt
