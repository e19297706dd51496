#include "executor/runtime/memory_budget.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nrt::exec {
namespace {

std::atomic<uint64_t> g_limit{0};  // 0: not decided yet
std::atomic<uint64_t> g_in_use{0};

std::string bytes_text(uint64_t bytes) {
  char text[64];
  if (bytes >= (uint64_t{1} << 30)) {
    std::snprintf(text, sizeof text, "%llu bytes (%.1f GiB)", static_cast<unsigned long long>(bytes),
                  static_cast<double>(bytes) / (1 << 30));
  } else {
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  }
  return text;
}

}  // namespace

MemoryBudgetExceeded::MemoryBudgetExceeded(uint64_t bytes, uint64_t in_use, uint64_t limit)
    : message_("allocating " + bytes_text(bytes) + " would exceed the memory budget of " + bytes_text(limit) + " (" +
               bytes_text(in_use) + " in use; --max-memory or NRT_MAX_MEMORY sets it)") {}

uint64_t available_memory_bytes() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (std::fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        found = true;
        break;
      }
    }
    std::fclose(f);
    if (found) return static_cast<uint64_t>(kib) * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  return uint64_t{1} << 30;  // nothing says: a conservative 1 GiB
}

Result<uint64_t> parse_memory_size(std::string_view text) {
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorCode::InvalidArgument, "memory size '" + std::string(text) + "' " + why +
                                                      " (bytes, or a number with K, M, G or T: e.g. 512M, 8G)");
  };
  size_t end = 0;
  while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
  if (end == 0) return refuse("is not a number");
  const std::string number(text.substr(0, end));
  std::string_view unit = text.substr(end);
  char* stop = nullptr;
  const double value = std::strtod(number.c_str(), &stop);
  if (stop != number.c_str() + number.size() || !std::isfinite(value)) return refuse("is not a number");
  double scale = 1;
  if (!unit.empty()) {
    switch (unit[0]) {
      case 'K': case 'k': scale = 1024.0; break;
      case 'M': case 'm': scale = 1024.0 * 1024; break;
      case 'G': case 'g': scale = 1024.0 * 1024 * 1024; break;
      case 'T': case 't': scale = 1024.0 * 1024 * 1024 * 1024; break;
      case 'B': case 'b': break;
      default: return refuse("has an unknown unit");
    }
    if (scale != 1) unit.remove_prefix(1);
    if (!unit.empty() && unit[0] == 'i' && scale != 1) unit.remove_prefix(1);
    if (!unit.empty() && (unit[0] == 'B' || unit[0] == 'b')) unit.remove_prefix(1);
    if (!unit.empty()) return refuse("has an unknown unit");
  }
  const double bytes = value * scale;
  if (bytes < 1) return refuse("is below one byte");
  if (bytes != std::floor(bytes)) return refuse("is not a whole number of bytes");
  if (bytes >= 18446744073709551616.0) return refuse("is too large");
  return static_cast<uint64_t>(bytes);
}

uint64_t memory_budget() {
  uint64_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit == 0) {
    uint64_t expected = 0;
    g_limit.compare_exchange_strong(expected, available_memory_bytes());
    limit = g_limit.load(std::memory_order_relaxed);
  }
  return limit;
}

void set_memory_budget(uint64_t bytes) { g_limit.store(bytes == 0 ? 1 : bytes, std::memory_order_relaxed); }

Status apply_memory_budget(const std::string& max_memory) {
  std::string text = max_memory;
  std::string source = "--max-memory";
  if (text.empty()) {
    const char* variable = std::getenv("NRT_MAX_MEMORY");
    if (variable == nullptr || variable[0] == '\0') return {};
    text = variable;
    source = "NRT_MAX_MEMORY";
  }
  auto bytes = parse_memory_size(text);
  if (!bytes) return make_error(bytes.error().code, source + ": " + bytes.error().message);
  set_memory_budget(*bytes);
  return {};
}

uint64_t memory_in_use() { return g_in_use.load(std::memory_order_relaxed); }

void reserve_memory(uint64_t bytes) {
  const uint64_t limit = memory_budget();
  uint64_t in_use = g_in_use.load(std::memory_order_relaxed);
  do {
    if (in_use > limit || bytes > limit - in_use) throw MemoryBudgetExceeded(bytes, in_use, limit);
  } while (!g_in_use.compare_exchange_weak(in_use, in_use + bytes, std::memory_order_relaxed));
}

void release_memory(uint64_t bytes) { g_in_use.fetch_sub(bytes, std::memory_order_relaxed); }

Error memory_error(const std::string& what, const std::bad_alloc& failure) {
  if (dynamic_cast<const MemoryBudgetExceeded*>(&failure) != nullptr) {
    return make_error(ErrorCode::MemoryBudgetExceeded, what + ": " + failure.what());
  }
  return make_error(ErrorCode::MemoryBudgetExceeded,
                    what + ": the system refused an allocation (" + failure.what() + "); memory in use by tensors: " +
                        bytes_text(memory_in_use()) + ", budget " + bytes_text(memory_budget()));
}

}  // namespace nrt::exec
