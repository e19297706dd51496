// The restricted pickle reader (serializer/pickle_reader.h), torch.save tensors and DTensors read
// through it (serializer/torch_export/torch_saved_tensor.h), and the per-rank DTensor archives
// torch wrote on a gloo group (testdata/torch/dtensor_mlp*, scripts/dtensor_archives.py) imported
// with their meshes, placements and local shards. Crafted pickles cover each refusal class.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/schema_enums.h"
#include "serializer/pickle_reader.h"
#include "serializer/torch_export/import_pt2.h"
#include "serializer/torch_export/pt2_archive.h"
#include "serializer/torch_export/torch_saved_tensor.h"
#include "serializer/program_file.h"
#include "serializer/write_program.h"
#include "tests/torch_export/test_files.h"

namespace nrt {
namespace {

using pickle::Kind;

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// A string of every byte of a literal, NULs included (its length counted by the compiler).
template <size_t N>
std::string literal(const char (&bytes)[N]) {
  return std::string(bytes, N - 1);
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

Result<pickle::Pickle> read(const std::vector<uint8_t>& b, const pickle::Allowlist& allowed = {},
                            const pickle::PickleLimits& limits = {}) {
  return pickle::read_pickle(b, allowed, "test.pkl", limits);
}

// A record of one of the corpus' archives (the zip inside the zip).
std::vector<uint8_t> archive_record(const std::string& archive, const std::string& record) {
  auto reader = torch_export::Pt2Reader::open(test::torch_corpus_dir() + "/" + archive);
  EXPECT_TRUE(reader.ok()) << archive;
  if (!reader) return {};
  auto bytes = reader->read(record);
  EXPECT_TRUE(bytes.ok()) << record;
  return bytes ? *bytes : std::vector<uint8_t>{};
}

std::vector<float> floats_of(const torch_export::SavedTensor& t) {
  std::vector<float> out(t.storage.size() / 4);
  std::memcpy(out.data(), t.storage.data(), out.size() * 4);
  return out;
}

TEST(PickleReader, ReadsProtocolFiveValues) {
  // pickle.dumps(('a', [1, 2, -300, 2**40], {'k': 1.5, 'b': b'xy'}, True, None), protocol=5):
  // FRAME, SHORT_BINUNICODE, MEMOIZE, APPENDS, LONG1, SHORT_BINBYTES, BINFLOAT.
  auto p = read(from_hex("8005953900000000000000288c0161945d94284b014b024ad4feffff8a06000000000001657d94288c016b9447"
                         "3ff80000000000008c016294430278799475884e74942e"));
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->protocol(), 5);
  auto items = p->as_sequence(p->root());
  ASSERT_TRUE(items && items->size() == 5);
  EXPECT_EQ(p->as_string((*items)[0]), "a");
  auto list = p->as_sequence((*items)[1]);
  ASSERT_TRUE(list && list->size() == 4);
  EXPECT_EQ(p->as_int((*list)[2]), -300);
  EXPECT_EQ(p->as_int((*list)[3]), int64_t{1} << 40);
  const auto k = p->dict_get((*items)[2], "k");
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(p->node(*k).kind, Kind::kFloat);
  EXPECT_DOUBLE_EQ(p->node(*k).real, 1.5);
  const auto b = p->dict_get((*items)[2], "b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(p->node(*b).kind, Kind::kBytes);
  EXPECT_EQ(p->node(*b).text, "xy");
  EXPECT_EQ(p->as_int((*items)[3]), 1);
  EXPECT_EQ(p->node((*items)[4]).kind, Kind::kNone);
}

TEST(PickleReader, AListHoldingItselfIsACycleOfIndicesNotALeak) {
  // ] q\x00 h\x00 a .  : l = []; l.append(l)
  auto p = read(bytes_of(literal("\x80\x02]q\x00h\x00" "a.")));
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  const auto& list = p->node(p->root());
  ASSERT_EQ(list.items.size(), 1u);
  EXPECT_EQ(list.items[0], p->root());
}

TEST(PickleReader, RefusesAGlobalOffTheAllowlistNamingIt) {
  auto p = read(bytes_of(literal("\x80\x02" "cos\nsystem\nX\x02\x00\x00\x00ls\x85R.")),
                torch_export::torch_save_allowset());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::PickleGlobalRefused);
  EXPECT_NE(p.error().message.find("'os.system'"), std::string::npos) << p.error().message;
  // STACK_GLOBAL too.
  auto q = read(bytes_of(literal("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93.")),
                torch_export::torch_save_allowset());
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, ErrorCode::PickleGlobalRefused);
  EXPECT_NE(q.error().message.find("'builtins.eval'"), std::string::npos) << q.error().message;
}

TEST(PickleReader, RefusesAnOversizedLength) {
  // BINUNICODE8 declaring 2^40 bytes: refused before anything is allocated.
  std::string b("\x80\x04\x8d", 3);
  b += literal("\x00\x00\x00\x00\x00\x01\x00\x00");
  b += "abc.";
  auto p = read(bytes_of(b));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::PickleLimit);
  EXPECT_NE(p.error().message.find("1099511627776"), std::string::npos) << p.error().message;
  // Within the cap but past the end: truncated.
  auto q = read(bytes_of(literal("\x80\x02X\x10\x00\x00\x00" "abc.")));
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, ErrorCode::PickleMalformed);
}

