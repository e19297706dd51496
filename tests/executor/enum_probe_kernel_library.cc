// A kernel library (executor/runtime/kernel_library.h) for the custom op of the torch.export corpus,
// `nrt_corpus::enum_probe(Tensor x, ScalarType dtype, Layout layout, MemoryFormat memory_format,
// Device device) -> Tensor`, which scripts/torch_corpus.py defines as
// `x.to(dtype=dtype, device=device).contiguous(memory_format=memory_format) * 2`.
// Built as a shared object and loaded at run time by tests (and `nrt-run --kernel-library`), as a
// user's own custom-op library would be. Supports f32/f64 inputs and f32, f64 and integer outputs.
#include <cmath>
#include <cstdint>

#include "executor/runtime/kernel_library.h"

namespace {

using nrt::Status;
using nrt::exec::KernelContext;
using nrt::exec::RuntimeValue;
using nrt::exec::ScalarType;
using nrt::exec::Tensor;

std::vector<int64_t> strides_for(const std::vector<int64_t>& sizes, nrt::MemoryFormat format) {
  if (format == nrt::MemoryFormat::CHANNELS_LAST && sizes.size() == 4) {
    const int64_t c = sizes[1], h = sizes[2], w = sizes[3];
    return {h * w * c, 1, w * c, c};
  }
  return Tensor::contiguous_strides(sizes);
}

double load(const Tensor& x, int64_t offset) {
  return x.dtype() == ScalarType::FLOAT64 ? x.data<double>()[offset] : static_cast<double>(x.data<float>()[offset]);
}

template <typename T>
void store(const Tensor& out, int64_t offset, double v) {
  if constexpr (std::is_floating_point_v<T>) {
    out.data<T>()[offset] = static_cast<T>(static_cast<T>(v) * 2);
  } else {
    // torch: the cast truncates toward zero, then the product wraps in the integer type.
    const auto i = static_cast<T>(static_cast<int64_t>(std::trunc(v)));
    out.data<T>()[offset] = static_cast<T>(static_cast<int64_t>(i) * 2);
  }
}

Status enum_probe(KernelContext& ctx) {
  NRT_TRY(x, ctx.tensor("x", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 1));
  const RuntimeValue* layout = ctx.find("layout", 2);
  const RuntimeValue* format = ctx.find("memory_format", 3);
  const RuntimeValue* device = ctx.find("device", 4);
  if (layout && std::holds_alternative<nrt::Layout>(*layout) &&
      std::get<nrt::Layout>(*layout) != nrt::Layout::STRIDED) {
    return ctx.error("only the strided layout is supported");
  }
  if (device && std::holds_alternative<nrt::exec::Device>(*device) &&
      std::get<nrt::exec::Device>(*device).kind != nrt::exec::DeviceKind::kCpu) {
    return ctx.error("only cpu is supported");
  }
  if (x->dtype() != ScalarType::FLOAT32 && x->dtype() != ScalarType::FLOAT64) {
    return ctx.error("x must be f32 or f64, got " + x->type_string());
  }
  const ScalarType out_dtype = dtype->value_or(x->dtype());
  auto memory_format = nrt::MemoryFormat::CONTIGUOUS;
  if (format && std::holds_alternative<nrt::MemoryFormat>(*format)) memory_format = std::get<nrt::MemoryFormat>(*format);

  RuntimeValue& slot = ctx.outputs()[0];
  auto* planned = std::get_if<Tensor>(&slot);
  Tensor out;
  if (planned != nullptr && planned->defined()) {
    out = *planned;
  } else {
    out = Tensor::empty(out_dtype, x->sizes());
    out = out.as_strided(x->sizes(), strides_for(x->sizes(), memory_format), 0);
    slot = out;
  }
  if (out.dtype() != out_dtype || out.sizes() != x->sizes()) {
    return ctx.error("the output is " + out.type_string() + ", expected " + std::string(nrt::short_name(out_dtype)));
  }

  // Row-major walk over every index, reading and writing through each tensor's strides.
  const int64_t n = x->numel();
  std::vector<int64_t> index(x->sizes().size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    int64_t in_offset = 0, out_offset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      in_offset += index[d] * x->strides()[d];
      out_offset += index[d] * out.strides()[d];
    }
    const double v = load(*x, in_offset);
    switch (out_dtype) {
      case ScalarType::FLOAT32: store<float>(out, out_offset, v); break;
      case ScalarType::FLOAT64: store<double>(out, out_offset, v); break;
      case ScalarType::INT8: store<int8_t>(out, out_offset, v); break;
      case ScalarType::INT16: store<int16_t>(out, out_offset, v); break;
      case ScalarType::INT32: store<int32_t>(out, out_offset, v); break;
      case ScalarType::INT64: store<int64_t>(out, out_offset, v); break;
      case ScalarType::UINT8: store<uint8_t>(out, out_offset, v); break;
      default: return ctx.error(std::string("dtype ") + std::string(nrt::short_name(out_dtype)) + " is not supported");
    }
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < x->sizes()[d]) break;
      index[d] = 0;
    }
  }
  return {};
}

}  // namespace

extern "C" int nrt_register_kernels(const nrt::exec::KernelLibraryHost* host) {
  if (host == nullptr || host->abi != nrt::exec::kKernelLibraryAbi) return 1;
  host->add(host->registry, "nrt_corpus::enum_probe.default", nrt::exec::DeviceKind::kCpu, {enum_probe, false});
  return 0;
}
