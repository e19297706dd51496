// .npy reading and writing: every dtype against files NumPy wrote (make_npy_goldens.py), byte
// for byte on the way back; Fortran order, big-endian, version 2, 0-d and empty arrays; the
// bf16 convention; and malformed input, which must give errors, never crashes.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <sstream>

#include "io/npy.h"
#include "executor/runtime/reduced_float.h"
#include "tests/runfile.h"

namespace nrt::exec {
namespace {

using nrt::testing::runfile;

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string s = buffer.str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

std::string golden(const std::string& name) { return runfile("tests/executor/data/npy/" + name + ".npy"); }

// The value make_npy_goldens.py stored at flat index i, as a complex number.
std::complex<double> expected_value(const std::string& code, int i) {
  switch (code[0]) {
    case 'b': return {static_cast<double>(i == 0 || i == 2 || i == 5), 0};
    case 'u': return {static_cast<double>(i), 0};
    case 'i': return {static_cast<double>(i - 2), 0};
    case 'f': return {(i - 2) * 0.5, 0};
    default: return {static_cast<double>(i), static_cast<double>(i - 1)};
  }
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::complex<double> element(const Tensor& t, int i) {
  const uint8_t* p = t.raw_data() + static_cast<size_t>(i) * t.element_size();
  switch (t.dtype()) {
    case ScalarType::FLOAT16: return {half_to_float(load<uint16_t>(p)), 0};
    case ScalarType::FLOAT32: return {load<float>(p), 0};
    case ScalarType::FLOAT64: return {load<double>(p), 0};
    case ScalarType::INT8: return {static_cast<double>(load<int8_t>(p)), 0};
    case ScalarType::INT16: return {static_cast<double>(load<int16_t>(p)), 0};
    case ScalarType::INT32: return {static_cast<double>(load<int32_t>(p)), 0};
    case ScalarType::INT64: return {static_cast<double>(load<int64_t>(p)), 0};
    case ScalarType::UINT8: return {static_cast<double>(load<uint8_t>(p)), 0};
    case ScalarType::UINT16: return {static_cast<double>(load<uint16_t>(p)), 0};
    case ScalarType::UINT32: return {static_cast<double>(load<uint32_t>(p)), 0};
    case ScalarType::UINT64: return {static_cast<double>(load<uint64_t>(p)), 0};
    case ScalarType::BOOL: return {static_cast<double>(load<uint8_t>(p)), 0};
    case ScalarType::COMPLEX64: return {load<float>(p), load<float>(p + 4)};
    case ScalarType::COMPLEX128: return {load<double>(p), load<double>(p + 8)};
    default: return {NAN, NAN};
  }
}

struct DtypeCase {
  std::string code;
  ScalarType type;
};

class NpyDtypeTest : public ::testing::TestWithParam<DtypeCase> {};

TEST_P(NpyDtypeTest, ReadsNumpyFilesAndWritesThemBackByteForByte) {
  const auto& c = GetParam();
  const auto bytes = file_bytes(golden(c.code));
  ASSERT_FALSE(bytes.empty()) << golden(c.code);
  auto tensor = parse_npy(bytes, c.code);
  ASSERT_TRUE(tensor.ok()) << tensor.error().to_string();
  EXPECT_EQ(tensor->dtype(), c.type);
  EXPECT_EQ(tensor->sizes(), (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(element(*tensor, i), expected_value(c.code, i)) << c.code << " " << i;
  auto encoded = encode_npy(*tensor);
  ASSERT_TRUE(encoded.ok()) << encoded.error().to_string();
  EXPECT_EQ(*encoded, bytes) << "nrt's bytes differ from NumPy's for " << c.code;
  EXPECT_EQ(npy_descr(c.type).substr(1), c.code);
}

INSTANTIATE_TEST_SUITE_P(
    EveryDtype, NpyDtypeTest,
    ::testing::Values(DtypeCase{"f2", ScalarType::FLOAT16}, DtypeCase{"f4", ScalarType::FLOAT32},
                      DtypeCase{"f8", ScalarType::FLOAT64}, DtypeCase{"i1", ScalarType::INT8},
                      DtypeCase{"i2", ScalarType::INT16}, DtypeCase{"i4", ScalarType::INT32},
                      DtypeCase{"i8", ScalarType::INT64}, DtypeCase{"u1", ScalarType::UINT8},
                      DtypeCase{"u2", ScalarType::UINT16}, DtypeCase{"u4", ScalarType::UINT32},
                      DtypeCase{"u8", ScalarType::UINT64}, DtypeCase{"b1", ScalarType::BOOL},
                      DtypeCase{"c8", ScalarType::COMPLEX64}, DtypeCase{"c16", ScalarType::COMPLEX128}),
    [](const auto& info) { return info.param.code; });

TEST(NpyTest, FortranOrderBecomesCOrder) {
  auto tensor = read_npy(golden("fortran_f4"));
  ASSERT_TRUE(tensor.ok()) << tensor.error().to_string();
  EXPECT_TRUE(tensor->is_contiguous());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(element(*tensor, i), expected_value("f", i)) << i;
}

TEST(NpyTest, BigEndianIsSwapped) {
  auto tensor = read_npy(golden("big_endian_i4"));
  ASSERT_TRUE(tensor.ok()) << tensor.error().to_string();
  EXPECT_EQ(tensor->dtype(), ScalarType::INT32);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(element(*tensor, i), expected_value("i", i)) << i;
}

TEST(NpyTest, VersionTwoZeroDimensionalAndEmpty) {
  auto v2 = read_npy(golden("version2_f4"));
  ASSERT_TRUE(v2.ok()) << v2.error().to_string();
  EXPECT_EQ(element(*v2, 5), expected_value("f", 5));
  auto scalar = read_npy(golden("scalar_f8"));
  ASSERT_TRUE(scalar.ok()) << scalar.error().to_string();
  EXPECT_EQ(scalar->dim(), 0);
  EXPECT_EQ(element(*scalar, 0), std::complex<double>(3.5, 0));
  auto encoded = encode_npy(*scalar);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, file_bytes(golden("scalar_f8")));
  auto empty = read_npy(golden("empty_i8"));
  ASSERT_TRUE(empty.ok()) << empty.error().to_string();
  EXPECT_EQ(empty->sizes(), (std::vector<int64_t>{0, 3}));
  encoded = encode_npy(*empty);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, file_bytes(golden("empty_i8")));
}

TEST(NpyTest, StridedTensorsAreWrittenInLogicalOrder) {
  Tensor t = Tensor::empty(ScalarType::INT32, {2, 3});
  for (int i = 0; i < 6; ++i) t.data<int32_t>()[i] = i;
  Tensor transposed = t.as_strided({3, 2}, {1, 3}, 0);
  auto bytes = encode_npy(transposed);
  ASSERT_TRUE(bytes.ok());
  auto back = parse_npy(*bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->sizes(), (std::vector<int64_t>{3, 2}));
  const std::vector<int32_t> want = {0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(back->data<int32_t>()[i], want[static_cast<size_t>(i)]);
}

TEST(NpyTest, Bfloat16Convention) {
  Tensor bf = Tensor::empty(ScalarType::BFLOAT16, {3});
  const float values[] = {1.5f, -2.0f, 3.140625f};  // exact in bf16
  for (int i = 0; i < 3; ++i) bf.data<uint16_t>()[i] = float_to_bfloat16(values[i]);
  auto bytes = encode_npy(bf);
  ASSERT_TRUE(bytes.ok());
  auto back = parse_npy(*bytes);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->dtype(), ScalarType::FLOAT32);  // written as float32
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back->data<float>()[i], values[i]);

  auto as_bf16 = convert_npy_for(*back, ScalarType::BFLOAT16, "x");
  ASSERT_TRUE(as_bf16.ok());
  EXPECT_EQ(std::memcmp(as_bf16->raw_data(), bf.raw_data(), 6), 0);

  // float32 -> bf16 rounds to nearest even: 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
  Tensor f = Tensor::empty(ScalarType::FLOAT32, {2});
  f.data<float>()[0] = 1.0f + 1.0f / 256;
  f.data<float>()[1] = 1.0f + 3.0f / 256;
  auto rounded = convert_npy_for(f, ScalarType::BFLOAT16, "x");
  ASSERT_TRUE(rounded.ok());
  EXPECT_EQ(bfloat16_to_float(rounded->data<uint16_t>()[0]), 1.0f);
  EXPECT_EQ(bfloat16_to_float(rounded->data<uint16_t>()[1]), 1.0f + 4.0f / 256);

  // uint16 holds raw bf16 bits (scripts/torch_corpus.py's convention).
  Tensor bits = Tensor::empty(ScalarType::UINT16, {1});
  bits.data<uint16_t>()[0] = 0x3fc0;  // 1.5
  auto from_bits = convert_npy_for(bits, ScalarType::BFLOAT16, "x");
  ASSERT_TRUE(from_bits.ok());
  EXPECT_EQ(bfloat16_to_float(from_bits->data<uint16_t>()[0]), 1.5f);

  auto refused = convert_npy_for(f, ScalarType::FLOAT64, "x.npy");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::InputMismatch);
  EXPECT_NE(refused.error().message.find("holds f32 but f64 is expected"), std::string::npos)
      << refused.error().message;
}

TEST(NpyTest, DtypesWithoutNumpyCounterpartAreRefused) {
  auto bytes = encode_npy(Tensor::empty(ScalarType::FLOAT8_E4M3FN, {2}));
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error().message.find("no NumPy equivalent"), std::string::npos);
}

