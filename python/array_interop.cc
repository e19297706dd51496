#include "python/array_interop.h"

#include <nanobind/ndarray.h>

#include <algorithm>
#include <array>
#include <optional>
#include <variant>

#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/tensor_copy.h"

namespace nb = nanobind;

namespace nrt::python {
namespace {

using Code = nb::dlpack::dtype_code;

// DLPack's element types and nrt's, one row each (the types both sides name).
struct DtypeRow {
  Code code;
  uint8_t bits;
  ScalarType type;
};
constexpr std::array<DtypeRow, 15> kDtypes = {{
    {Code::Bool, 8, ScalarType::BOOL},
    {Code::Int, 8, ScalarType::INT8},
    {Code::Int, 16, ScalarType::INT16},
    {Code::Int, 32, ScalarType::INT32},
    {Code::Int, 64, ScalarType::INT64},
    {Code::UInt, 8, ScalarType::UINT8},
    {Code::UInt, 16, ScalarType::UINT16},
    {Code::UInt, 32, ScalarType::UINT32},
    {Code::UInt, 64, ScalarType::UINT64},
    {Code::Float, 16, ScalarType::FLOAT16},
    {Code::Float, 32, ScalarType::FLOAT32},
    {Code::Float, 64, ScalarType::FLOAT64},
    {Code::Bfloat, 16, ScalarType::BFLOAT16},
    {Code::Complex, 64, ScalarType::COMPLEX64},
    {Code::Complex, 128, ScalarType::COMPLEX128},
}};

std::optional<ScalarType> scalar_type_of(nb::dlpack::dtype dtype) {
  if (dtype.lanes != 1) return std::nullopt;
  for (const auto& row : kDtypes) {
    if (static_cast<uint8_t>(row.code) == dtype.code && row.bits == dtype.bits) return row.type;
  }
  return std::nullopt;
}

std::optional<nb::dlpack::dtype> dlpack_dtype_of(ScalarType type) {
  for (const auto& row : kDtypes) {
    if (row.type == type) return nb::dlpack::dtype{static_cast<uint8_t>(row.code), row.bits, 1};
  }
  return std::nullopt;
}

std::string dtype_text(nb::dlpack::dtype dtype) {
  if (auto type = scalar_type_of(dtype)) return std::string(short_name(*type));
  return "DLPack type code " + std::to_string(dtype.code) + " of " + std::to_string(dtype.bits) + " bits";
}

// An output's storage, kept alive by the NumPy array that views it.
struct StorageOwner {
  std::shared_ptr<exec::Storage> storage;
};

nb::object array_of(const exec::Tensor& tensor) {
  // NumPy has no bfloat16: such an output widens to float32, which holds every bfloat16 exactly.
  if (tensor.dtype() == ScalarType::BFLOAT16) return array_of(exec::cpu::converted_copy(tensor, ScalarType::FLOAT32));
  // Outputs are the executor's copies (ExecutorOptions::copy_outputs): owned and contiguous. A
  // view of read-only bytes (a weight returned as it is) or a strided one is copied, so NumPy
  // never writes into a mapped file.
  const exec::Tensor owned = tensor.is_contiguous() && !tensor.storage()->read_only() ? tensor
                                                                                      : exec::contiguous_copy(tensor);
  auto dtype = dlpack_dtype_of(owned.dtype());
  if (!dtype) {
    throw nb::type_error(("an output of dtype " + std::string(short_name(owned.dtype())) +
                          " has no NumPy equivalent")
                             .c_str());
  }
  auto* holder = new StorageOwner{owned.storage()};
  nb::capsule owner(holder, [](void* p) noexcept { delete static_cast<StorageOwner*>(p); });
  std::vector<size_t> shape(owned.sizes().begin(), owned.sizes().end());
  nb::ndarray<nb::numpy> array(owned.raw_data(), shape.size(), shape.data(), owner, owned.strides().data(), *dtype,
                               nb::device::cpu::value);
  return array.cast();
}

}  // namespace

exec::Tensor tensor_from_array(const std::string& name, nb::handle object, ScalarType expected, HeldArrays& held) {
  nb::ndarray<nb::ro> array;
  if (!nb::try_cast(object, array, /*convert=*/false)) {
    throw nb::type_error(("input '" + name + "': expected a NumPy array or an object with __dlpack__, got " +
                          nb::inst_name(object).c_str())
                             .c_str());
  }
  if (array.device_type() != nb::device::cpu::value) {
    throw nb::type_error(("input '" + name + "': the array is on DLPack device type " +
                          std::to_string(array.device_type()) + "; nrt runs on the CPU: copy it to the host first")
                             .c_str());
  }
  const auto type = scalar_type_of(array.dtype());
  if (!type || (*type != expected && expected != ScalarType::UNKNOWN)) {
    throw nb::type_error(("input '" + name + "': the array's dtype is " + dtype_text(array.dtype()) +
                          ", the program declares " + std::string(short_name(expected)))
                             .c_str());
  }
  std::vector<int64_t> sizes(array.ndim());
  std::vector<int64_t> strides(array.ndim());
  // The elements the view reaches, relative to element 0 (strides may be negative).
  int64_t lowest = 0, highest = 0;
  bool empty = false;
  for (size_t d = 0; d < array.ndim(); ++d) {
    sizes[d] = static_cast<int64_t>(array.shape(d));
    strides[d] = array.stride(d);
    empty = empty || sizes[d] == 0;
    if (sizes[d] > 1) (strides[d] < 0 ? lowest : highest) += strides[d] * (sizes[d] - 1);
  }
  const size_t item = element_size(*type);
  if (empty) return exec::Tensor::empty(*type, std::move(sizes));
  auto* first = static_cast<uint8_t*>(const_cast<void*>(static_cast<const void*>(array.data())));
  // Borrowed without an owner (the Storage may outlive the run in a frame's slots, where nothing
  // reads it again): `held` keeps the memory alive across the run.
  held.push_back(array);
  auto storage = exec::Storage::borrow(first + lowest * static_cast<int64_t>(item),
                                       static_cast<size_t>(highest - lowest + 1) * item, nullptr);
  exec::Tensor view(std::move(storage), *type, std::move(sizes), std::move(strides), -lowest);
  return view.is_contiguous() ? view : exec::contiguous_copy(view);
}

nb::object to_python(const exec::RuntimeValue& value) {
  return std::visit(
      [](const auto& v) -> nb::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nb::none();
        } else if constexpr (std::is_same_v<T, exec::Tensor>) {
          return v.defined() ? array_of(v) : nb::none();
        } else if constexpr (std::is_same_v<T, std::vector<exec::Tensor>>) {
          nb::list list;
          for (const auto& t : v) list.append(array_of(t));
          return list;
        } else if constexpr (std::is_same_v<T, std::vector<std::optional<exec::Tensor>>>) {
          nb::list list;
          for (const auto& t : v) list.append(t && t->defined() ? array_of(*t) : nb::none());
          return list;
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> || std::is_same_v<T, bool> ||
                             std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<std::string>>) {
          return nb::cast(v);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          nb::list list;
          for (bool b : v) list.append(nb::bool_(b));
          return list;
        } else if constexpr (std::is_same_v<T, ScalarType>) {
          return nb::str(std::string(short_name(v)).c_str());
        } else {
          throw nb::type_error("an output of this kind (process group, device, layout or graph) has no Python value");
        }
      },
      value);
}

}  // namespace nrt::python
