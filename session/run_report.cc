#include "session/run_report.h"

#include <algorithm>

namespace nrt {

double RunReport::median_ms() const {
  if (times_ms.empty()) return 0;
  std::vector<double> sorted = times_ms;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

bool RunReport::all_match() const {
  for (const auto& out : outputs) {
    if (out.comparison && !out.comparison->ok) return false;
  }
  return true;
}

}  // namespace nrt
