#include "executor/kernels/cpu/batched_transpose.h"

#include <array>

#include "executor/kernels/cpu/channels_last_reorder.h"
#include "executor/kernels/cpu/strided_iteration.h"

namespace nrt::exec::cpu {

std::optional<BatchedTranspose> batched_transpose(std::span<const int64_t> shape, std::span<const int64_t> to,
                                                  std::span<const int64_t> from) {
  constexpr int64_t kElement = 4;
  const RunLayout<2> layout = coalesce_runs<2>(shape, std::array<std::span<const int64_t>, 2>{to, from});
  const size_t rank = layout.sizes.size();
  if (layout.empty || rank < 2 || rank > 3) return std::nullopt;
  const auto& t = layout.strides[0];
  const auto& f = layout.strides[1];
  const int64_t outer = layout.sizes[rank - 2], inner = layout.sizes[rank - 1];
  BatchedTranspose transpose;
  if (t[rank - 2] == inner * kElement && t[rank - 1] == kElement && f[rank - 2] == kElement &&
      f[rank - 1] == outer * kElement) {
    transpose.rows = inner;  // the source holds [inner][outer], the destination [outer][inner]
    transpose.columns = outer;
  } else if (t[rank - 2] == kElement && t[rank - 1] == outer * kElement && f[rank - 2] == inner * kElement &&
             f[rank - 1] == kElement) {
    transpose.rows = outer;
    transpose.columns = inner;
  } else {
    return std::nullopt;
  }
  if (rank == 3) {
    const int64_t matrix = outer * inner * kElement;
    if (t[0] != matrix || f[0] != matrix) return std::nullopt;
    transpose.batches = layout.sizes[0];
  }
  if (!transposes_floats(transpose.rows, transpose.columns)) return std::nullopt;
  return transpose;
}

// channels_last_reorder.h's channels must be whole blocks of 8: either side may be its channels.
bool transposes_floats(int64_t rows, int64_t columns) {
  return reorder_channels_takes(rows) || reorder_channels_takes(columns);
}

void transpose_floats(const BatchedTranspose& transpose, const float* from, float* to) {
  // reorder_channels moves [channels][positions] to [positions][channels] (to_last) or back; its
  // channels are the side that must be whole blocks of 8.
  if (reorder_channels_takes(transpose.rows)) {
    reorder_channels(from, transpose.batches, transpose.rows, transpose.columns, true, to);
  } else {
    reorder_channels(from, transpose.batches, transpose.columns, transpose.rows, false, to);
  }
}

Tensor laid_out_as(const Tensor& out, const LoopOperand& operand) {
  if (out.element_size() != 4 || out.numel() < kFewestTransposedElements) return Tensor();
  const LoopOperand to = LoopOperand::of(out);
  const auto transpose = batched_transpose(out.sizes(), to.byte_strides(), operand.byte_strides());
  if (!transpose) return Tensor();
  Tensor copy = Tensor::empty(ScalarType::FLOAT32, {out.numel()});
  // The copy's first element is the one at `out`'s lowest address: both layouts are dense.
  transpose_floats(*transpose, reinterpret_cast<const float*>(operand.data()), copy.data<float>());
  return copy.as_strided(out.sizes(), out.strides(), 0);
}

}  // namespace nrt::exec::cpu
