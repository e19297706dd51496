// This process's resident set size, for the memory benchmarks.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace nrt::bench {

// Resident set size in KiB (VmRSS counts anonymous memory and mapped file pages alike).
inline std::optional<uint64_t> vm_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  }
  return std::nullopt;
}

}  // namespace nrt::bench
