// Weights beyond 2 GiB: FlatBuffers' 32-bit offsets cannot address them, the weight segment's
// 64-bit offsets can. The bytes come from an anonymous zero mapping (no memory is committed);
// the file is written for real, opened without reading the weights, then checksummed deeply.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <filesystem>

#include "serializer/program_file.h"
#include "serializer/write_program.h"
#include "testdata/program_builder.h"

namespace nrt {
namespace {

TEST(LargeWeights, MoreThanTwoGibibytesWriteOpenAndVerify) {
  constexpr uint64_t kBytes = (uint64_t{9} << 28);  // 2.25 GiB
  void* zeros = mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(zeros, MAP_FAILED);
  const std::span<const uint8_t> big(static_cast<const uint8_t*>(zeros), kBytes);
  const std::vector<uint8_t> small = {1, 2, 3, 4};

  testdata::ProgramBuilder builder("large weights test");
  builder.storage({});
  builder.storage({});
  builder.weight("big", 0, testdata::tensor_meta(fb::ScalarType::FLOAT32, {int64_t(kBytes / 4)}), true);
  builder.weight("after_big", 1, testdata::tensor_meta(fb::ScalarType::UINT8, {4}), true);
  auto g = builder.graph("main", true);
  const uint32_t x = g.tensor("x", fb::ScalarType::FLOAT32, {1});
  g.user_input(testdata::arg::tensor(x));
  g.user_output(testdata::arg::tensor(x));
  auto program = builder.finish();

  const std::string path = ::testing::TempDir() + "/large.nrt";
  const std::vector<std::span<const uint8_t>> spans = {big, std::span<const uint8_t>(small)};
  Status written = write_program_file(path, std::move(program.program), spans);
  munmap(zeros, kBytes);
  ASSERT_TRUE(written.ok()) << written.error().to_string();
  EXPECT_GT(std::filesystem::file_size(path), kBytes);

  auto file = ProgramFile::open(path);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->storage_bytes(0).size(), kBytes);
  const auto tail = file->storage_bytes(1);  // lies beyond 2 GiB in the file
  ASSERT_EQ(tail.size(), 4u);
  EXPECT_GT(file->layout().segment_offset + file->program().storages()->Get(1)->offset(), uint64_t{1} << 31);
  EXPECT_EQ(tail[0], 1);
  EXPECT_EQ(tail[3], 4);

  auto deep = ProgramFile::open(path, VerifyOptions{.deep = true});
  EXPECT_TRUE(deep.ok()) << deep.error().to_string();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace nrt