TEST(PickleReader, RefusesTruncationAtEveryCut) {
  const auto whole = archive_record("dtensor_mlp/model_rank0.pt2", "data/weights/weight_0");
  auto zip = torch_export::Pt2Reader::from_bytes(whole);
  ASSERT_TRUE(zip.ok());
  auto pkl = zip->read("data.pkl");
  ASSERT_TRUE(pkl.ok());
  ASSERT_TRUE(read(*pkl, torch_export::torch_save_allowset()).ok());
  for (size_t cut = 0; cut < pkl->size(); ++cut) {
    std::vector<uint8_t> part(pkl->begin(), pkl->begin() + static_cast<std::ptrdiff_t>(cut));
    auto p = read(part, torch_export::torch_save_allowset());
    ASSERT_FALSE(p.ok()) << "cut at " << cut;
    EXPECT_EQ(p.error().code, ErrorCode::PickleMalformed) << "cut at " << cut << ": " << p.error().message;
  }
}

TEST(PickleReader, RefusesADeepNest) {
  std::string b("\x80\x02", 2);
  b += std::string(300, '(');
  auto p = read(bytes_of(b));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::PickleLimit);
  EXPECT_NE(p.error().message.find("256"), std::string::npos) << p.error().message;
}

TEST(PickleReader, BoundsValuesMemoAndStack) {
  pickle::PickleLimits small;
  small.max_nodes = 8;
  std::string b("\x80\x02", 2);
  for (int i = 0; i < 10; ++i) b += 'N';
  auto p = read(bytes_of(b + "."), {}, small);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::PickleLimit);
  // BINGET of a memo entry never stored.
  auto q = read(bytes_of(literal("\x80\x02h\x05.")));
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, ErrorCode::PickleMalformed);
  // Values left on the stack at STOP.
  auto r = read(bytes_of(literal("\x80\x02NN.")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::PickleMalformed);
  // Text opcodes of protocol 0 and out-of-band buffers are not read.
  auto s = read(bytes_of(literal("\x80\x02I1\n.")));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::PickleMalformed);
  auto t = read(bytes_of(literal("\x80\x05\x97.")));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::PickleMalformed);
}

// A torch.save zip holding `pkl` and the records given.
std::vector<uint8_t> saved_zip(const std::string& pkl, const std::vector<std::pair<std::string, std::string>>& records) {
  std::vector<std::string> names = {"data.pkl", "byteorder"};
  std::vector<std::string> contents = {pkl, "little"};
  for (const auto& [n, c] : records) {
    names.push_back(n);
    contents.push_back(c);
  }
  std::vector<torch_export::Pt2Entry> entries;
  for (size_t i = 0; i < names.size(); ++i) {
    entries.push_back({names[i], {reinterpret_cast<const uint8_t*>(contents[i].data()), contents[i].size()}});
  }
  auto zip = torch_export::write_pt2_archive("archive", entries);
  EXPECT_TRUE(zip.ok());
  return zip ? *zip : std::vector<uint8_t>{};
}

// BINUNICODE of `text`.
std::string unicode(const std::string& text) {
  std::string op = "X";
  const auto n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i) op += static_cast<char>((n >> (8 * i)) & 0xff);
  return op + text;
}

// BININT1 of `v`.
std::string int1(int v) { return std::string("K") + static_cast<char>(v); }

// _rebuild_tensor_v2(('storage', FloatStorage, KEY, 'cpu', NUMEL), 0, (2,), (1,), False, OrderedDict())
std::string tensor_pickle(const std::string& key, int numel) {
  std::string b("\x80\x02", 2);
  b += "ctorch._utils\n_rebuild_tensor_v2\n(";
  b += "(" + unicode("storage") + "ctorch\nFloatStorage\n" + unicode(key) + unicode("cpu") + int1(numel) + "tQ";
  b += int1(0);
  b += int1(2) + "\x85" + int1(1) + "\x85" + "\x89";
  b += "ccollections\nOrderedDict\n)R";
  b += "tR.";
  return b;
}

