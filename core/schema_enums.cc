#include "core/schema_enums.h"

#include <array>
#include <utility>

namespace nrt {
namespace {

// One row per member of both enums: {nrt's, the schema's}. A member added to either side without a
// row here fails tests/core/schema_enums_test.cc.
constexpr std::pair<ScalarType, fb::ScalarType> kScalarTypes[] = {
    {ScalarType::UNKNOWN, fb::ScalarType::UNKNOWN},
    {ScalarType::UINT8, fb::ScalarType::UINT8},
    {ScalarType::INT8, fb::ScalarType::INT8},
    {ScalarType::INT16, fb::ScalarType::INT16},
    {ScalarType::INT32, fb::ScalarType::INT32},
    {ScalarType::INT64, fb::ScalarType::INT64},
    {ScalarType::FLOAT16, fb::ScalarType::FLOAT16},
    {ScalarType::FLOAT32, fb::ScalarType::FLOAT32},
    {ScalarType::FLOAT64, fb::ScalarType::FLOAT64},
    {ScalarType::COMPLEX32, fb::ScalarType::COMPLEX32},
    {ScalarType::COMPLEX64, fb::ScalarType::COMPLEX64},
    {ScalarType::COMPLEX128, fb::ScalarType::COMPLEX128},
    {ScalarType::BOOL, fb::ScalarType::BOOL},
    {ScalarType::BFLOAT16, fb::ScalarType::BFLOAT16},
    {ScalarType::UINT16, fb::ScalarType::UINT16},
    {ScalarType::FLOAT8_E4M3FN, fb::ScalarType::FLOAT8_E4M3FN},
    {ScalarType::FLOAT8_E5M2, fb::ScalarType::FLOAT8_E5M2},
    {ScalarType::FLOAT8_E4M3FNUZ, fb::ScalarType::FLOAT8_E4M3FNUZ},
    {ScalarType::FLOAT8_E5M2FNUZ, fb::ScalarType::FLOAT8_E5M2FNUZ},
    {ScalarType::FLOAT8_E8M0FNU, fb::ScalarType::FLOAT8_E8M0FNU},
    {ScalarType::UINT32, fb::ScalarType::UINT32},
    {ScalarType::UINT64, fb::ScalarType::UINT64},
    {ScalarType::QINT8, fb::ScalarType::QINT8},
    {ScalarType::QUINT8, fb::ScalarType::QUINT8},
    {ScalarType::QINT32, fb::ScalarType::QINT32},
    {ScalarType::QUINT4X2, fb::ScalarType::QUINT4X2},
    {ScalarType::QUINT2X4, fb::ScalarType::QUINT2X4},
    {ScalarType::BITS1X8, fb::ScalarType::BITS1X8},
    {ScalarType::BITS2X4, fb::ScalarType::BITS2X4},
    {ScalarType::BITS4X2, fb::ScalarType::BITS4X2},
    {ScalarType::BITS8, fb::ScalarType::BITS8},
    {ScalarType::BITS16, fb::ScalarType::BITS16},
};

constexpr std::pair<Layout, fb::Layout> kLayouts[] = {
    {Layout::UNKNOWN, fb::Layout::UNKNOWN},       {Layout::STRIDED, fb::Layout::STRIDED},
    {Layout::SPARSE_COO, fb::Layout::SPARSE_COO}, {Layout::SPARSE_CSR, fb::Layout::SPARSE_CSR},
    {Layout::SPARSE_CSC, fb::Layout::SPARSE_CSC}, {Layout::SPARSE_BSR, fb::Layout::SPARSE_BSR},
    {Layout::SPARSE_BSC, fb::Layout::SPARSE_BSC}, {Layout::MKLDNN, fb::Layout::MKLDNN},
    {Layout::JAGGED, fb::Layout::JAGGED},
};

constexpr std::pair<MemoryFormat, fb::MemoryFormat> kMemoryFormats[] = {
    {MemoryFormat::UNKNOWN, fb::MemoryFormat::UNKNOWN},
    {MemoryFormat::CONTIGUOUS, fb::MemoryFormat::CONTIGUOUS},
    {MemoryFormat::CHANNELS_LAST, fb::MemoryFormat::CHANNELS_LAST},
    {MemoryFormat::CHANNELS_LAST_3D, fb::MemoryFormat::CHANNELS_LAST_3D},
    {MemoryFormat::PRESERVE, fb::MemoryFormat::PRESERVE},
};

constexpr std::pair<ReduceOp, fb::ReduceOp> kReduceOps[] = {
    {ReduceOp::SUM, fb::ReduceOp::SUM},         {ReduceOp::AVG, fb::ReduceOp::AVG},
    {ReduceOp::PRODUCT, fb::ReduceOp::PRODUCT}, {ReduceOp::MINIMUM, fb::ReduceOp::MINIMUM},
    {ReduceOp::MAXIMUM, fb::ReduceOp::MAXIMUM}, {ReduceOp::BAND, fb::ReduceOp::BAND},
    {ReduceOp::BOR, fb::ReduceOp::BOR},         {ReduceOp::BXOR, fb::ReduceOp::BXOR},
    {ReduceOp::PREMUL_SUM, fb::ReduceOp::PREMUL_SUM},
};

// The schema's other device types have no row: nrt does not run them.
constexpr std::pair<DeviceKind, fb::DeviceType> kDeviceKinds[] = {
    {DeviceKind::kCpu, fb::DeviceType::CPU},
    {DeviceKind::kCuda, fb::DeviceType::CUDA},
};

template <typename Ours, typename Theirs, std::size_t N>
std::optional<Ours> ours(const std::pair<Ours, Theirs> (&rows)[N], Theirs theirs) {
  for (const auto& [o, t] : rows) {
    if (t == theirs) return o;
  }
  return std::nullopt;
}

// Our enums are dense and every member has a row, so a row's index is our value (checked below).
template <typename Ours, typename Theirs, std::size_t N>
constexpr bool indexed_by_ours(const std::pair<Ours, Theirs> (&rows)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(rows[i].first) != i) return false;
  }
  return true;
}
static_assert(indexed_by_ours(kScalarTypes) && std::size(kScalarTypes) == kNumScalarTypes);
static_assert(indexed_by_ours(kLayouts) && std::size(kLayouts) == kNumLayouts);
static_assert(indexed_by_ours(kMemoryFormats) && std::size(kMemoryFormats) == kNumMemoryFormats);
static_assert(indexed_by_ours(kReduceOps) && std::size(kReduceOps) == kNumReduceOps);
static_assert(indexed_by_ours(kDeviceKinds) && std::size(kDeviceKinds) == kNumDeviceKinds);

