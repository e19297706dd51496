// Deterministic inputs for a graph, for runs without data (`nrt-run --random-inputs SEED`) and
// for benchmarks.
//
// Generator: one SplitMix64 stream seeded with SEED, consumed by the user inputs in signature
// order (skipping those the caller provides), each tensor's elements in row-major order, one
// 64-bit draw x per element:
//   floating dtypes (f16, bf16, f32, f64): ((x >> 11) * 2^-53) * 2 - 1, uniform in [-1, 1),
//     rounded to the dtype;
//   integer dtypes: x % 10, uniform in [0, 10) (small, non-negative: valid as indices into most
//     tables);
//   bool: x & 1;
//   complex: real and imaginary parts from two draws, each as for floats.
// Symbolic sizes take the file's hint (SymDim.hint); symbolic int inputs their SymInfo hint. An
// input whose size has no hint, or whose dtype is not one of the above, is an error naming it.
// SplitMix64: x += 0x9e3779b97f4a7c15; z = x; z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
// z = (z ^ (z >> 27)) * 0x94d049bb133111eb; return z ^ (z >> 31).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "executor/runtime/executor.h"

namespace nrt::exec {

Result<NamedInputs> random_inputs(const std::vector<InputDescription>& inputs, uint64_t seed,
                                  const std::set<std::string, std::less<>>& skip = {});

}  // namespace nrt::exec
