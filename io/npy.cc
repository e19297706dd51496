#include "io/npy.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include "executor/runtime/memory_budget.h"
#include "executor/runtime/reduced_float.h"
#include "executor/runtime/tensor_copy.h"
#include "serializer/atomic_file.h"
#include "serializer/read_file.h"
#include "core/scalar_type.h"

namespace nrt::exec {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
constexpr size_t kMaxRank = 64;

Error npy_error(const std::string& what, const std::string& message) {
  return make_error(ErrorCode::NpyInvalid, what + ": " + message);
}

struct DtypeRow {
  char kind;
  size_t size;
  ScalarType type;
};

constexpr DtypeRow kDtypes[] = {
    {'f', 2, ScalarType::FLOAT16}, {'f', 4, ScalarType::FLOAT32},    {'f', 8, ScalarType::FLOAT64},
    {'i', 1, ScalarType::INT8},    {'i', 2, ScalarType::INT16},      {'i', 4, ScalarType::INT32},
    {'i', 8, ScalarType::INT64},   {'u', 1, ScalarType::UINT8},      {'u', 2, ScalarType::UINT16},
    {'u', 4, ScalarType::UINT32},  {'u', 8, ScalarType::UINT64},     {'b', 1, ScalarType::BOOL},
    {'c', 8, ScalarType::COMPLEX64}, {'c', 16, ScalarType::COMPLEX128},
};

// The header is a Python dict literal; this reads exactly the subset NumPy writes.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  struct Header {
    std::string descr;
    bool fortran_order = false;
    std::vector<int64_t> shape;
  };

  Result<Header> parse() {
    Header header;
    bool has_descr = false, has_order = false, has_shape = false;
    skip_space();
    if (!take('{')) return fail("header does not start with '{'");
    while (true) {
      skip_space();
      if (take('}')) break;
      NRT_TRY(key, string_literal());
      skip_space();
      if (!take(':')) return fail("expected ':' after key '" + *key + "'");
      skip_space();
      if (*key == "descr") {
        if (peek() == '[') return fail("structured dtypes (a descr list) are not supported");
        NRT_TRY(descr, string_literal());
        header.descr = *descr;
        has_descr = true;
      } else if (*key == "fortran_order") {
        if (take_word("True")) {
          header.fortran_order = true;
        } else if (take_word("False")) {
          header.fortran_order = false;
        } else {
          return fail("fortran_order is neither True nor False");
        }
        has_order = true;
      } else if (*key == "shape") {
        NRT_TRY(shape, tuple());
        header.shape = std::move(*shape);
        has_shape = true;
      } else {
        return fail("unexpected key '" + *key + "'");
      }
      skip_space();
      if (take(',')) continue;
      skip_space();
      if (take('}')) break;
      return fail("expected ',' or '}' in the header dict");
    }
    // After the dict only padding: spaces and the final newline.
    for (; pos_ < text_.size(); ++pos_) {
      if (text_[pos_] != ' ' && text_[pos_] != '\n' && text_[pos_] != '\t' && text_[pos_] != '\r' && text_[pos_] != '\0') {
        return fail("unexpected bytes after the header dict");
      }
    }
    if (!has_descr || !has_order || !has_shape) return fail("header lacks descr, fortran_order or shape");
    return header;
  }

 private:
  Error fail(const std::string& message) const {
    return npy_error(what_, message + " (header byte " + std::to_string(pos_) + ")");
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool take(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool take_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void skip_space() {
    while (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r') ++pos_;
  }

  Result<std::string> string_literal() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return fail("expected a quoted string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return fail("escapes are not supported in header strings");
      out += text_[pos_++];
      if (out.size() > 64) return fail("header string is too long");
    }
    if (!take(quote)) return fail("unterminated string");
    return out;
  }

  Result<std::vector<int64_t>> tuple() {
    if (!take('(')) return fail("shape is not a tuple");
    std::vector<int64_t> dims;
    while (true) {
      skip_space();
      if (take(')')) return dims;
      if (peek() < '0' || peek() > '9') return fail("shape holds something other than a non-negative integer");
      uint64_t value = 0;
      while (peek() >= '0' && peek() <= '9') {
        const auto digit = static_cast<uint64_t>(peek() - '0');
        if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) return fail("a dimension overflows int64");
        value = value * 10 + digit;
        ++pos_;
      }
      take('L');  // Python 2 longs
      dims.push_back(static_cast<int64_t>(value));
      if (dims.size() > kMaxRank) return fail("shape has more than " + std::to_string(kMaxRank) + " dimensions");
      skip_space();
      if (take(',')) continue;
      skip_space();
      if (take(')')) return dims;
      return fail("expected ',' or ')' in the shape");
    }
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

struct Descr {
  ScalarType type;
  size_t size;
  bool big_endian;
};

Result<Descr> parse_descr(const std::string& descr, const std::string& what) {
  if (descr.size() < 3) return npy_error(what, "dtype '" + descr + "' is not supported");
  const char order = descr[0];
  const char kind = descr[1];
  size_t size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || size > 1000) return npy_error(what, "dtype '" + descr + "' is not supported");
    size = size * 10 + static_cast<size_t>(descr[i] - '0');
  }
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return npy_error(what, "dtype '" + descr + "' has an unknown byte order");
  }
  if (order == '|' && size != 1) return npy_error(what, "dtype '" + descr + "' needs a byte order");
  for (const auto& row : kDtypes) {
    if (row.kind == kind && row.size == size) return Descr{row.type, size, order == '>' && size > 1};
  }
  return npy_error(what, "dtype '" + descr + "' is not supported (nrt reads f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16)");
}