std::vector<uint8_t> npy_with_header(const std::string& header, size_t data_bytes, uint8_t major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  const size_t len = header.size();
  out.push_back(static_cast<uint8_t>(len & 0xff));
  out.push_back(static_cast<uint8_t>(len >> 8));
  if (major >= 2) {
    out.push_back(0);
    out.push_back(0);
  }
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + data_bytes, 0);
  return out;
}

std::string parse_error(const std::vector<uint8_t>& bytes) {
  auto result = parse_npy(bytes, "bad.npy");
  EXPECT_FALSE(result.ok());
  if (!result.ok()) {
    EXPECT_EQ(result.error().code, ErrorCode::NpyInvalid) << result.error().message;
  }
  return result.ok() ? "" : result.error().message;
}

TEST(NpyTest, MalformedInputGivesErrors) {
  const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  ASSERT_TRUE(parse_npy(npy_with_header(ok_header, 24)).ok());

  EXPECT_NE(parse_error({}).find("magic"), std::string::npos);
  EXPECT_NE(parse_error({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}).find("magic"), std::string::npos);
  EXPECT_NE(parse_error(npy_with_header(ok_header, 24, 4)).find("version 4.0"), std::string::npos);
  EXPECT_NE(parse_error(npy_with_header(ok_header, 23)).find("needs 24 data bytes but the file holds 23"),
            std::string::npos);
  EXPECT_NE(parse_error(npy_with_header(ok_header, 25)).find("holds 25"), std::string::npos);

  auto truncated_header = npy_with_header(ok_header, 0);
  truncated_header.resize(20);
  EXPECT_NE(parse_error(truncated_header).find("runs past the end"), std::string::npos);

  std::vector<uint8_t> huge = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0x7f};
  EXPECT_NE(parse_error(huge).find("exceeds the limit"), std::string::npos);

  auto with = [&](const std::string& header) { return parse_error(npy_with_header(header, 0)); };
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }")
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }").find("overflows"),
            std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9223372036854775807, 4), }").find("overflows"),
            std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }").find("non-negative"), std::string::npos);
  EXPECT_NE(with("{'descr': '<U8', 'fortran_order': False, 'shape': (), }").find("not supported"), std::string::npos);
  EXPECT_NE(with("{'descr': '|f4', 'fortran_order': False, 'shape': (), }").find("byte order"), std::string::npos);
  EXPECT_NE(with("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }").find("structured"),
            std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (), }").find("fortran_order"), std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'shape': (), }").find("lacks"), std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}").find("unexpected key"),
            std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': ()} trailing").find("after the header"),
            std::string::npos);
  EXPECT_NE(with("{'descr': '<f4\\n', 'fortran_order': False, 'shape': ()}").find("escapes"), std::string::npos);
  EXPECT_NE(with("{'descr': '<f4', 'fortran_order': False, 'shape': (1,2").find("shape"), std::string::npos);
  EXPECT_NE(with("{'descr': '<f4'").find("expected"), std::string::npos);
  std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i) deep += "1,";
  deep += "), }";
  EXPECT_NE(with(deep).find("more than 64 dimensions"), std::string::npos);
}

TEST(NpyTest, WriteAndReadAFile) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/npy_test_out.npy";
  Tensor t = Tensor::empty(ScalarType::INT64, {2, 2});
  for (int i = 0; i < 4; ++i) t.data<int64_t>()[i] = i * 1000000000000LL;
  ASSERT_TRUE(write_npy(path, t).ok());
  auto back = read_npy(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::memcmp(back->raw_data(), t.raw_data(), 32), 0);
  auto missing = read_npy(path + ".missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::IoOpen);
}

}  // namespace
}  // namespace nrt::exec
