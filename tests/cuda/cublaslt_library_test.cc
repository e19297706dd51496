// cuBLASLt is opened when first asked for, not when the process starts (executor/cuda/cublaslt_library.h):
// this test links the CUDA executor, finds the library unmapped at start, opens it, and calls the
// entry points that need no device. It runs on the CPU (CI); the products run in cuda_kernels_test.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "executor/cuda/cublaslt_library.h"
#include "executor/cuda/cuda_status.h"

namespace nrt::exec::cuda {
namespace {

bool mapped(const std::string& file_name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(file_name) != std::string::npos;
}

// One test, in order: whether the library is mapped is process-wide state.
TEST(CublasLtLibrary, OpensOnFirstUseWithEveryEntryPoint) {
  const std::string name = cublaslt_file_name();
  EXPECT_EQ(name, "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR));
  EXPECT_FALSE(mapped("libcublasLt")) << "cuBLASLt was mapped before anything asked for it";

  const auto lt = cublaslt();
  ASSERT_TRUE(lt.ok()) << lt.error().to_string();
  EXPECT_TRUE(mapped(name));
  const CublasLt& table = **lt;
  for (const void* entry : {reinterpret_cast<const void*>(table.get_version),
                            reinterpret_cast<const void*>(table.get_status_name),
                            reinterpret_cast<const void*>(table.get_status_string),
                            reinterpret_cast<const void*>(table.create), reinterpret_cast<const void*>(table.matmul),
                            reinterpret_cast<const void*>(table.matmul_algo_get_heuristic),
                            reinterpret_cast<const void*>(table.matmul_desc_create),
                            reinterpret_cast<const void*>(table.matmul_desc_destroy),
                            reinterpret_cast<const void*>(table.matmul_desc_set_attribute),
                            reinterpret_cast<const void*>(table.matmul_preference_create),
                            reinterpret_cast<const void*>(table.matmul_preference_destroy),
                            reinterpret_cast<const void*>(table.matmul_preference_set_attribute),
                            reinterpret_cast<const void*>(table.matrix_layout_create),
                            reinterpret_cast<const void*>(table.matrix_layout_destroy),
                            reinterpret_cast<const void*>(table.matrix_layout_set_attribute)}) {
    EXPECT_NE(entry, nullptr);
  }
  EXPECT_EQ(table.get_version() / 10000, static_cast<size_t>(CUBLAS_VER_MAJOR));
  EXPECT_STREQ(table.get_status_name(CUBLAS_STATUS_NOT_SUPPORTED), "CUBLAS_STATUS_NOT_SUPPORTED");

  // Descriptors are host objects: made and destroyed without a device.
  cublasLtMatrixLayout_t layout = nullptr;
  EXPECT_EQ(table.matrix_layout_create(&layout, CUDA_R_32F, 4, 3, 4), CUBLAS_STATUS_SUCCESS);
  EXPECT_NE(layout, nullptr);
  const int32_t batches = 2;
  EXPECT_EQ(table.matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batches, sizeof(batches)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(table.matrix_layout_destroy(layout), CUBLAS_STATUS_SUCCESS);

  // The same table on every later call.
  const auto again = cublaslt();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *lt);

  // A failed call is named through the library.
  const Status failed = cublas_check(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::DeviceError);
  EXPECT_NE(failed.error().message.find("cublasLtMatmul: "), std::string::npos) << failed.error().message;
  EXPECT_NE(failed.error().message.find("(CUBLAS_STATUS_NOT_SUPPORTED)"), std::string::npos) << failed.error().message;
}

// What cannot be used is named, with the file, as DeviceUnavailable: no such file; a library that
// is not cuBLASLt (the CUDA runtime, which lacks its entry points).
TEST(CublasLtLibrary, NamesWhatCannotBeUsed) {
  const auto absent = open_cublaslt({"libcublasLt.so.0-absent", "/nonexistent/libcublasLt.so"});
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.error().code, ErrorCode::DeviceUnavailable);
  // Each file tried, with why it failed.
  EXPECT_NE(absent.error().message.find("libcublasLt.so.0-absent"), std::string::npos) << absent.error().message;
  EXPECT_NE(absent.error().message.find("; /nonexistent/libcublasLt.so"), std::string::npos) << absent.error().message;

  const std::string runtime = "libcudart.so." + std::to_string(CUDART_VERSION / 1000);
  const auto other = open_cublaslt({runtime});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::DeviceUnavailable);
  EXPECT_NE(other.error().message.find("'" + runtime + "' lacks cublasLtGetVersion, cublasLtGetStatusName"),
            std::string::npos)
      << other.error().message;

  // A file that cannot serve does not stop the search: the next one is tried.
  const auto after_runtime = open_cublaslt({runtime, cublaslt_file_name()});
  ASSERT_TRUE(after_runtime.ok()) << after_runtime.error().to_string();
  EXPECT_EQ((*after_runtime)->get_version() / 10000, static_cast<size_t>(CUBLAS_VER_MAJOR));

  EXPECT_FALSE(open_cublaslt({}).ok());
}

}  // namespace
}  // namespace nrt::exec::cuda
