// Shared scalar vectors cannot make verification quadratic: a crafted file whose many meshes all
// share one large ranks vector is refused by the work budget, quickly, instead of being walked
// once per mesh (which the FlatBuffers table budget does not count).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

#include "serializer/container.h"
#include "serializer/program_file.h"

namespace nrt {
namespace {

std::vector<uint8_t> container_of(const flatbuffers::FlatBufferBuilder& builder) {
  ContainerLayout layout;
  layout.flatbuffer_offset = kContainerHeaderSize;
  layout.flatbuffer_size = builder.GetSize();
  const auto header = encode_container_header(layout);
  std::vector<uint8_t> bytes(header.size() + builder.GetSize());
  std::copy(header.begin(), header.end(), bytes.data());
  std::copy(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize(), bytes.data() + header.size());
  return bytes;
}

std::vector<uint8_t> meshes_sharing_ranks(uint32_t meshes, int32_t ranks_per_mesh) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<int32_t> ranks(static_cast<size_t>(ranks_per_mesh));
  std::iota(ranks.begin(), ranks.end(), 0);
  const auto shared_ranks = b.CreateVector(ranks);
  const auto shared_shape = b.CreateVector(std::vector<int64_t>{ranks_per_mesh});
  std::vector<flatbuffers::Offset<fb::DeviceMesh>> list;
  for (uint32_t m = 0; m < meshes; ++m) {
    list.push_back(fb::CreateDeviceMesh(b, 0, fb::DeviceType::CPU, shared_shape, 0, shared_ranks));
  }
  const auto mesh_vector = b.CreateVector(list);
  const auto graph = fb::CreateGraph(b, b.CreateString("main"), 0, 0, 0, 0, fb::CreateSignature(b));
  const auto graphs = b.CreateVector(std::vector<flatbuffers::Offset<fb::Graph>>{graph});
  const auto entry_points = b.CreateVector(std::vector<uint32_t>{0});
  const fb::Version version(1, 0);
  fb::ProgramBuilder program(b);
  program.add_schema_version(&version);
  program.add_graphs(graphs);
  program.add_entry_points(entry_points);
  program.add_meshes(mesh_vector);
  fb::FinishProgramBuffer(b, program.Finish());
  return container_of(b);
}

TEST(WorkBudget, SharedVectorsAreRefusedQuickly) {
  const auto bytes = meshes_sharing_ranks(100'000, 100'000);  // ~1.6 MB; 10^10 elements if walked
  const auto start = std::chrono::steady_clock::now();
  auto file = ProgramFile::from_bytes(bytes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().code, ErrorCode::FlatbufferInvalid) << file.error().to_string();
  EXPECT_NE(file.error().message.find("work budget"), std::string::npos) << file.error().message;
  // Not an assertion on speed (machines differ): a sanity bound far above the ~ms it takes.
  EXPECT_LT(seconds, 60.0);
}

TEST(WorkBudget, ModestSharingStillVerifies) {
  // A few meshes sharing a small ranks vector is legitimate and stays well inside the budget.
  auto file = ProgramFile::from_bytes(meshes_sharing_ranks(8, 4));
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->program().meshes()->size(), 8u);
}

}  // namespace
}  // namespace nrt
