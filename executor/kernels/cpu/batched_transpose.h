// Copies of 4-byte elements between two layouts of one shape that transpose a batch of matrices:
// contiguous() of a transposed view, or an element-wise operand laid out as the transpose of its
// output (whisper's residual stream, which torch keeps transposed, plus a product's row-major
// result). An element loop reads one side a float at a time through a stride of a whole row
// (~0.5 ns an element here); channels_last_reorder.h's 8x8 register transposes take the pair
// whole (a whisper layer norm of 64x128, its input copied so: 8.1 -> 5.7 us, docs/PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "executor/kernels/cpu/loop_operand.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// `batches` matrices of `rows` x `columns` (row-major) in the source, their transposes
// (`columns` x `rows`, row-major) in the destination; batches `rows * columns` elements apart on
// both sides.
struct BatchedTranspose {
  int64_t batches = 1, rows = 0, columns = 0;
};

// When copying over `shape` from byte strides `from` to byte strides `to` (4-byte elements, both
// dense) transposes a batch of matrices that transposes_floats takes, that batch; else nullopt.
std::optional<BatchedTranspose> batched_transpose(std::span<const int64_t> shape, std::span<const int64_t> to,
                                                  std::span<const int64_t> from);

// Whether transpose_floats takes matrices of `rows` x `columns`.
bool transposes_floats(int64_t rows, int64_t columns);

// Copies `from` into `to` as `transpose` says (over the intra-op threads); no overlap.
void transpose_floats(const BatchedTranspose& transpose, const float* from, float* to);

// `operand` (4-byte elements over `out`'s sizes) copied into a new tensor laid out as `out` (4-byte
// elements, dense), where the two are transposes batched_transpose takes and worth a copy (at least
// kFewestTransposedElements); an undefined tensor otherwise. The element-wise maps read such an
// operand through it (elementwise_loops.h).
inline constexpr int64_t kFewestTransposedElements = 256;
Tensor laid_out_as(const Tensor& out, const LoopOperand& operand);

}  // namespace nrt::exec::cpu
