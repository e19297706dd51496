// Copies between strided tensors, with dtype conversion through convert<>.
#pragma once

#include "executor/kernels/cpu/operand.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// Copies `src` (same sizes as `dst`, or broadcastable to them) into `dst`, converting the dtype.
// Same-dtype copies move bytes and work for every dtype; a conversion needs both dtypes in the
// kernels' set, else nothing is written and the result is false.
bool copy_into(const Tensor& dst, const Tensor& src);

// A new contiguous tensor with `t`'s values in `dtype` (both dtypes in the kernels' set).
Tensor converted_copy(const Tensor& t, ScalarType dtype);

// `t` itself when it is contiguous and of `dtype`, else converted_copy.
Tensor contiguous_as(const Tensor& t, ScalarType dtype);

// Sets every element of `t` (a kernel dtype) to `value`.
void fill_with(const Tensor& t, const ScalarValue& value);

// A 0-d tensor of `dtype` holding `value` on `device` (made on the host, copied there): the
// operand a kernel off the host broadcasts with stride 0.
Result<Tensor> scalar_on(const ScalarValue& value, ScalarType dtype, Device device);

}  // namespace nrt::exec::cpu
