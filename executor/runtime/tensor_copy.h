// Copying elements between tensors of the same dtype and shape but any strides (a byte copy per
// element; a single memcpy when both are contiguous). Used where the executor hands out or takes
// in whole tensors (outputs copied out of the arena, .npy files, Fortran order), not by kernels.
#pragma once

#include "executor/runtime/tensor.h"
#include "core/error.h"

namespace nrt::exec {

// `dst` must have the dtype and sizes of `src`; elements are copied in row-major order.
Status copy_elements(const Tensor& src, const Tensor& dst);

// A new contiguous CPU tensor holding the elements of `src`.
Tensor contiguous_copy(const Tensor& src);

}  // namespace nrt::exec
