// Arrays between Python and nrt's tensors. An input is anything nanobind reads as an array: a
// NumPy array (buffer protocol) or any object with __dlpack__ (torch tensors, JAX, CuPy on the
// host). A C-contiguous CPU array of the input's dtype is read in place (no copy); a strided one
// is copied once into a contiguous tensor; another dtype or a device array is a TypeError naming
// the input, since a silent conversion would hide a pipeline's mistake (ONNX Runtime refuses
// them the same way).
//
// An output tensor becomes a NumPy array that owns the executor's copy (the capsule keeps the
// Storage alive): no second copy. NumPy has no bfloat16, so a bfloat16 output comes as float32
// (exact); a bfloat16 input comes through DLPack (a torch tensor).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>
#include <vector>

#include "executor/runtime/runtime_value.h"
#include "executor/runtime/tensor.h"

namespace nrt::python {

// The arrays a call's input tensors view, held (with the GIL) until the run is over: an object's
// __dlpack__ capsule may be the only owner of the memory it exports.
using HeldArrays = std::vector<nanobind::ndarray<nanobind::ro>>;

// The tensor viewing (or, when strided, copying) `array`; the view borrows memory that `held`
// keeps alive for as long as the caller keeps `held`.
exec::Tensor tensor_from_array(const std::string& name, nanobind::handle array, ScalarType expected,
                               HeldArrays& held);

// A NumPy array of `tensor`'s elements that owns its storage; other runtime values become the
// Python values they are (int, float, bool, str, None, lists).
nanobind::object to_python(const exec::RuntimeValue& value);

}  // namespace nrt::python
