// The JSON form of a program's summary: the object `nrt-inspect info --json` prints (before the
// CLI adds what --check-ops found) and nrt.Program.info() returns. Keys keep their order.
#pragma once

#include <nlohmann/json.hpp>

#include "serializer/program_summary.h"

namespace nrt {

nlohmann::ordered_json program_summary_json(const ProgramSummary& summary);

}  // namespace nrt
