// One operand of an element-wise loop as the loop reads it: the address of its first element and
// its byte strides along the loop's shape (0 along broadcast dimensions). Building one copies no
// Tensor and allocates nothing for a tensor already in the computation's dtype or for a Python
// scalar (held inline); only a dtype conversion makes a copy, whose storage the operand then owns.
// A LoopOperand that points into a tensor is valid while that tensor's storage lives.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "executor/kernels/cpu/dim_vector.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

class LoopOperand {
 public:
  // `t` itself: the loop's shape is t's sizes.
  static LoopOperand of(const Tensor& t);
  // `t` (a kernel dtype) read in `dtype` and broadcast to `shape` (requires broadcasts_to): a
  // strided view when the dtype matches, else a converted contiguous copy viewed the same way.
  static LoopOperand broadcast(const Tensor& t, ScalarType dtype, std::span<const int64_t> shape);
  // A tensor operand as broadcast does; a scalar one as one element of `dtype` repeated over `shape`.
  static LoopOperand read(const Operand& operand, ScalarType dtype, std::span<const int64_t> shape);

  // The loops hand every operand out as a mutable address (as Tensor::raw_data does); inputs are
  // only read through it.
  uint8_t* data() const { return data_ != nullptr ? data_ : scalar_; }
  std::span<const int64_t> byte_strides() const { return byte_strides_; }
  // When the operand walks the loop's shape (size-1 dimensions aside) as one run with a fixed
  // step, that step in bytes: the element size for a dense row-major layout, 0 for a value
  // repeated everywhere; -1 otherwise. Lets for_each_run skip coalescing for the common case.
  int64_t flat_stride() const { return flat_stride_; }

 private:
  // Sets byte_strides_ from element strides of `source` aligned right against `shape` (stride 0
  // where `source` has size 1 and `shape` does not, and along the leading dims it lacks), and
  // flat_stride_ from them.
  void lay_out(const Tensor& source, std::span<const int64_t> shape);

  uint8_t* data_ = nullptr;  // null: the inline scalar
  DimVector byte_strides_;
  int64_t flat_stride_ = -1;
  alignas(8) mutable uint8_t scalar_[8] = {};
  std::shared_ptr<Storage> converted_;  // owns the memory data_ points into after a dtype conversion
};

}  // namespace nrt::exec::cpu
