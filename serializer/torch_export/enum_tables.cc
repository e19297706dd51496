#include "serializer/torch_export/enum_tables.h"

#include <array>
#include <string>

#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

using ST = fb::ScalarType;
constexpr std::nullopt_t kNone = std::nullopt;

// Sources: torch/_export/serde/schema.py (schema), c10/core/ScalarType.h (c10); docs/TORCH_EXPORT.md, "Enum numberings".
constexpr std::array kScalarTypes = {
    ScalarTypeRow{ST::UNKNOWN, 0, kNone, "unknown"},
    ScalarTypeRow{ST::UINT8, 1, 0, "uint8"},
    ScalarTypeRow{ST::INT8, 2, 1, "int8"},
    ScalarTypeRow{ST::INT16, 3, 2, "int16"},
    ScalarTypeRow{ST::INT32, 4, 3, "int32"},
    ScalarTypeRow{ST::INT64, 5, 4, "int64"},
    ScalarTypeRow{ST::FLOAT16, 6, 5, "float16"},
    ScalarTypeRow{ST::FLOAT32, 7, 6, "float32"},
    ScalarTypeRow{ST::FLOAT64, 8, 7, "float64"},
    ScalarTypeRow{ST::COMPLEX32, 9, 8, "complex32"},
    ScalarTypeRow{ST::COMPLEX64, 10, 9, "complex64"},
    ScalarTypeRow{ST::COMPLEX128, 11, 10, "complex128"},
    ScalarTypeRow{ST::BOOL, 12, 11, "bool"},
    ScalarTypeRow{ST::BFLOAT16, 13, 15, "bfloat16"},
    ScalarTypeRow{ST::UINT16, 28, 27, "uint16"},
    ScalarTypeRow{ST::FLOAT8_E4M3FN, 29, 24, "float8_e4m3fn"},
    ScalarTypeRow{ST::FLOAT8_E5M2, 30, 23, "float8_e5m2"},
    ScalarTypeRow{ST::FLOAT8_E4M3FNUZ, 31, 26, "float8_e4m3fnuz"},
    ScalarTypeRow{ST::FLOAT8_E5M2FNUZ, 32, 25, "float8_e5m2fnuz"},
    ScalarTypeRow{ST::FLOAT8_E8M0FNU, 33, 44, "float8_e8m0fnu"},
    ScalarTypeRow{ST::UINT32, 34, 28, "uint32"},
    ScalarTypeRow{ST::UINT64, 35, 29, "uint64"},
    // Quantized and bit types: c10 only, the export schema has no numbers for them.
    ScalarTypeRow{ST::QINT8, kNone, 12, "qint8"},
    ScalarTypeRow{ST::QUINT8, kNone, 13, "quint8"},
    ScalarTypeRow{ST::QINT32, kNone, 14, "qint32"},
    ScalarTypeRow{ST::QUINT4X2, kNone, 16, "quint4x2"},
    ScalarTypeRow{ST::QUINT2X4, kNone, 17, "quint2x4"},
    ScalarTypeRow{ST::BITS1X8, kNone, 18, "bits1x8"},
    ScalarTypeRow{ST::BITS2X4, kNone, 19, "bits2x4"},
    ScalarTypeRow{ST::BITS4X2, kNone, 20, "bits4x2"},
    ScalarTypeRow{ST::BITS8, kNone, 21, "bits8"},
    ScalarTypeRow{ST::BITS16, kNone, 22, "bits16"},
};

