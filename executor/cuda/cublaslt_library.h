// cuBLASLt, opened when the first CUDA context is made rather than when the process starts. Linked
// directly, its 540 MB library was mapped and relocated by every process that links the executor,
// CPU-only runs included: 145 MiB resident before the first node (84 of them its zeroed data,
// written by its constructors), and `nrt-run --help` took 0.12 s where it now takes 0.01
// (docs/CUDA.md). A machine without the library runs on the CPU, and names the missing file when
// asked for CUDA.
#pragma once

#include <cublasLt.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace nrt::exec::cuda {

// The entry points nrt calls, with the header's own types.
struct CublasLt {
  decltype(&::cublasLtGetVersion) get_version = nullptr;
  decltype(&::cublasLtGetStatusName) get_status_name = nullptr;
  decltype(&::cublasLtGetStatusString) get_status_string = nullptr;
  decltype(&::cublasLtCreate) create = nullptr;
  decltype(&::cublasLtMatmul) matmul = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) matmul_algo_get_heuristic = nullptr;
  decltype(&::cublasLtMatmulDescCreate) matmul_desc_create = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) matmul_preference_create = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) matmul_preference_destroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) matmul_preference_set_attribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) matrix_layout_create = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) matrix_layout_destroy = nullptr;
  decltype(&::cublasLtMatrixLayoutSetAttribute) matrix_layout_set_attribute = nullptr;
};

// The library of the headers' major version (libcublasLt.so.<major>: by the usual search, then in
// the toolkit the build used), opened once per process and kept; every later call returns the same
// table or the same error. DeviceUnavailable (NRT-E1014), naming each file tried and why, when
// none opens with every entry point at the headers' major version.
Result<const CublasLt*> cublaslt();

// The file name cublaslt() opens first ("libcublasLt.so.13").
std::string cublaslt_file_name();

// What cublaslt() does once: the table of the first of `candidates` (file names or paths) that
// opens and is cuBLASLt of the headers' major version, living (its library open) for the rest of
// the process; else DeviceUnavailable saying why each failed.
Result<const CublasLt*> open_cublaslt(const std::vector<std::string>& candidates);

}  // namespace nrt::exec::cuda
