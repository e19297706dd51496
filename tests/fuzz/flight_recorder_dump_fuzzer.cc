// libFuzzer target: arbitrary bytes as a flight recorder dump (what nrt-inspect fr-analyze reads).
// Parsing must give a clean error or a dump that writes and parses back to the same JSON; the
// analysis of it, alone and beside a copy claiming another rank, must not crash. Built and run by
// scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "executor/comm/flight_recorder.h"
#include "executor/comm/flight_recorder_analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto dump = nrt::exec::flight_recorder_dump_from_json(text);
  if (!dump) return 0;
  const std::string written = nrt::exec::to_json(*dump);
  auto again = nrt::exec::flight_recorder_dump_from_json(written);
  if (!again || nrt::exec::to_json(*again) != written) std::abort();
  auto alone = nrt::exec::analyze_flight_recorder({*dump});
  if (alone) {
    (void)nrt::exec::analysis_text(*alone);
    (void)nrt::exec::analysis_json(*alone);
  }
  nrt::exec::FlightRecorderDump other = *dump;
  other.rank = (dump->rank + 1) % dump->world_size;
  if (auto pair = nrt::exec::analyze_flight_recorder({*dump, other})) (void)nrt::exec::analysis_text(*pair);
  return 0;
}
