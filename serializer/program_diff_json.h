// The JSON form of a structural diff: the object `nrt-inspect diff --json` prints and
// nrt.Diff.as_dict() returns.
#pragma once

#include <nlohmann/json.hpp>

#include "serializer/program_diff.h"

namespace nrt {

nlohmann::ordered_json program_diff_json(const ProgramDiff& diff);

}  // namespace nrt