template <typename Ours, typename Theirs, std::size_t N>
Theirs theirs(const std::pair<Ours, Theirs> (&rows)[N], Ours ours_value) {
  const auto index = static_cast<std::size_t>(ours_value);
  return index < N ? rows[index].second : rows[0].second;
}

// Schema ScalarType values are torch's (below 128); the lookup runs per tensor read from a file.
const std::array<int8_t, 128> kScalarTypeBySchemaValue = [] {
  std::array<int8_t, 128> index{};
  index.fill(-1);
  for (const auto& [o, t] : kScalarTypes) index[static_cast<std::size_t>(t)] = static_cast<int8_t>(o);
  return index;
}();

}  // namespace

std::optional<ScalarType> from_schema(fb::ScalarType type) {
  const auto value = static_cast<int>(type);  // a short on disk: anything may arrive
  if (value < 0 || value >= static_cast<int>(kScalarTypeBySchemaValue.size())) return std::nullopt;
  const int8_t ours_value = kScalarTypeBySchemaValue[static_cast<std::size_t>(value)];
  if (ours_value < 0) return std::nullopt;
  return static_cast<ScalarType>(ours_value);
}
fb::ScalarType to_schema(ScalarType type) { return theirs(kScalarTypes, type); }

std::optional<Layout> from_schema(fb::Layout layout) { return ours(kLayouts, layout); }
fb::Layout to_schema(Layout layout) { return theirs(kLayouts, layout); }

std::optional<MemoryFormat> from_schema(fb::MemoryFormat format) { return ours(kMemoryFormats, format); }
fb::MemoryFormat to_schema(MemoryFormat format) { return theirs(kMemoryFormats, format); }

std::optional<ReduceOp> from_schema(fb::ReduceOp op) { return ours(kReduceOps, op); }
fb::ReduceOp to_schema(ReduceOp op) { return theirs(kReduceOps, op); }

std::optional<DeviceKind> from_schema(fb::DeviceType type) { return ours(kDeviceKinds, type); }
fb::DeviceType to_schema(DeviceKind kind) { return theirs(kDeviceKinds, kind); }

std::size_t element_size(fb::ScalarType type) {
  const auto ours_value = from_schema(type);
  return ours_value ? element_size(*ours_value) : 0;
}

std::string_view short_name(fb::ScalarType type) {
  const auto ours_value = from_schema(type);
  return ours_value ? short_name(*ours_value) : "?";
}

bool is_known(fb::ScalarType type) { return from_schema(type).has_value(); }

std::optional<fb::ScalarType> schema_scalar_type_from_short_name(std::string_view name) {
  const auto ours_value = scalar_type_from_short_name(name);
  if (!ours_value) return std::nullopt;
  return to_schema(*ours_value);
}

}  // namespace nrt
