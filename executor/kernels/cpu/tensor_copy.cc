#include "executor/kernels/cpu/tensor_copy.h"

#include <spdlog/spdlog.h>

#include <cstring>

#include "executor/kernels/cpu/batched_transpose.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/runtime/tensor_copy.h"

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"

namespace nrt::exec::cpu {
namespace {

// Whether [a, a + bytes) and [b, b + bytes) share a byte.
bool overlap(const uint8_t* a, const uint8_t* b, size_t bytes) { return a < b + bytes && b < a + bytes; }

void copy_bytes(const Tensor& dst, const LoopOperand& to, const LoopOperand& from) {
  const auto element = static_cast<int64_t>(dst.element_size());
  // A batch of transposes (contiguous() of a transposed view) through 8x8 register transposes;
  // overlapping memory keeps the element loop below.
  if (element == 4 && dst.numel() >= kFewestTransposedElements &&
      !overlap(to.data(), from.data(), static_cast<size_t>(dst.numel()) * 4)) {
    if (const auto transpose = batched_transpose(dst.sizes(), to.byte_strides(), from.byte_strides())) {
      transpose_floats(*transpose, reinterpret_cast<const float*>(from.data()), reinterpret_cast<float*>(to.data()));
      return;
    }
  }
  for_each_run<2>(dst.sizes(), {&to, &from},
                  [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                    if (s[0] == element && s[1] == element) {
                      std::memcpy(p[0], p[1], static_cast<size_t>(n * element));
                      return;
                    }
                    exec::copy_strided(p[0], s[0], p[1], s[1], n, static_cast<size_t>(element));
                  });
}

// dispatch_dtype reports unsupported dtypes through a context; copy_into checks the dtypes before
// dispatching, so this one never speaks.
const KernelContext& conversion_context() {
  static const KernelContext ctx("copy", {}, {}, Device{});
  return ctx;
}

}  // namespace

bool copy_into(const Tensor& dst, const Tensor& src) {
  if (dst.device().kind != DeviceKind::kCpu) {
    // The kernels that serve other devices too copy there through the device's strided copy.
    const Tensor from = src.sizes() == dst.sizes() ? src : expand_to(src, dst.sizes());
    if (Status s = exec::device_copy(from, dst); !s) {
      spdlog::error("{}", s.error().to_string());
      return false;
    }
    return true;
  }
  const LoopOperand to = LoopOperand::of(dst);
  const LoopOperand from = LoopOperand::broadcast(src, src.dtype(), dst.sizes());
  if (dst.dtype() == src.dtype()) {
    copy_bytes(dst, to, from);
    return true;
  }
  if (!is_kernel_dtype(dst.dtype()) || !is_kernel_dtype(src.dtype())) return false;
  const auto& ctx = conversion_context();
  Status status = dispatch_dtype<kAllDtypes>(ctx, dst.dtype(), [&](auto out_tag) {
    using Out = typename decltype(out_tag)::type;
    return dispatch_dtype<kAllDtypes>(ctx, src.dtype(), [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      for_each_run<2>(dst.sizes(), {&to, &from},
                      [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                        for (int64_t i = 0; i < n; ++i) {
                          *reinterpret_cast<Out*>(p[0] + i * s[0]) =
                              convert<Out>(*reinterpret_cast<const In*>(p[1] + i * s[1]));
                        }
                      });
    });
  });
  return status.ok();
}

Tensor converted_copy(const Tensor& t, ScalarType dtype) {
  Tensor out = Tensor::empty_for_overwrite(dtype, t.sizes(), t.device());
  // copy_into writes every element, or nothing where it cannot convert: zeros then, as before.
  if (!copy_into(out, t) && out.device().kind == DeviceKind::kCpu && out.nbytes() > 0) {
    std::memset(out.raw_data(), 0, out.nbytes());
  }
  return out;
}

Tensor contiguous_as(const Tensor& t, ScalarType dtype) {
  if (t.dtype() == dtype && t.is_contiguous()) return t;
  return converted_copy(t, dtype);
}

void fill_with(const Tensor& t, const ScalarValue& value) {
  if (t.device().kind != DeviceKind::kCpu) {
    // One element made on the host, broadcast on the device by its strided copy.
    auto one = scalar_on(value, t.dtype(), t.device());
    if (!one) {
      spdlog::error("{}", one.error().to_string());
      return;
    }
    copy_into(t, *one);
    return;
  }
  const auto& ctx = conversion_context();
  Status status = dispatch_dtype<kAllDtypes>(ctx, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.as<T>();
    for_each_run<1>(t.sizes(), {&t}, [&](const std::array<uint8_t*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
    });
  });
  (void)status;
}

Result<Tensor> scalar_on(const ScalarValue& value, ScalarType dtype, Device device) {
  Tensor one = Tensor::empty(dtype, {});
  if (!value.store_as(dtype, one.raw_data())) {
    return make_error(ErrorCode::KernelError, "a scalar cannot be stored as " + std::string(short_name(dtype)));
  }
  if (device.kind == DeviceKind::kCpu) return one;
  return exec::copy_to_device(one, device);
}

}  // namespace nrt::exec::cpu
