// The contract between the plan's fusions of op chains (rms_norm_fusion.h, rotary_fusion.h,
// silu_mul_fusion.h) and
// the kernels that run them (executor/kernels/cpu/fused_chain_kernels.cc): a chain's first node
// runs its fused kernel on the arguments below, by name only (names no operator schema has), its
// last node becomes a view of the first's result, and the nodes between run kAbsorbedTarget. A
// device without these kernels fuses nothing.
#pragma once

#include <string_view>

namespace nrt::exec::fused_chains {

// No arguments, no results: a node whose work the chain's first node did.
inline constexpr std::string_view kAbsorbedTarget = "nrt::absorbed";

// RMSNorm: x (float32, normalised over its last dim), eps (a number) and the weight (float32 [x's
// last dim]; absent where the chain ends before a weight's mul).
inline constexpr std::string_view kRmsNormTarget = "nrt::rms_norm_chain";
inline constexpr std::string_view kRmsNormInput = "nrt.rms_norm.input";
inline constexpr std::string_view kRmsNormEps = "nrt.rms_norm.eps";
inline constexpr std::string_view kRmsNormWeight = "nrt.rms_norm.weight";

// Rotary embedding: x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., h:], x[..., :h])
// over x's last dim of 2h; x, cos and sin float32, cos and sin broadcast to x's sizes.
inline constexpr std::string_view kRotaryTarget = "nrt::rotary_chain";
inline constexpr std::string_view kRotaryInput = "nrt.rotary.input";
inline constexpr std::string_view kRotaryCos = "nrt.rotary.cos";
inline constexpr std::string_view kRotarySin = "nrt.rotary.sin";

// SiLU times another value, the gated feed-forward of the Llama family: silu(gate) * up, gate and up
// float32 of the same sizes. This chain's kernel runs at its last node (the mul: up is often
// computed after the silu) and the silu node does nothing.
inline constexpr std::string_view kSiluMulTarget = "nrt::silu_mul_chain";
inline constexpr std::string_view kSiluMulGate = "nrt.silu_mul.gate";
inline constexpr std::string_view kSiluMulUp = "nrt.silu_mul.up";

}  // namespace nrt::exec::fused_chains
