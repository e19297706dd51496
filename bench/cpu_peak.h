// The core's float32 peak, the yardstick GEMM and convolution benchmarks print their GFLOP/s
// against, with how it was derived: FMA units x float lanes per FMA x 2 flops per FMA x the clock.
// The FMA unit count is not visible to software: 2 is assumed (server cores have 2), and the
// printed derivation says so. The clock is the one the core runs at, measured (a chain of
// dependent adds, one a cycle), where it is above /proc/cpuinfo's figure: that is the base clock,
// and on an EPYC that boosts to 2.95 GHz from 2.0 the libraries' GEMMs ran above a peak built on it.
//
// The lanes are the FMA datapath's, which is narrower than the instruction set on some cores: AMD's
// first Zen cores (family 23 below model 0x30, and Hygon's family 24) split each 256-bit FMA into
// two 128-bit halves, and Zen 3/4 (family 25) run AVX-512 on 256-bit units. Counting the
// instruction's lanes there would print twice the peak and half the share of it.
#pragma once

#include <chrono>
#include <cstdint>
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

// The clock this core runs at now, in GHz: the best of 5 timings of 64,000 rounds of 64 dependent
// register adds (a cycle each on every x86-64 core; adding a register, not an immediate, which
// some cores fold at rename). The loop is all assembly, so the build's optimisation level does not
// change it. 0 off x86-64.
inline double measured_clock_ghz() {
  double best = 0;
#if defined(__x86_64__)
#define NRT_ADD8 "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
  constexpr int64_t kRounds = 64000;
  for (int trial = 0; trial < 5; ++trial) {
    uint64_t sum = 0, rounds = kRounds;
    const uint64_t step = 1;
    const auto start = std::chrono::steady_clock::now();
    asm volatile("1:\n\t" NRT_ADD8 NRT_ADD8 NRT_ADD8 NRT_ADD8 NRT_ADD8 NRT_ADD8 NRT_ADD8 NRT_ADD8
                 "dec %1\n\tjnz 1b"
                 : "+r"(sum), "+r"(rounds)
                 : "r"(step)
                 : "cc");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 0 && kRounds * 64.0 / seconds / 1e9 > best) best = kRounds * 64.0 / seconds / 1e9;
  }
#undef NRT_ADD8
#endif
  return best;
}

inline CpuPeak float32_core_peak() {
  const CpuIdentity id = first_core_identity();
  std::string why;
  const int lanes = fma_datapath_lanes(id, __builtin_cpu_supports("avx512f"), &why);
  const double measured = measured_clock_ghz();
  const bool boosted = measured > id.ghz;
  const double ghz = boosted ? measured : id.ghz;
  CpuPeak peak;
  peak.gflops = 2.0 * lanes * 2.0 * ghz;
  char clock[120];
  if (boosted) {
    std::snprintf(clock, sizeof clock, "measured: dependent adds; /proc/cpuinfo says %.2f", id.ghz);
  } else {
    std::snprintf(clock, sizeof clock, "/proc/cpuinfo");
  }
  char text[320];
  std::snprintf(text, sizeof text,
                "%.1f GFLOP/s = 2 FMA units x %d float lanes (%s) x 2 flops x %.2f GHz (%s; the FMA unit "
                "count is assumed, server cores have 2)",
                peak.gflops, lanes, why.c_str(), ghz, clock);
  peak.derivation = text;
  return peak;
}

}  // namespace nrt::bench