// Schema: Unknown=0 SparseCoo=1 SparseCsr=2 SparseCsc=3 SparseBsr=4 SparseBsc=5 _mkldnn=6
// Strided=7. c10: Strided=0 Sparse=1 SparseCsr=2 Mkldnn=3 SparseCsc=4 SparseBsr=5 SparseBsc=6
// Jagged=7 (so casting schema Strided gives c10 Jagged).
constexpr std::array kLayouts = {
    LayoutRow{fb::Layout::UNKNOWN, 0, kNone, "unknown"},
    LayoutRow{fb::Layout::STRIDED, 7, 0, "strided"},
    LayoutRow{fb::Layout::SPARSE_COO, 1, 1, "sparse_coo"},
    LayoutRow{fb::Layout::SPARSE_CSR, 2, 2, "sparse_csr"},
    LayoutRow{fb::Layout::SPARSE_CSC, 3, 4, "sparse_csc"},
    LayoutRow{fb::Layout::SPARSE_BSR, 4, 5, "sparse_bsr"},
    LayoutRow{fb::Layout::SPARSE_BSC, 5, 6, "sparse_bsc"},
    LayoutRow{fb::Layout::MKLDNN, 6, 3, "_mkldnn"},
    LayoutRow{fb::Layout::JAGGED, kNone, 7, "jagged"},
};

// Schema: Unknown=0 ContiguousFormat=1 ChannelsLast=2 ChannelsLast3d=3 PreserveFormat=4.
// c10: Contiguous=0 Preserve=1 ChannelsLast=2 ChannelsLast3d=3.
constexpr std::array kMemoryFormats = {
    MemoryFormatRow{fb::MemoryFormat::UNKNOWN, 0, kNone, "unknown"},
    MemoryFormatRow{fb::MemoryFormat::CONTIGUOUS, 1, 0, "contiguous_format"},
    MemoryFormatRow{fb::MemoryFormat::CHANNELS_LAST, 2, 2, "channels_last"},
    MemoryFormatRow{fb::MemoryFormat::CHANNELS_LAST_3D, 3, 3, "channels_last_3d"},
    MemoryFormatRow{fb::MemoryFormat::PRESERVE, 4, 1, "preserve_format"},
};

// Names as torch.device spells them (c10::DeviceTypeName, lower case); c10/core/DeviceType.h.
constexpr std::array kDeviceTypes = {
    DeviceTypeRow{fb::DeviceType::UNKNOWN, kNone, kNone},
    DeviceTypeRow{fb::DeviceType::CPU, "cpu", 0},
    DeviceTypeRow{fb::DeviceType::CUDA, "cuda", 1},
    DeviceTypeRow{fb::DeviceType::META, "meta", 14},
    DeviceTypeRow{fb::DeviceType::MPS, "mps", 13},
    DeviceTypeRow{fb::DeviceType::XPU, "xpu", 12},
    DeviceTypeRow{fb::DeviceType::HIP, "hip", 6},
    DeviceTypeRow{fb::DeviceType::XLA, "xla", 9},
    DeviceTypeRow{fb::DeviceType::HPU, "hpu", 15},
    DeviceTypeRow{fb::DeviceType::MTIA, "mtia", 19},
    DeviceTypeRow{fb::DeviceType::PRIVATEUSE1, "privateuseone", 20},
    DeviceTypeRow{fb::DeviceType::LAZY, "lazy", 17},
    DeviceTypeRow{fb::DeviceType::IPU, "ipu", 18},
    DeviceTypeRow{fb::DeviceType::VE, "ve", 16},
    DeviceTypeRow{fb::DeviceType::MAIA, "maia", 8},
};

template <typename Enum>
std::string nrt_number(Enum value) {
  return std::to_string(static_cast<int>(value));
}

Error unmapped(std::string what) { return make_error(codes::kUnmappedEnumValue, std::move(what)); }

// Looks `value` up in column `foreign` (schema or c10) of `table`.
template <typename Table, typename Foreign>
auto from_foreign(const Table& table, Foreign foreign, int64_t value, const char* what)
    -> Result<decltype(table[0].nrt)> {
  for (const auto& row : table) {
    if (row.*foreign && *(row.*foreign) == value) return row.nrt;
  }
  return unmapped(std::string(what) + " " + std::to_string(value) + " has no nrt equivalent");
}

template <typename Table, typename Foreign, typename Enum>
Result<int32_t> to_foreign(const Table& table, Foreign foreign, Enum value, const char* what, const char* numbering) {
  for (const auto& row : table) {
    if (row.nrt != value) continue;
    if (row.*foreign) return *(row.*foreign);
    return unmapped(std::string("nrt ") + what + " " + std::string(row.torch_name) + " has no " + numbering +
                    " number");
  }
  return unmapped(std::string("nrt ") + what + " " + nrt_number(value) + " is not a known value");
}

}  // namespace

