// The core's float32 peak, the yardstick GEMM and convolution benchmarks print their GFLOP/s
// against, with how it was derived: FMA units x float lanes per FMA x 2 flops per FMA x the clock
// /proc/cpuinfo reports. The FMA unit count is not visible to software: 2 is assumed (server
// cores have 2), and the printed derivation says so.
//
// The lanes are the FMA datapath's, which is narrower than the instruction set on some cores: AMD's
// first Zen cores (family 23 below model 0x30, and Hygon's family 24) split each 256-bit FMA into
// two 128-bit halves, and Zen 3/4 (family 25) run AVX-512 on 256-bit units. Counting the
// instruction's lanes there would print twice the peak and half the share of it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace nrt::bench {

struct CpuPeak {
  double gflops = 0;        // 0 where the clock is unknown
  std::string derivation;
};

// What /proc/cpuinfo says of the first core.
struct CpuIdentity {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "HygonGenuine"
  int family = 0;
  int model = 0;
  double ghz = 0;
};

inline CpuIdentity first_core_identity() {
  CpuIdentity id;
  std::ifstream info("/proc/cpuinfo");
  auto value = [](const std::string& line) { return line.substr(line.find(':') + 1); };
  for (std::string line; std::getline(info, line);) {
    if (line.empty()) break;  // the first core's block ends
    if (line.rfind("vendor_id", 0) == 0) {
      id.vendor = value(line);
      id.vendor.erase(0, id.vendor.find_first_not_of(" \t"));
    } else if (line.rfind("cpu family", 0) == 0) {
      id.family = std::atoi(value(line).c_str());
    } else if (line.rfind("model", 0) == 0 && line.rfind("model name", 0) != 0) {
      id.model = std::atoi(value(line).c_str());
    } else if (line.rfind("cpu MHz", 0) == 0) {
      id.ghz = std::atof(value(line).c_str()) / 1000.0;
    }
  }
  return id;
}

// Float lanes one FMA unit completes per cycle, and why.
inline int fma_datapath_lanes(const CpuIdentity& id, bool avx512, std::string* why) {
  const bool amd = id.vendor == "AuthenticAMD";
  if ((amd && id.family == 23 && id.model < 0x30) || (id.vendor == "HygonGenuine" && id.family == 24)) {
    *why = "AVX2 on 128-bit FMA units: Zen 1";
    return 4;
  }
  if (amd && id.family == 25 && avx512) {
    *why = "AVX-512 on 256-bit FMA units: Zen 4";
    return 8;
  }
  *why = avx512 ? "AVX-512" : "AVX2";
  return avx512 ? 16 : 8;
}

inline CpuPeak float32_core_peak() {
  const CpuIdentity id = first_core_identity();
  std::string why;
  const int lanes = fma_datapath_lanes(id, __builtin_cpu_supports("avx512f"), &why);
  CpuPeak peak;
  peak.gflops = 2.0 * lanes * 2.0 * id.ghz;
  char text[240];
  std::snprintf(text, sizeof text,
                "%.1f GFLOP/s = 2 FMA units x %d float lanes (%s) x 2 flops x %.2f GHz (/proc/cpuinfo; the FMA unit "
                "count is assumed, server cores have 2)",
                peak.gflops, lanes, why.c_str(), id.ghz);
  peak.derivation = text;
  return peak;
}

}  // namespace nrt::bench
