// The CUDA device's Allocator (executor/runtime/allocator.h): stream-ordered memory from the
// device's default pool (cudaMallocAsync on the context's stream), which keeps freed blocks for
// the next allocation instead of returning them to the driver (its release threshold is raised to
// the whole pool), so a frame's arena and a kernel's scratch cost no cudaMalloc after the first
// run. Copies between the host and the device go on the same stream, then wait for it: a copy to
// the host sees every kernel enqueued before it. Large copies from the host (weights at load,
// big inputs) go through two pinned staging buffers in turn, so that the host's copy into one
// overlaps the device's read of the other (pageable memory would be staged by the driver
// without overlap).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "executor/cuda/cuda_context.h"
#include "executor/cuda/cuda_status.h"
#include "executor/runtime/allocator.h"

namespace nrt::exec::cuda {
namespace {

constexpr int kMaxDevices = 64;
constexpr size_t kBlasWorkspaceBytes = size_t{32} << 20;  // cuBLASLt's recommendation for Hopper
constexpr size_t kStagingBytes = size_t{16} << 20;        // each of the two pinned buffers
constexpr size_t kStagedCopyBytes = size_t{4} << 20;      // copies from the host from this size on

// Two pinned host buffers per device for large copies to it; made on first use, kept.
struct Staging {
  std::mutex mutex;
  void* buffers[2] = {nullptr, nullptr};
  cudaEvent_t done[2] = {nullptr, nullptr};
};
std::array<Staging, 64> g_staging;

// Copies `bytes` from pageable host memory to the device through the pinned buffers: while the
// device reads one chunk, the host fills the other.
Status staged_copy_to_device(CudaContext& c, void* dst, const void* src, size_t bytes) {
  Staging& s = g_staging[static_cast<size_t>(c.device)];
  std::lock_guard<std::mutex> lock(s.mutex);
  for (int k = 0; k < 2; ++k) {
    if (s.buffers[k] == nullptr) {
      NRT_RETURN_IF_ERROR(cuda_check(cudaMallocHost(&s.buffers[k], kStagingBytes), "cudaMallocHost"));
      NRT_RETURN_IF_ERROR(cuda_check(cudaEventCreateWithFlags(&s.done[k], cudaEventDisableTiming), "cudaEventCreate"));
    }
  }
  size_t offset = 0;
  for (int k = 0; offset < bytes; k ^= 1) {
    const size_t chunk = std::min(kStagingBytes, bytes - offset);
    // The buffer's previous chunk must have left for the device before it is refilled.
    NRT_RETURN_IF_ERROR(cuda_check(cudaEventSynchronize(s.done[k]), "cudaEventSynchronize"));
    std::memcpy(s.buffers[k], static_cast<const uint8_t*>(src) + offset, chunk);
    NRT_RETURN_IF_ERROR(cuda_check(cudaMemcpyAsync(static_cast<uint8_t*>(dst) + offset, s.buffers[k], chunk,
                                                   cudaMemcpyHostToDevice, c.stream),
                                   "cudaMemcpyAsync"));
    NRT_RETURN_IF_ERROR(cuda_check(cudaEventRecord(s.done[k], c.stream), "cudaEventRecord"));
    offset += chunk;
  }
  return cuda_check(cudaStreamSynchronize(c.stream), "cudaStreamSynchronize");
}

std::mutex g_contexts_mutex;
std::array<std::unique_ptr<CudaContext>, kMaxDevices> g_contexts;

Status device_present(int index) {
  int count = 0;
  if (Status s = cuda_check(cudaGetDeviceCount(&count), "cudaGetDeviceCount"); !s) {
    return make_error(ErrorCode::DeviceUnavailable, "no CUDA device can be used: " + s.error().message);
  }
  if (index < 0 || index >= count || index >= kMaxDevices) {
    return make_error(ErrorCode::DeviceUnavailable, "no CUDA device " + std::to_string(index) + ": the driver sees " +
                                                        std::to_string(count) + (count == 1 ? " device" : " devices"));
  }
  return {};
}

Result<std::unique_ptr<CudaContext>> make_context(int index) {
  NRT_RETURN_IF_ERROR(device_present(index));
  // Before anything is created on the device: a failed context is made again on the next use.
  NRT_TRY(lt, cublaslt());
  auto context = std::make_unique<CudaContext>();
  context->device = index;
  context->lt = *lt;
  NRT_RETURN_IF_ERROR(cuda_check(cudaSetDevice(index), "cudaSetDevice"));
  NRT_RETURN_IF_ERROR(cuda_check(cudaDeviceGetAttribute(&context->multiprocessors, cudaDevAttrMultiProcessorCount, index),
                                 "cudaDeviceGetAttribute"));
  NRT_RETURN_IF_ERROR(cuda_check(cudaStreamCreateWithFlags(&context->stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  cudaMemPool_t pool = nullptr;
  NRT_RETURN_IF_ERROR(cuda_check(cudaDeviceGetDefaultMemPool(&pool, index), "cudaDeviceGetDefaultMemPool"));
  uint64_t keep_everything = UINT64_MAX;
  NRT_RETURN_IF_ERROR(cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything),
                                 "cudaMemPoolSetAttribute"));
  NRT_RETURN_IF_ERROR(cublas_check(context->lt->create(&context->blas), "cublasLtCreate"));
  NRT_RETURN_IF_ERROR(cuda_check(cudaMalloc(&context->blas_workspace, kBlasWorkspaceBytes), "cudaMalloc"));
  context->blas_workspace_bytes = kBlasWorkspaceBytes;
  return context;
}

class CudaAllocator final : public Allocator {
 public:
  DeviceKind kind() const override { return DeviceKind::kCuda; }

  Status check_device(Device device) override {
    auto context = cuda_context(device.index);
    if (!context) return context.error();
    return {};
  }

  void* allocate(size_t bytes, Device device) override {
    auto context = cuda_context(device.index);
    if (!context) throw_refused(context.error().to_string());
    CudaContext& c = **context;
    void* data = nullptr;
    // A size-0 storage still gets a block of its own (a distinct, non-null address).
    const size_t size = bytes == 0 ? 1 : bytes;
    Status s = cuda_check(cudaSetDevice(c.device), "cudaSetDevice");
    if (s) s = cuda_check(cudaMallocAsync(&data, size, c.stream), "cudaMallocAsync");
    if (s) s = cuda_check(cudaMemsetAsync(data, 0, size, c.stream), "cudaMemsetAsync");
    if (!s) throw_refused(s.error().to_string() + " (" + std::to_string(bytes) + " bytes on " + device.to_string() + ")");
    return data;
  }

  void deallocate(void* data, size_t, Device device) override {
    auto context = cuda_context(device.index);
    if (!context) return;
    if (Status s = cuda_check(cudaFreeAsync(data, (*context)->stream), "cudaFreeAsync"); !s) {
      spdlog::error("{}", s.error().to_string());
    }
  }

  Status copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override {
    if (bytes == 0) return {};
    const Device device = dst_device.kind == DeviceKind::kCuda ? dst_device : src_device;
    NRT_TRY(context, cuda_context(device.index));
    const cudaMemcpyKind direction = src_device.kind == DeviceKind::kCpu   ? cudaMemcpyHostToDevice
                                     : dst_device.kind == DeviceKind::kCpu ? cudaMemcpyDeviceToHost
                                                                           : cudaMemcpyDeviceToDevice;
    if (direction == cudaMemcpyHostToDevice && bytes >= kStagedCopyBytes) {
      return staged_copy_to_device(**context, dst, src, bytes);
    }
    NRT_RETURN_IF_ERROR(cuda_check(cudaMemcpyAsync(dst, src, bytes, direction, (*context)->stream), "cudaMemcpyAsync"));
    // Host memory may be reused as soon as this returns (and a copy to the host is read then).
    if (direction == cudaMemcpyDeviceToDevice) return {};
    return cuda_check(cudaStreamSynchronize((*context)->stream), "cudaStreamSynchronize");
  }

  Status synchronize(Device device) override {
    NRT_TRY(context, cuda_context(device.index));
    return cuda_check(cudaStreamSynchronize((*context)->stream), "cudaStreamSynchronize");
  }

  void* execution_context(Device device) override {
    auto context = cuda_context(device.index);
    return context ? *context : nullptr;
  }

 private:
  // The Allocator contract: a refused allocation is std::bad_alloc. The reason goes to the log,
  // since bad_alloc carries none.
  [[noreturn]] static void throw_refused(const std::string& reason) {
    spdlog::error("CUDA allocation refused: {}", reason);
    throw std::bad_alloc();
  }
};

CudaAllocator g_allocator;
const bool g_registered = [] {
  if (Status s = register_allocator(&g_allocator); !s) spdlog::error("{}", s.error().to_string());
  return true;
}();

}  // namespace

Result<CudaContext*> cuda_context(int index) {
  if (index < 0 || index >= kMaxDevices) {
    if (Status absent = device_present(index); !absent) return absent.error();
  }
  std::lock_guard<std::mutex> lock(g_contexts_mutex);
  auto& slot = g_contexts[static_cast<size_t>(index)];
  if (!slot) {
    NRT_TRY(made, make_context(index));
    slot = std::move(*made);
  }
  return slot.get();
}

}  // namespace nrt::exec::cuda