void byte_swap(uint8_t* data, size_t count, size_t unit) {
  for (size_t i = 0; i < count; ++i) std::reverse(data + i * unit, data + (i + 1) * unit);
}

std::string shape_text(const std::vector<int64_t>& sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  if (sizes.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

std::string npy_descr(ScalarType dtype) {
  if (dtype == ScalarType::BFLOAT16) return "<f4";
  for (const auto& row : kDtypes) {
    if (row.type == dtype) return std::string(row.size == 1 ? "|" : "<") + row.kind + std::to_string(row.size);
  }
  return "";
}

Result<Tensor> parse_npy(std::span<const uint8_t> bytes, const std::string& what) {
  if (bytes.size() < kMagicBytes + 4 || std::memcmp(bytes.data(), kMagic, kMagicBytes) != 0) {
    return npy_error(what, "not a .npy file (no \\x93NUMPY magic)");
  }
  const uint8_t major = bytes[6];
  size_t header_len = 0;
  size_t prefix = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8;
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npy_error(what, "truncated header");
    header_len = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8 |
                 static_cast<size_t>(bytes[10]) << 16 | static_cast<size_t>(bytes[11]) << 24;
    prefix = 12;
  } else {
    return npy_error(what, "format version " + std::to_string(major) + "." + std::to_string(bytes[7]) +
                               " is not supported (1.0, 2.0, 3.0)");
  }
  if (header_len > kMaxNpyHeaderBytes) {
    return npy_error(what, "header of " + std::to_string(header_len) + " bytes exceeds the limit of " +
                               std::to_string(kMaxNpyHeaderBytes));
  }
  if (header_len > bytes.size() - prefix) {
    return npy_error(what, "header of " + std::to_string(header_len) + " bytes runs past the end of the file");
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  HeaderParser parser(text, what);
  NRT_TRY(header, parser.parse());
  NRT_TRY(descr, parse_descr(header->descr, what));

  // Both the element count and the strides (products of the nonzero sizes) must fit in int64.
  uint64_t numel = 1, extent = 1;
  for (int64_t d : header->shape) {
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(d), &numel) ||
        __builtin_mul_overflow(extent, static_cast<uint64_t>(std::max<int64_t>(d, 1)), &extent) ||
        extent > static_cast<uint64_t>(INT64_MAX)) {
      return make_error(ErrorCode::NpyInvalid, what + ": shape " + shape_text(header->shape) + " overflows");
    }
  }
  uint64_t data_bytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(descr->size), &data_bytes)) {
    return make_error(ErrorCode::NpyInvalid, what + ": shape " + shape_text(header->shape) + " overflows");
  }
  const size_t data_start = prefix + header_len;
  const uint64_t available = bytes.size() - data_start;
  if (data_bytes != available) {
    return npy_error(what, "shape " + shape_text(header->shape) + " of " + header->descr + " needs " +
                               std::to_string(data_bytes) + " data bytes but the file holds " +
                               std::to_string(available));
  }

  Tensor tensor = Tensor::empty(descr->type, header->shape);
  if (data_bytes > 0) std::memcpy(tensor.raw_data(), bytes.data() + data_start, data_bytes);
  if (descr->big_endian) {
    const bool complex = descr->type == ScalarType::COMPLEX64 || descr->type == ScalarType::COMPLEX128;
    const size_t unit = complex ? descr->size / 2 : descr->size;
    byte_swap(tensor.raw_data(), static_cast<size_t>(data_bytes / unit), unit);
  }
  if (header->fortran_order && tensor.dim() > 1) {
    // The bytes are column-major: view them with reversed strides, then copy into C order.
    std::vector<int64_t> strides(header->shape.size(), 1);
    for (size_t i = 1; i < strides.size(); ++i) strides[i] = strides[i - 1] * std::max<int64_t>(header->shape[i - 1], 1);
    Tensor column_major = tensor.as_strided(header->shape, strides, 0);
    return contiguous_copy(column_major);
  }
  return tensor;
}

