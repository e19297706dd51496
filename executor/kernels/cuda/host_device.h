// NRT_HOST_DEVICE marks kernel math written once for both sides: compiled by nvcc it is
// __host__ __device__, by the host compiler a plain inline function, so the tests of every
// machine check the same math the GPU runs (tests/kernels/cuda_math_test.cc).
#pragma once

#if defined(__CUDACC__)
#define NRT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define NRT_HOST_DEVICE inline
#endif
