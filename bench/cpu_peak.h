// The core's float32 peak, the yardstick GEMM and convolution benchmarks print their GFLOP/s
// against, with how it was derived: FMA units x float lanes x 2 flops per FMA x the clock
// /proc/cpuinfo reports. The FMA unit count is not visible to software: 2 is assumed (server
// cores have 2), and the printed derivation says so.
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

inline CpuPeak float32_core_peak() {
  double ghz = 0;
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      ghz = std::atof(line.substr(line.find(':') + 1).c_str()) / 1000.0;
      break;
    }
  }
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int lanes = avx512 ? 16 : 8;
  CpuPeak peak;
  peak.gflops = 2.0 * lanes * 2.0 * ghz;
  char text[200];
  std::snprintf(text, sizeof text,
                "%.1f GFLOP/s = 2 FMA units x %d float lanes (%s) x 2 flops x %.2f GHz (/proc/cpuinfo; the FMA unit "
                "count is assumed, server cores have 2)",
                peak.gflops, lanes, avx512 ? "AVX-512" : "AVX2", ghz);
  peak.derivation = text;
  return peak;
}

}  // namespace nrt::bench
