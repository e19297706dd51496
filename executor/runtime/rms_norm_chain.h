// The contract between the plan's RMSNorm fusion (rms_norm_fusion.h) and the kernels that run a
// fused chain: the chain's first node runs kKernelTarget on these arguments, by name only (names no
// operator schema has), and the nodes between its first and last run kAbsorbedTarget.
#pragma once

#include <string_view>

namespace nrt::exec::rms_norm_chain {

// Registered by the CPU kernels (rms_norm_chain_kernels.cc); a device without them fuses nothing.
inline constexpr std::string_view kKernelTarget = "nrt::rms_norm_chain";
inline constexpr std::string_view kAbsorbedTarget = "nrt::rms_norm_absorbed";  // no arguments, no results

// x (float32, normalised over its last dim), eps (a number) and the weight (float32 [x's last
// dim]; absent where the chain ends before a weight's mul).
inline constexpr std::string_view kInput = "nrt.rms_norm.input";
inline constexpr std::string_view kEps = "nrt.rms_norm.eps";
inline constexpr std::string_view kWeight = "nrt.rms_norm.weight";

}  // namespace nrt::exec::rms_norm_chain
