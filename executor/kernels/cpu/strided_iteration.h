// Generic N-d iteration over several operands of one shape (inputs broadcast beforehand with
// stride-0 views). Dimensions of size 1 are dropped and adjacent dimensions merged wherever every
// operand's strides allow, so a contiguous (or uniformly strided) operand set becomes one run;
// `loop(pointers, byte_strides, n)` is called once per run of the innermost remaining dimension, in
// row-major order of the shape (arg-reductions rely on that order: merging never reorders).
// Layouts of up to DimVector::kInline dimensions are built without touching the heap.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "executor/kernels/cpu/dim_vector.h"
#include "executor/kernels/cpu/loop_operand.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

template <size_t N>
struct RunLayout {
  bool empty = false;                   // some size is 0: nothing to visit
  DimVector sizes;                      // outermost first; none for a single element
  std::array<DimVector, N> strides;     // in bytes, per operand
};

// `byte_strides[i][d]` is operand i's stride along dimension d, in bytes.
template <size_t N>
RunLayout<N> coalesce_runs(std::span<const int64_t> sizes, const std::array<std::span<const int64_t>, N>& byte_strides) {
  RunLayout<N> layout;
  // Built innermost first, reversed at the end.
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 0) layout.empty = true;
    if (sizes[d] == 1) continue;
    bool merges = !layout.sizes.empty();
    for (size_t i = 0; merges && i < N; ++i) {
      merges = byte_strides[i][d] == layout.strides[i].back() * layout.sizes.back();
    }
    if (merges) {
      layout.sizes.back() *= sizes[d];
    } else {
      layout.sizes.push_back(sizes[d]);
      for (size_t i = 0; i < N; ++i) layout.strides[i].push_back(byte_strides[i][d]);
    }
  }
  std::reverse(layout.sizes.begin(), layout.sizes.end());
  for (auto& s : layout.strides) std::reverse(s.begin(), s.end());
  return layout;
}

