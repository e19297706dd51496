#include "executor/kernels/cuda/kernel_support.h"

#include "executor/cuda/cuda_status.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cuda {

Result<StridedIndexer> make_indexer(std::span<const int64_t> sizes,
                                    std::span<const std::vector<int64_t>> strides, bool* dense) {
  const size_t operands = strides.size();
  // Dims of size 1 say nothing; the others merge with the next one when every operand steps over
  // the inner dim exactly (stride[outer] == stride[inner] * size[inner]).
  std::vector<int64_t> merged_sizes;
  std::vector<std::vector<int64_t>> merged(operands);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    bool joins = !merged_sizes.empty();
    for (size_t k = 0; k < operands && joins; ++k) {
      joins = merged[k].back() == strides[k][d] * sizes[d];
    }
    if (joins) {
      merged_sizes.back() *= sizes[d];
      for (size_t k = 0; k < operands; ++k) merged[k].back() = strides[k][d];
    } else {
      merged_sizes.push_back(sizes[d]);
      for (size_t k = 0; k < operands; ++k) merged[k].push_back(strides[k][d]);
    }
  }
  if (merged_sizes.size() > static_cast<size_t>(kMaxDims)) {
    return make_error(ErrorCode::KernelError, "more than " + std::to_string(kMaxDims) +
                                                  " dimensions after merging: not supported on CUDA");
  }
  StridedIndexer indexer;
  indexer.dims = static_cast<int>(merged_sizes.size());
  for (size_t d = 0; d < merged_sizes.size(); ++d) {
    indexer.sizes[d] = merged_sizes[d];
    for (size_t k = 0; k < operands; ++k) indexer.strides[k][d] = merged[k][d];
  }
  if (dense != nullptr) {
    *dense = indexer.dims == 0 || (indexer.dims == 1 && [&] {
               for (size_t k = 0; k < operands; ++k) {
                 if (indexer.strides[k][0] != 1) return false;
               }
               return true;
             }());
  }
  return indexer;
}

Status launch_result(const KernelContext& ctx, cudaError_t result, std::string_view what) {
  if (result == cudaSuccess) return {};
  Status s = cuda_check(result, what);
  return make_error(s.error().code, std::string(ctx.target()) + ": " + s.error().message);
}

Status check_dtype(const KernelContext& ctx, ScalarType dtype) {
  if (elementwise_dtype(dtype)) return {};
  return ctx.error("dtype " + std::string(short_name(dtype)) + " is not supported on CUDA");
}

Status copy_into(cudaStream_t stream, const Tensor& dst, const Tensor& src) {
  if (!elementwise_dtype(dst.dtype()) || !elementwise_dtype(src.dtype())) {
    return make_error(ErrorCode::KernelError, "a copy from " + std::string(short_name(src.dtype())) + " to " +
                                                  std::string(short_name(dst.dtype())) + " is not supported on CUDA");
  }
  if (dst.numel() == 0) return {};
  const Tensor from = src.sizes() == dst.sizes() ? src : cpu::expand_to(src, dst.sizes());
  const std::vector<int64_t> strides[2] = {dst.strides(), from.strides()};
  bool dense = false;
  NRT_TRY(indexer, make_indexer(dst.sizes(), strides, &dense));
  ElementwiseLaunch launch;
  launch.indexer = *indexer;
  launch.numel = dst.numel();
  launch.contiguous = dense;
  launch.out = dst.raw_data();
  launch.in[0] = from.raw_data();
  launch.in_dtype = src.dtype();
  launch.out_dtype = dst.dtype();
  return cuda_check(launch_convert(launch, stream), "convert kernel launch");
}

Result<Tensor> as_dtype(const KernelContext& ctx, const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::empty(dtype, t.sizes(), t.device());
  NRT_RETURN_IF_ERROR(copy_into(ctx, out, t));
  return out;
}

Result<Tensor> contiguous(const KernelContext& ctx, const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = Tensor::empty(t.dtype(), t.sizes(), t.device());
  NRT_RETURN_IF_ERROR(copy_into(ctx, out, t));
  return out;
}

namespace {

// The runtime's strided copies on CUDA (executor/runtime/tensor_copy.h): outputs that are views.
Status runtime_strided_copy(const Tensor& src, const Tensor& dst) {
  NRT_TRY(context, cuda_context(src.device().index));
  return copy_into((*context)->stream, dst, src);
}
const bool g_strided_copy_registered = [] {
  register_strided_copy(DeviceKind::kCuda, &runtime_strided_copy);
  return true;
}();

}  // namespace

}  // namespace nrt::exec::cuda
