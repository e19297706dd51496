// NumPy .npy files ⇄ tensors.
//
// Reading accepts format versions 1.0, 2.0 and 3.0 and every NumPy dtype nrt has an element type
// for: f2 f4 f8, i1 i2 i4 i8, u1 u2 u4 u8, b1, c8 c16, in little-endian ('<', '|', '=') or
// big-endian ('>', swapped on read) byte order. Fortran-ordered arrays are transposed into C
// order. The bytes are untrusted: the header length is bounded (kMaxNpyHeaderBytes), the header
// must be the dict NumPy writes (descr, fortran_order, shape; nothing else), the element count
// must not overflow, and the data must be exactly as long as the shape says.
//
// Writing produces version 1.0 (2.0 when the header would not fit), C order, little-endian.
//
// bfloat16 has no NumPy dtype. nrt writes a bf16 tensor as a float32 array (exact: every bf16 is
// a float32) and, where a bf16 tensor is expected, accepts a float32 array (rounded to nearest,
// ties to even) or a uint16 array holding the raw bf16 bits (the convention of
// scripts/torch_corpus.py); see `convert_npy_for`. Other dtypes without a NumPy counterpart
// (float8 kinds, complex32, quantized, bits) are refused with an error naming the dtype.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "executor/runtime/tensor.h"
#include "core/error.h"
#include "serializer/atomic_file.h"

namespace nrt::exec {

inline constexpr size_t kMaxNpyHeaderBytes = 1 << 16;

// Parses .npy bytes into a new contiguous CPU tensor. `what` names the source in errors.
Result<Tensor> parse_npy(std::span<const uint8_t> bytes, const std::string& what = "npy");
Result<Tensor> read_npy(const std::string& path);

// Encodes any tensor (strided views included) as .npy bytes; bf16 becomes float32.
Result<std::vector<uint8_t>> encode_npy(const Tensor& tensor);
// Writes atomically (temporary file, then rename); `durability` as serializer/atomic_file.h says.
Status write_npy(const std::string& path, const Tensor& tensor, Durability durability = Durability::kFsync);

// The NumPy descr nrt uses for `dtype` ("<f4"), empty when NumPy has none (bf16 maps to "<f4").
std::string npy_descr(ScalarType dtype);

// Adapts a tensor read from .npy to the dtype a graph input declares: identity when the dtypes
// agree; float32 -> bf16 by rounding; uint16 -> bf16 as raw bits. Anything else is an error that
// names both dtypes (nrt-run does not cast silently).
Result<Tensor> convert_npy_for(const Tensor& tensor, ScalarType want, const std::string& what);

}  // namespace nrt::exec