// Visits `layout` starting at `pointers`.
template <size_t N, class Loop>
void for_each_run_in(const RunLayout<N>& layout, std::array<uint8_t*, N> pointers, Loop&& loop) {
  if (layout.empty) return;
  std::array<int64_t, N> inner_strides{};
  if (layout.sizes.empty()) {
    loop(pointers, inner_strides, int64_t{1});
    return;
  }
  const size_t inner = layout.sizes.size() - 1;
  for (size_t i = 0; i < N; ++i) inner_strides[i] = layout.strides[i][inner];
  if (inner == 0) {
    loop(pointers, inner_strides, layout.sizes[0]);
    return;
  }
  DimVector index(inner, 0);
  while (true) {
    loop(pointers, inner_strides, layout.sizes[inner]);
    size_t d = inner;
    while (d-- > 0) {
      for (size_t i = 0; i < N; ++i) pointers[i] += layout.strides[i][d];
      if (++index[d] < layout.sizes[d]) break;
      for (size_t i = 0; i < N; ++i) pointers[i] -= layout.strides[i][d] * layout.sizes[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// Operands already laid out along `sizes` (LoopOperand::of / broadcast / read). When every one
// walks the shape as a single run (dense or repeated), that run is visited without coalescing.
template <size_t N, class Loop>
void for_each_run(std::span<const int64_t> sizes, const std::array<const LoopOperand*, N>& operands, Loop&& loop) {
  std::array<uint8_t*, N> pointers;
  std::array<int64_t, N> flat_strides;
  bool flat = true;
  for (size_t i = 0; i < N; ++i) {
    pointers[i] = operands[i]->data();
    flat_strides[i] = operands[i]->flat_stride();
    flat = flat && flat_strides[i] >= 0;
  }
  if (flat) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    if (n > 0) loop(pointers, flat_strides, n);
    return;
  }
  std::array<std::span<const int64_t>, N> byte_strides;
  for (size_t i = 0; i < N; ++i) byte_strides[i] = operands[i]->byte_strides();
  const RunLayout<N> layout = coalesce_runs<N>(sizes, byte_strides);
  for_each_run_in(layout, pointers, loop);
}

// for_each_run for maps, which may visit in any order: the dimensions are taken in the order of
// the first operand's (the output's) strides, largest first, so that an output laid out permuted
// (torch keeps a transposed input's layout: whisper's residual stream) and inputs laid out alike
// coalesce into long runs along its stride-1 dimension instead of runs strided by a row.
template <size_t N, class Loop>
void for_each_run_in_memory_order(std::span<const int64_t> sizes, const std::array<const LoopOperand*, N>& operands,
                                  Loop&& loop) {
  if (operands[0]->flat_stride() >= 0) {  // a row-major output: already in memory order
    for_each_run<N>(sizes, operands, loop);
    return;
  }
  const std::span<const int64_t> first = operands[0]->byte_strides();
  auto magnitude = [&](int64_t d) {
    const int64_t stride = first[static_cast<size_t>(d)];
    return stride < 0 ? -stride : stride;
  };
  // Insertion sort, stable (ties keep row-major order) and without the heap stable_sort may use.
  DimVector order(sizes.size());
  for (size_t d = 0; d < order.size(); ++d) {
    size_t at = d;
    while (at > 0 && magnitude(order[at - 1]) < magnitude(static_cast<int64_t>(d))) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = static_cast<int64_t>(d);
  }
  if (std::is_sorted(order.begin(), order.end())) {
    for_each_run<N>(sizes, operands, loop);
    return;
  }
  DimVector permuted_sizes(sizes.size());
  std::array<DimVector, N> permuted_strides;
  std::array<std::span<const int64_t>, N> strides;
  std::array<uint8_t*, N> pointers;
  for (size_t i = 0; i < N; ++i) {
    const std::span<const int64_t> own = operands[i]->byte_strides();
    permuted_strides[i] = DimVector(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) permuted_strides[i][d] = own[static_cast<size_t>(order[d])];
    strides[i] = permuted_strides[i];
    pointers[i] = operands[i]->data();
  }
  for (size_t d = 0; d < sizes.size(); ++d) permuted_sizes[d] = sizes[static_cast<size_t>(order[d])];
  for_each_run_in(coalesce_runs<N>(permuted_sizes, strides), pointers, loop);
}

// for_each_run for maps whose runs are independent (each output element depends only on the
// inputs at its position): a single flat run of many elements is split over the intra-op threads
// (intra_op_threads.h), each thread taking one contiguous part. Reductions, which rely on the
// visiting order, use for_each_run.
inline constexpr int64_t kParallelMapGrain = 1 << 15;

template <size_t N, class Loop>
void for_each_run_parallel(std::span<const int64_t> sizes, const std::array<const LoopOperand*, N>& operands,
                           Loop&& loop) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  bool flat = intra_op_threads() > 1 && n >= 2 * kParallelMapGrain;
  std::array<uint8_t*, N> pointers;
  std::array<int64_t, N> flat_strides;
  for (size_t i = 0; flat && i < N; ++i) {
    pointers[i] = operands[i]->data();
    flat_strides[i] = operands[i]->flat_stride();
    flat = flat_strides[i] >= 0;
  }
  if (!flat) {
    for_each_run_in_memory_order<N>(sizes, operands, loop);
    return;
  }
  parallel_for(n, kParallelMapGrain, [&](int64_t begin, int64_t end) {
    std::array<uint8_t*, N> at;
    for (size_t i = 0; i < N; ++i) at[i] = pointers[i] + begin * flat_strides[i];
    loop(at, flat_strides, end - begin);
  });
}

// Tensors whose sizes are all `sizes`.
template <size_t N, class Loop>
void for_each_run(std::span<const int64_t> sizes, const std::array<const Tensor*, N>& operands, Loop&& loop) {
  std::array<LoopOperand, N> views;
  std::array<const LoopOperand*, N> pointers;
  for (size_t i = 0; i < N; ++i) {
    views[i] = LoopOperand::of(*operands[i]);
    pointers[i] = &views[i];
  }
  for_each_run<N>(sizes, pointers, loop);
}

}  // namespace nrt::exec::cpu
