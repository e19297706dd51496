// Sharding plans (nrt-inspect shard --plan) and placement texts: parse_shard_plan must return a
// plan or an error for any bytes, never crash; every placement it accepts prints back as text
// that parses to the same placement. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "executor/dtensor/placement.h"
#include "executor/dtensor/shard_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto plan = nrt::dist::parse_shard_plan(text);
  if (plan) {
    for (const auto* entries : {&plan->parameters, &plan->inputs, &plan->outputs}) {
      for (const auto& entry : *entries) {
        for (const auto& p : entry.second) {
          auto again = nrt::dist::parse_placement(nrt::dist::to_string(p));
          if (!again || !(*again == p)) std::abort();
        }
      }
    }
  }
  auto placement = nrt::dist::parse_placement(text);
  if (placement) {
    auto again = nrt::dist::parse_placement(nrt::dist::to_string(*placement));
    if (!again || !(*again == *placement)) std::abort();
  }
  return 0;
}