Result<Tensor> read_npy(const std::string& path) {
  // Read, not mapped: a file truncated meanwhile (numpy.save rewrites in place) must give a
  // short read and a clean error, not SIGBUS. The read is bounded by the regular file's size.
  NRT_TRY(text, read_file(path));
  try {
    return parse_npy(std::span(reinterpret_cast<const uint8_t*>(text->data()), text->size()), path);
  } catch (const std::bad_alloc& failure) {
    return memory_error(path, failure);
  }
}

Result<std::vector<uint8_t>> encode_npy(const Tensor& tensor) {
  const std::string descr = npy_descr(tensor.dtype());
  if (descr.empty()) {
    return make_error(ErrorCode::InvalidArgument, "dtype " + std::string(nrt::short_name(tensor.dtype())) +
                                                      " has no NumPy equivalent; cannot write .npy");
  }
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_text(tensor.sizes()) + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary; the header ends with '\n'.
  size_t prefix = 10;
  if (header.size() + 1 + prefix > 0xffff) prefix = 12;
  const size_t unpadded = prefix + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  const Tensor contiguous = tensor.is_contiguous() ? tensor : contiguous_copy(tensor);
  const size_t count = static_cast<size_t>(tensor.numel());
  const size_t out_elem = tensor.dtype() == ScalarType::BFLOAT16 ? 4 : tensor.element_size();
  std::vector<uint8_t> out(prefix + header.size() + count * out_elem);
  std::memcpy(out.data(), kMagic, kMagicBytes);
  out[6] = prefix == 10 ? 1 : 2;
  out[7] = 0;
  const size_t len = header.size();
  out[8] = static_cast<uint8_t>(len & 0xff);
  out[9] = static_cast<uint8_t>((len >> 8) & 0xff);
  if (prefix == 12) {
    out[10] = static_cast<uint8_t>((len >> 16) & 0xff);
    out[11] = static_cast<uint8_t>((len >> 24) & 0xff);
  }
  std::memcpy(out.data() + prefix, header.data(), header.size());
  uint8_t* data = out.data() + prefix + header.size();
  if (count == 0) return out;
  if (tensor.dtype() == ScalarType::BFLOAT16) {
    const auto* src = contiguous.data<uint16_t>();
    for (size_t i = 0; i < count; ++i) {
      const float f = bfloat16_to_float(src[i]);
      std::memcpy(data + i * 4, &f, 4);
    }
  } else {
    std::memcpy(data, contiguous.raw_data(), count * out_elem);
  }
  return out;
}

Status write_npy(const std::string& path, const Tensor& tensor, Durability durability) {
  auto bytes = encode_npy(tensor);
  if (!bytes) return make_error(bytes.error().code, path + ": " + bytes.error().message);
  return write_file_atomically(path, *bytes, OnSignal::kRemoveTemporary, durability);
}

Result<Tensor> convert_npy_for(const Tensor& tensor, ScalarType want, const std::string& what) {
  if (tensor.dtype() == want) return tensor;
  if (want == ScalarType::BFLOAT16 && (tensor.dtype() == ScalarType::FLOAT32 || tensor.dtype() == ScalarType::UINT16)) {
    const Tensor src = tensor.is_contiguous() ? tensor : contiguous_copy(tensor);
    Tensor out = Tensor::empty(ScalarType::BFLOAT16, tensor.sizes());
    const auto n = static_cast<size_t>(tensor.numel());
    auto* dst = out.data<uint16_t>();
    if (tensor.dtype() == ScalarType::FLOAT32) {
      for (size_t i = 0; i < n; ++i) dst[i] = float_to_bfloat16(src.data<float>()[i]);
    } else if (n > 0) {
      std::memcpy(dst, src.raw_data(), n * 2);
    }
    return out;
  }
  return make_error(ErrorCode::InputMismatch, what + ": the file holds " + std::string(nrt::short_name(tensor.dtype())) +
                                                    " but " + std::string(nrt::short_name(want)) + " is expected");
}

}  // namespace nrt::exec