std::span<const ScalarTypeRow> scalar_type_table() { return kScalarTypes; }
std::span<const LayoutRow> layout_table() { return kLayouts; }
std::span<const MemoryFormatRow> memory_format_table() { return kMemoryFormats; }
std::span<const DeviceTypeRow> device_type_table() { return kDeviceTypes; }

Result<fb::ScalarType> scalar_type_from_schema(int64_t v) {
  return from_foreign(kScalarTypes, &ScalarTypeRow::schema, v, "torch.export ScalarType");
}
Result<int32_t> scalar_type_to_schema(fb::ScalarType t) {
  return to_foreign(kScalarTypes, &ScalarTypeRow::schema, t, "ScalarType", "torch.export schema");
}
Result<fb::ScalarType> scalar_type_from_c10(int64_t v) {
  return from_foreign(kScalarTypes, &ScalarTypeRow::c10, v, "c10 ScalarType");
}
Result<int32_t> scalar_type_to_c10(fb::ScalarType t) {
  return to_foreign(kScalarTypes, &ScalarTypeRow::c10, t, "ScalarType", "c10");
}

Result<fb::Layout> layout_from_schema(int64_t v) {
  return from_foreign(kLayouts, &LayoutRow::schema, v, "torch.export Layout");
}
Result<int32_t> layout_to_schema(fb::Layout l) {
  return to_foreign(kLayouts, &LayoutRow::schema, l, "Layout", "torch.export schema");
}
Result<fb::Layout> layout_from_c10(int64_t v) { return from_foreign(kLayouts, &LayoutRow::c10, v, "c10 Layout"); }
Result<int32_t> layout_to_c10(fb::Layout l) { return to_foreign(kLayouts, &LayoutRow::c10, l, "Layout", "c10"); }

Result<fb::MemoryFormat> memory_format_from_schema(int64_t v) {
  return from_foreign(kMemoryFormats, &MemoryFormatRow::schema, v, "torch.export MemoryFormat");
}
Result<int32_t> memory_format_to_schema(fb::MemoryFormat f) {
  return to_foreign(kMemoryFormats, &MemoryFormatRow::schema, f, "MemoryFormat", "torch.export schema");
}
Result<fb::MemoryFormat> memory_format_from_c10(int64_t v) {
  return from_foreign(kMemoryFormats, &MemoryFormatRow::c10, v, "c10 MemoryFormat");
}
Result<int32_t> memory_format_to_c10(fb::MemoryFormat f) {
  return to_foreign(kMemoryFormats, &MemoryFormatRow::c10, f, "MemoryFormat", "c10");
}

Result<fb::DeviceType> device_type_from_name(std::string_view name) {
  for (const auto& row : kDeviceTypes) {
    if (row.torch_name && *row.torch_name == name) return row.nrt;
  }
  return unmapped("device type '" + std::string(name) + "' has no nrt equivalent");
}

Result<std::string_view> device_type_to_name(fb::DeviceType type) {
  for (const auto& row : kDeviceTypes) {
    if (row.nrt != type) continue;
    if (row.torch_name) return *row.torch_name;
    return unmapped("nrt DeviceType UNKNOWN has no torch device name");
  }
  return unmapped("nrt DeviceType " + nrt_number(type) + " is not a known value");
}

Result<fb::DeviceType> device_type_from_c10(int64_t v) {
  return from_foreign(kDeviceTypes, &DeviceTypeRow::c10, v, "c10 DeviceType");
}

Result<int32_t> device_type_to_c10(fb::DeviceType type) {
  for (const auto& row : kDeviceTypes) {
    if (row.nrt != type) continue;
    if (row.c10) return *row.c10;
    return unmapped("nrt DeviceType " + nrt_number(type) + " has no c10 number");
  }
  return unmapped("nrt DeviceType " + nrt_number(type) + " is not a known value");
}

}  // namespace nrt::torch_export
