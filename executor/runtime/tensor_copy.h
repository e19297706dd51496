// Copying elements between tensors of the same dtype and shape but any strides (a row at a time; a
// single memcpy when both are contiguous). Used where the executor hands out or takes in whole
// tensors (outputs copied out of the arena, .npy files, Fortran order); kernels copy through
// executor/kernels/cpu/tensor_copy.h, which shares copy_strided.
#pragma once

#include <cstddef>
#include <cstdint>

#include "executor/runtime/tensor.h"
#include "core/error.h"

namespace nrt::exec {

// `count` elements of `element` bytes, each side stepping its own byte stride (0 repeats an
// element): a typed loop for 1, 2, 4 and 8 bytes (a memcpy call per element ran at 1.5 GB/s).
void copy_strided(uint8_t* to, int64_t to_step, const uint8_t* from, int64_t from_step, int64_t count, size_t element);

// `dst` must have the dtype and sizes of `src`; elements are copied in row-major order.
Status copy_elements(const Tensor& src, const Tensor& dst);

// A new contiguous tensor on `src`'s device holding its elements.
Tensor contiguous_copy(const Tensor& src);

// A new contiguous tensor on `device` holding the elements of `src` (any device): the edge of a
// run on a device, where inputs go to it and outputs come back.
Result<Tensor> copy_to_device(const Tensor& src, Device device);

// A device backend's copy between two tensors of the same sizes on its device, any strides,
// converting between the dtypes the device takes (the host copies strided tensors itself).
// Registered at static initialisation.
using StridedCopyFn = Status (*)(const Tensor& src, const Tensor& dst);
void register_strided_copy(DeviceKind kind, StridedCopyFn copy);

// `src` into `dst` (both on one device other than the host, same sizes) through that device's
// strided copy; NotSupported when it has none.
Status device_copy(const Tensor& src, const Tensor& dst);

}  // namespace nrt::exec