TEST(SavedTensor, RefusesAPersistentIdNamingNoRecord) {
  auto t = torch_export::read_saved_tensor(saved_zip(tensor_pickle("7", 2), {}), "w");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, ErrorCode::PickleStorageInvalid);
  EXPECT_NE(t.error().message.find("'archive/data/7'"), std::string::npos) << t.error().message;
  // A record of another size than the storage's elements.
  auto u = torch_export::read_saved_tensor(saved_zip(tensor_pickle("0", 2), {{"data/0", std::string(12, 'x')}}), "w");
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.error().code, ErrorCode::PickleStorageInvalid);
  // A view past the storage: sizes (2,) over one element.
  auto v = torch_export::read_saved_tensor(saved_zip(tensor_pickle("0", 1), {{"data/0", std::string(4, 'x')}}), "w");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::PickleStorageInvalid);
  // And the well-formed one reads.
  auto w = torch_export::read_saved_tensor(saved_zip(tensor_pickle("0", 2), {{"data/0", std::string(8, '\0')}}), "w");
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  EXPECT_EQ(w->meta.sizes.size(), 1u);
  EXPECT_FALSE(w->dtensor.has_value());
}

TEST(SavedTensor, ReadsTorchSavedPlainTensors) {
  const std::string dir = test::torch_corpus_dir() + "/pickled_tensors/";
  // nn.Parameter(arange(12).reshape(3, 4)[:, 1:]): offset 1, strides (4, 1), requires_grad.
  auto p = torch_export::read_saved_tensor(test::read_bytes(dir + "parameter_view.pt"), "parameter_view.pt");
  ASSERT_TRUE(p.ok()) << p.error().to_string();
  EXPECT_EQ(p->meta.dtype, fb::ScalarType::FLOAT32);
  ASSERT_EQ(p->meta.sizes.size(), 2u);
  EXPECT_EQ(p->meta.sizes[0]->literal, 3);
  EXPECT_EQ(p->meta.sizes[1]->literal, 3);
  EXPECT_EQ(p->meta.strides[0]->literal, 4);
  EXPECT_EQ(p->meta.storage_offset->literal, 1);
  EXPECT_TRUE(p->meta.requires_grad);
  EXPECT_EQ(floats_of(*p), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  auto i = torch_export::read_saved_tensor(test::read_bytes(dir + "int64.pt"), "int64.pt");
  ASSERT_TRUE(i.ok()) << i.error().to_string();
  EXPECT_EQ(i->meta.dtype, fb::ScalarType::INT64);
  std::vector<int64_t> values(6);
  ASSERT_EQ(i->storage.size(), 48u);
  std::memcpy(values.data(), i->storage.data(), 48);
  EXPECT_EQ(values, (std::vector<int64_t>{0, 7, 14, 21, 28, 35}));
}

TEST(SavedTensor, ReadsADTensorParameterOfEachRank) {
  // w1: Shard(0) of a [6, 5] global on a 1-D mesh of 2 ("tp").
  std::vector<float> shards;
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    auto t = torch_export::read_saved_tensor(
        archive_record("dtensor_mlp/model_rank" + std::to_string(rank) + ".pt2", "data/weights/weight_0"), "w1");
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    ASSERT_TRUE(t->dtensor.has_value());
    const auto& d = *t->dtensor;
    EXPECT_EQ(d.global_sizes, (std::vector<int64_t>{6, 5}));
    EXPECT_EQ(d.global_strides, (std::vector<int64_t>{5, 1}));
    EXPECT_EQ(d.mesh_shape, (std::vector<int64_t>{2}));
    EXPECT_EQ(d.mesh_ranks, (std::vector<int32_t>{0, 1}));
    EXPECT_EQ(d.dim_names, (std::vector<std::string>{"tp"}));
    EXPECT_EQ(d.dim_group_names.size(), 1u);
    EXPECT_EQ(d.rank, rank);
    EXPECT_EQ(d.coordinate, (std::vector<int64_t>{rank}));
    ASSERT_EQ(d.placements.size(), 1u);
    EXPECT_EQ(d.placements[0].kind(), fb::PlacementKind::SHARD);
    EXPECT_EQ(d.placements[0].dim(), 0);
    EXPECT_EQ(t->meta.sizes[0]->literal, 3);
    EXPECT_EQ(t->meta.sizes[1]->literal, 5);
    EXPECT_TRUE(t->meta.requires_grad);
    const auto local = floats_of(*t);
    shards.insert(shards.end(), local.begin(), local.end());
  }
  EXPECT_EQ(shards.size(), 30u);
  EXPECT_NE(std::vector<float>(shards.begin(), shards.begin() + 15), std::vector<float>(shards.begin() + 15, shards.end()));
}

TEST(SavedTensor, ReadsATwoDimensionalMesh) {
  // w2 on rank 3 of a 2x2 (dp, tp) mesh: [Replicate(), Shard(1)] of [3, 6], coordinate (1, 1).
  auto t = torch_export::read_saved_tensor(archive_record("dtensor_mlp_2d/model_rank3.pt2", "data/weights/weight_2"), "w2");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  const auto& d = *t->dtensor;
  EXPECT_EQ(d.mesh_shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(d.mesh_ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(d.dim_names, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(d.coordinate, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(d.rank, 3);
  ASSERT_EQ(d.placements.size(), 2u);
  EXPECT_EQ(d.placements[0].kind(), fb::PlacementKind::REPLICATE);
  EXPECT_EQ(d.placements[1].kind(), fb::PlacementKind::SHARD);
  EXPECT_EQ(d.placements[1].dim(), 1);
  EXPECT_EQ(t->meta.sizes[0]->literal, 3);
  EXPECT_EQ(t->meta.sizes[1]->literal, 3);
}

TEST(SavedTensor, WritesADTensorThatReadsBack) {
  auto t = torch_export::read_saved_tensor(archive_record("dtensor_mlp_2d/model_rank3.pt2", "data/weights/weight_2"), "w2");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  auto written = torch_export::write_saved_dtensor(*t);
  ASSERT_TRUE(written.ok()) << written.error().to_string();
  auto back = torch_export::read_saved_tensor(*written, "written");
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  const auto& a = *t->dtensor;
  const auto& b = *back->dtensor;
  EXPECT_EQ(b.global_sizes, a.global_sizes);
  EXPECT_EQ(b.global_strides, a.global_strides);
  EXPECT_EQ(b.mesh_shape, a.mesh_shape);
  EXPECT_EQ(b.mesh_ranks, a.mesh_ranks);
  EXPECT_EQ(b.dim_names, a.dim_names);
  EXPECT_EQ(b.dim_group_names, a.dim_group_names);
  EXPECT_EQ(b.rank, a.rank);
  EXPECT_EQ(b.coordinate, a.coordinate);
  ASSERT_EQ(b.placements.size(), a.placements.size());
  for (size_t i = 0; i < a.placements.size(); ++i) {
    EXPECT_EQ(b.placements[i].kind(), a.placements[i].kind());
    EXPECT_EQ(b.placements[i].dim(), a.placements[i].dim());
  }
  EXPECT_EQ(back->storage, t->storage);
  EXPECT_EQ(back->meta.requires_grad, t->meta.requires_grad);
  // Only allowlisted globals: the reader accepted it.
}

TEST(DTensorArchive, ImportsAsADTensorProgramThatVerifies) {
  auto imported = torch_export::import_pt2_file(test::torch_corpus_dir() + "/dtensor_mlp_2d/model_rank2.pt2");
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  const auto& program = imported->program.program;
  ASSERT_EQ(program.meshes.size(), 1u);
  EXPECT_EQ(program.meshes[0]->shape, (std::vector<int64_t>{2, 2}));
  // The tp group: named by its mesh dim (torch's name differs between ranks), coordinate 0's ranks.
  bool tp_group = false;
  for (const auto& g : program.process_groups) {
    if (g->name != "mesh.tp") continue;
    tp_group = true;
    EXPECT_EQ(g->mesh, 0);
    EXPECT_EQ(g->mesh_dim, 1);
    EXPECT_EQ(g->ranks, (std::vector<int32_t>{0, 1}));
  }
  EXPECT_TRUE(tp_group);
  int dtensors = 0;
  for (const auto& v : program.graphs[0]->values) {
    if (v->kind != fb::ValueKind::DTENSOR) continue;
    ++dtensors;
    ASSERT_TRUE(v->dtensor);
    EXPECT_EQ(v->dtensor->placements.size(), 2u);
  }
  EXPECT_EQ(dtensors, 4);
  for (const auto& w : program.weights) EXPECT_EQ(w->shard_coordinate, (std::vector<int64_t>{1, 0})) << w->fqn;
  std::vector<std::span<const uint8_t>> spans(imported->program.storages.begin(), imported->program.storages.end());
  auto bytes = serialize_program(std::move(imported->program.program), spans);
  ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
  auto verified = ProgramFile::from_bytes(*bytes);  // verifies
  EXPECT_TRUE(verified.ok()) << verified.error().to_string();
}

}  // namespace
}  // namespace nrt
