// Every error code a file (or a JSON text) can produce is produced here by a crafted input, and the
// test checks the exact code and that the message names the place. The inputs start from the
// valid sample program (sample_program.h) and change one thing each: through the object API where
// the writer keeps what we set, by patching the serialized FlatBuffer or container header in place
// where the writer would overwrite it (storage layout, checksums, schema version) or where the
// object API cannot express the damage (absent union members, unknown union tags).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "serializer/container.h"
#include "serializer/open_program.h"
#include "core/error.h"
#include "serializer/json_form.h"
#include "serializer/program_file.h"
#include "serializer/write_program.h"
#include "tests/verify/sample_program.h"

namespace nrt {
namespace {
// Line-buffered stdout: these tests hunt crashes, and a crash must not swallow GoogleTest's
// buffered report of which case was running.
[[maybe_unused]] const int kLineBufferedStdout = std::setvbuf(stdout, nullptr, _IOLBF, 0);

using testing::make_sample_program;
using testing::serialize;
using testing::serialize_and_open;

Error error_of(const Result<ProgramFile>& result) { return result.ok() ? Error{} : result.error(); }
Error error_of(const Status& status) { return status.error(); }

// ---------------------------------------------------------------------------------------------
// Building damaged inputs

// The sample with `mutate` applied to its object form, written by serialize_program and opened.
Error verify_mutated(const std::function<void(ProgramWithWeights&)>& mutate, VerifyOptions options = {}) {
  auto program = make_sample_program();
  mutate(program);
  return error_of(serialize_and_open(program, options));
}

fb::GraphT& main_graph(ProgramWithWeights& p) { return *p.program.graphs[0]; }
fb::GraphT& body_graph(ProgramWithWeights& p) { return *p.program.graphs[1]; }
fb::NodeT& main_node(ProgramWithWeights& p, size_t n) { return *main_graph(p).nodes[n]; }
fb::ValueT& main_value(ProgramWithWeights& p, size_t v) { return *main_graph(p).values[v]; }

template <typename T>
T& member(fb::ArgumentUnion& u) {
  return *reinterpret_cast<T*>(u.value);
}

std::vector<uint8_t> sample_bytes() {
  auto bytes = serialize(make_sample_program());
  EXPECT_TRUE(bytes.ok()) << bytes.error().to_string();
  return bytes.ok() ? std::move(*bytes) : std::vector<uint8_t>{};
}

Error open_bytes(std::vector<uint8_t> bytes, VerifyOptions options = {}) {
  return error_of(ProgramFile::from_bytes(std::move(bytes), options));
}

void store_le(std::vector<uint8_t>& bytes, size_t offset, uint64_t value, size_t width) {
  for (size_t i = 0; i < width; ++i) bytes.at(offset + i) = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t load_le64(const std::vector<uint8_t>& bytes, size_t offset) {
  uint64_t v = 0;
  for (size_t i = 8; i-- > 0;) v = (v << 8) | bytes.at(offset + i);
  return v;
}

// The sample file with one header field (container.h: byte offset, width) replaced.
Error open_with_header_field(size_t offset, uint64_t value, size_t width = 8) {
  auto bytes = sample_bytes();
  store_le(bytes, offset, value, width);
  return open_bytes(std::move(bytes));
}

// In-place edits of a serialized FlatBuffer. The generated tables inherit flatbuffers::Table
// privately and have no mutators (no --gen-mutable); the Table API itself can set a scalar that
// is present and, through the vtable, make a field absent.
template <typename T>
flatbuffers::Table* table_of(const T* table) {
  return reinterpret_cast<flatbuffers::Table*>(const_cast<T*>(table));
}

template <typename V, typename T>
void set_scalar(const T* table, flatbuffers::voffset_t field, V value) {
  if (!table_of(table)->template SetField<V>(field, value))
    ADD_FAILURE() << "field at vtable offset " << field << " is absent";
}

// Makes `field` absent in every table sharing `table`'s vtable (FlatBuffers deduplicates vtables).
template <typename T>
void drop_field(const T* table, flatbuffers::voffset_t field) {
  auto* vtable = const_cast<uint8_t*>(table_of(table)->GetVTable());
  ASSERT_LT(field, flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable));
  flatbuffers::WriteScalar<flatbuffers::voffset_t>(vtable + field, 0);
}

template <typename V, typename S>
void set_struct_bytes(const S* s, size_t offset, V value) {
  flatbuffers::WriteScalar<V>(reinterpret_cast<uint8_t*>(const_cast<S*>(s)) + offset, value);
}

// The sample file with `patch` applied to its FlatBuffer.
Error open_patched(const std::function<void(const fb::Program&)>& patch, VerifyOptions options = {}) {
  auto bytes = sample_bytes();
  patch(*fb::GetProgram(bytes.data() + kContainerHeaderSize));
  return open_bytes(std::move(bytes), options);
}

// A container around a FlatBuffer packed from `program` as is (no writer: nothing is restamped).
std::vector<uint8_t> assemble(const fb::ProgramT& program, std::span<const uint8_t> segment) {
  flatbuffers::FlatBufferBuilder builder;
  fb::FinishProgramBuffer(builder, fb::Program::Pack(builder, &program));
  ContainerLayout layout;
  layout.flatbuffer_offset = kContainerHeaderSize;
  layout.flatbuffer_size = builder.GetSize();
  if (!segment.empty()) {
    align_up(layout.flatbuffer_offset + layout.flatbuffer_size, kSegmentAlignment, &layout.segment_offset);
    layout.segment_size = segment.size();
  }
  const auto header = encode_container_header(layout);
  const uint64_t end =
      segment.empty() ? layout.flatbuffer_offset + layout.flatbuffer_size : layout.segment_offset + layout.segment_size;
  std::vector<uint8_t> bytes(end, 0);
  std::copy(header.begin(), header.end(), bytes.begin());
  std::copy(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize(),
            bytes.begin() + static_cast<std::ptrdiff_t>(layout.flatbuffer_offset));
  std::copy(segment.begin(), segment.end(), bytes.begin() + static_cast<std::ptrdiff_t>(layout.segment_offset));
  return bytes;
}

// A [long] whose elements start 4 bytes off an 8-byte boundary. The builder aligns vectors for
// their element size, so the vector is written as 4-byte elements behind one 4-byte pad; the
// FlatBuffers verifier checks only the alignment of the 4-byte length in front of it. Must be the
// first thing built (the pad's parity is counted from the end of the buffer, which Finish aligns
// to 8).
flatbuffers::Offset<flatbuffers::Vector<int64_t>> misaligned_longs(flatbuffers::FlatBufferBuilder& b,
                                                                   const std::vector<int64_t>& values) {
  b.Align(8);
  b.PushElement<uint32_t>(0);
  b.StartVector(values.size() * 2, sizeof(uint32_t));
  for (size_t i = values.size(); i-- > 0;) {
    b.PushElement(static_cast<uint32_t>(static_cast<uint64_t>(values[i]) >> 32));
    b.PushElement(static_cast<uint32_t>(values[i]));
  }
  return flatbuffers::Offset<flatbuffers::Vector<int64_t>>(b.EndVector(values.size()));
}

// A minimal program built without the object API: graph 'main' with one node 'view' whose only
// argument is an IntListArg, and one mesh 'm' of shape [2]; either vector may be misaligned.
std::vector<uint8_t> hand_built(bool misaligned_ints, bool misaligned_mesh_shape) {
  flatbuffers::FlatBufferBuilder b;
  const std::vector<int64_t> ints{2, -1, 3}, shape{2};
  auto ints_vector = misaligned_ints ? misaligned_longs(b, ints) : b.CreateVector(ints);
  auto shape_vector = misaligned_mesh_shape ? misaligned_longs(b, shape) : b.CreateVector(shape);
  auto mesh = fb::CreateDeviceMesh(b, b.CreateString("m"), fb::DeviceType::CPU, shape_vector, 0,
                                   b.CreateVector(std::vector<int32_t>{0, 1}));
  auto list = fb::CreateIntListArg(b, ints_vector);
  auto argument = fb::CreateNamedArgument(b, b.CreateString("size"), fb::Argument::IntListArg, list.Union(),
                                          fb::ArgumentKind::POSITIONAL);
  auto node = fb::CreateNode(b, b.CreateString("view"), 0, b.CreateVector(std::vector{argument}));
  auto graph =
      fb::CreateGraph(b, b.CreateString("main"), 0, b.CreateVector(std::vector{node}), 0, 0, fb::CreateSignature(b));
  auto op = fb::CreateOperator(b, b.CreateString("aten::view"));
  const fb::Version version(1, 0);
  auto program =
      fb::CreateProgram(b, &version, 0, b.CreateVector(std::vector{graph}), b.CreateVector(std::vector<uint32_t>{0}),
                        b.CreateVector(std::vector{op}), 0, 0, b.CreateVector(std::vector{mesh}));
  fb::FinishProgramBuffer(b, program);
  ContainerLayout layout;
  layout.flatbuffer_offset = kContainerHeaderSize;
  layout.flatbuffer_size = b.GetSize();
  const auto header = encode_container_header(layout);
  std::vector<uint8_t> bytes(kContainerHeaderSize + b.GetSize());
  std::copy(header.begin(), header.end(), bytes.begin());
  std::copy(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize(), bytes.begin() + kContainerHeaderSize);
  return bytes;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

fb::ArgumentUnion int_arg(int64_t v) {
  fb::IntArgT a;
  a.value = v;
  fb::ArgumentUnion u;
  u.Set(a);
  return u;
}

fb::ArgumentUnion tensor_arg(uint32_t v) {
  fb::TensorArgT a;
  a.value = v;
  fb::ArgumentUnion u;
  u.Set(a);
  return u;
}

fb::ArgumentUnion graph_arg(uint32_t g) {
  fb::GraphArgT a;
  a.graph = g;
  fb::ArgumentUnion u;
  u.Set(a);
  return u;
}

std::unique_ptr<fb::ArgumentHolderT> holder(fb::ArgumentUnion arg) {
  auto h = std::make_unique<fb::ArgumentHolderT>();
  h->arg = std::move(arg);
  return h;
}

std::unique_ptr<fb::NamedArgumentT> named(const std::string& name, fb::ArgumentUnion arg) {
  auto n = std::make_unique<fb::NamedArgumentT>();
  n->name = name;
  n->arg = std::move(arg);
  n->kind = fb::ArgumentKind::POSITIONAL;
  return n;
}

std::unique_ptr<fb::SymDimT> dim(int64_t literal) {
  auto d = std::make_unique<fb::SymDimT>();
  d->literal = literal;
  return d;
}

// A value of `kind` without metadata, appended to the body graph (index 3); nothing defines it.
fb::ValueT& add_body_value(ProgramWithWeights& p, const std::string& name, fb::ValueKind kind) {
  auto v = std::make_unique<fb::ValueT>();
  v->name = name;
  v->kind = kind;
  body_graph(p).values.push_back(std::move(v));
  return *body_graph(p).values.back();
}

// Main gets a sixth input, a constant described by a CONSTANT_INPUT spec 'scale' (signature 5)
// that carries `constant`; the graph input holds the same constant (2 when there is none).
void add_constant_input(ProgramWithWeights& p, std::unique_ptr<fb::ArgumentHolderT> constant) {
  const bool has_value = constant != nullptr && constant->arg.type != fb::Argument::NONE;
  main_graph(p).inputs.push_back(holder(has_value ? constant->arg : int_arg(2)));
  auto spec = std::make_unique<fb::InputSpecT>();
  spec->kind = fb::InputKind::CONSTANT_INPUT;
  spec->value = -1;
  spec->target = "scale";
  spec->constant = std::move(constant);
  main_graph(p).signature->inputs.push_back(std::move(spec));
}

template <typename E>
E raw_enum(int value) {
  return static_cast<E>(value);
}

// ---------------------------------------------------------------------------------------------
// The cases

struct Case {
  std::string name;
  ErrorCode code;
  std::function<Error()> run;
  std::vector<std::string> places;  // substrings the message must contain
};

// GoogleTest names a failing case by this instead of its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> container_cases() {
  return {
      {"MissingPath",
       ErrorCode::IoOpen,
       [] { return error_of(ProgramFile::open("/nonexistent-nrt-dir/model.nrt")); },
       {"/nonexistent-nrt-dir/model.nrt"}},
      {"OutputDirectoryMissing",
       ErrorCode::IoWrite,
       [] {
         auto p = make_sample_program();
         std::vector<std::span<const uint8_t>> spans(p.storages.begin(), p.storages.end());
         return error_of(write_program_file("/nonexistent-nrt-dir/out.nrt", p.program, spans));
       },
       {"/nonexistent-nrt-dir/out.nrt"}},
      {"OutputNameWithoutFormat",
       ErrorCode::UnknownFormat,
       [] {
         const std::string path = temp_path("not_a_program.bin");
         std::FILE* f = std::fopen(path.c_str(), "wb");
         std::fputs("GIF89a", f);
         std::fclose(f);
         // An output name that says no format: convert refuses before reading the input.
         return error_of(convert_program(path, temp_path("not_a_program.out"), {}, {}));
       },
       {"not_a_program.out", "--to"}},
      {"StorageSpanCountDiffers",
       ErrorCode::InvalidArgument,
       [] {
         auto p = make_sample_program();
         std::vector<std::span<const uint8_t>> one{p.storages[0]};
         auto bytes = serialize_program(p.program, one);
         return bytes.ok() ? Error{} : bytes.error();
       },
       {"2 storages", "1 byte ranges"}},
      {"EmptyFile", ErrorCode::FileTooSmall, [] { return open_bytes({}); }, {"0 bytes"}},
      {"HeaderCutShort",
       ErrorCode::FileTooSmall,
       [] {
         auto bytes = sample_bytes();
         bytes.resize(63);
         return open_bytes(std::move(bytes));
       },
       {"63 bytes"}},
      {"BadMagic",
       ErrorCode::BadMagic,
       [] {
         auto bytes = sample_bytes();
         bytes[0] = 'X';
         return open_bytes(std::move(bytes));
       },
       {"bytes 0..3"}},
      {"ContainerVersion2",
       ErrorCode::UnsupportedContainerVersion,
       [] { return open_with_header_field(4, 2, 4); },
       {"version 2", "byte 4"}},
      {"HeaderSize128",
       ErrorCode::UnsupportedContainerVersion,
       [] { return open_with_header_field(8, 128); },
       {"header size 128", "byte 8"}},
      {"FlatbufferBeyondFile",
       ErrorCode::FlatbufferOutOfRange,
       [] { return open_with_header_field(24, sample_bytes().size()); },
       {"header bytes 16..31"}},
      {"FlatbufferOffsetOverflows",
       ErrorCode::FlatbufferOutOfRange,
       [] { return open_with_header_field(16, std::numeric_limits<uint64_t>::max() - 7); },
       {"offset 18446744073709551608"}},
      {"FlatbufferOffsetInsideHeader",
       ErrorCode::FlatbufferOutOfRange,
       [] { return open_with_header_field(16, 8); },
       {"offset 8"}},
      {"FlatbufferMisaligned",
       ErrorCode::FlatbufferOutOfRange,
       [] { return open_with_header_field(16, 68); },
       {"offset 68"}},
      {"FlatbufferTooSmall", ErrorCode::FlatbufferOutOfRange, [] { return open_with_header_field(24, 4); }, {"size 4"}},
      {"TruncatedInFlatbuffer",
       ErrorCode::FlatbufferOutOfRange,
       [] {
         auto bytes = sample_bytes();
         bytes.resize(200);
         return open_bytes(std::move(bytes));
       },
       {"file of 200 bytes"}},
      {"TruncatedInSegment",
       ErrorCode::SegmentOutOfRange,
       [] {
         auto bytes = sample_bytes();
         bytes.pop_back();
         return open_bytes(std::move(bytes));
       },
       {"header bytes 32..47"}},
      {"SegmentNotPageAligned",
       ErrorCode::SegmentOutOfRange,
       [] { return open_with_header_field(32, load_le64(sample_bytes(), 32) + 64); },
       {"page-aligned"}},
      {"SegmentOverlapsFlatbuffer",
       ErrorCode::SegmentOutOfRange,
       [] { return open_with_header_field(32, 0); },
       {"offset 0"}},
      {"SegmentEndOverflows",
       ErrorCode::SegmentOutOfRange,
       [] { return open_with_header_field(40, std::numeric_limits<uint64_t>::max() - 100); },
       {"size 18446744073709551515"}},
      {"BadFileIdentifier",
       ErrorCode::BadFileIdentifier,
       [] {
         auto bytes = sample_bytes();
         bytes[kContainerHeaderSize + 4] = 'X';
         return open_bytes(std::move(bytes));
       },
       {"NRT1", "offset 64"}},
      {"RootOffsetOutOfBuffer",
       ErrorCode::FlatbufferInvalid,
       [] {
         auto bytes = sample_bytes();
         store_le(bytes, kContainerHeaderSize, 0x7fffff00, 4);
         return open_bytes(std::move(bytes));
       },
       {"offset 64"}},
      {"FlatbufferSizeCutsTables",
       ErrorCode::FlatbufferInvalid,
       [] { return open_with_header_field(24, 64); },
       {"(64 bytes)"}},
      {"MisalignedInt64Vector",
       ErrorCode::FlatbufferInvalid,
       [] { return open_bytes(hand_built(true, false)); },
       {"graph 'main' node 0 'view' argument 0", "aligned"}},
      {"MisalignedMeshShape",
       ErrorCode::FlatbufferInvalid,
       [] { return open_bytes(hand_built(false, true)); },
       {"mesh 0 'm'", "aligned"}},
      {"RequiredGraphNameAbsent",
       ErrorCode::FlatbufferInvalid,
       [] { return open_patched([](const fb::Program& p) { drop_field(p.graphs()->Get(0), fb::Graph::VT_NAME); }); },
       {"required field"}},
  };
}

std::vector<Case> program_cases() {
  return {
      {"SchemaMajor2",
       ErrorCode::UnsupportedSchemaVersion,
       [] { return open_patched([](const fb::Program& p) { set_struct_bytes<uint16_t>(p.schema_version(), 0, 2); }); },
       {"schema version 2.0"}},
      {"SchemaVersionAbsent",
       ErrorCode::MissingField,
       [] { return open_patched([](const fb::Program& p) { drop_field(&p, fb::Program::VT_SCHEMA_VERSION); }); },
       {"schema_version"}},
      {"GraphInputSlotEmpty",
       ErrorCode::MissingField,
       [] { return verify_mutated([](auto& p) { main_graph(p).inputs[0]->arg.Reset(); }); },
       {"graph 'main' input 0"}},
      {"NodeArgumentTableAbsent",
       ErrorCode::MissingField,
       [] {
         return open_patched([](const fb::Program& p) {
           drop_field(p.graphs()->Get(0)->nodes()->Get(0)->inputs()->Get(0), fb::NamedArgument::VT_ARG);
         });
       },
       {"graph 'main' node 0 'linear' argument 0", "TensorArg"}},
      // A union tag with its table absent in a defining slot (graph input / node output).
      {"GraphInputArgumentTableAbsent",
       ErrorCode::MissingField,
       [] {
         return open_patched([](const fb::Program& p) {
           drop_field(p.graphs()->Get(0)->inputs()->Get(0), fb::ArgumentHolder::VT_ARG);
         });
       },
       {"graph 'main' input 0"}},
      {"NoEntryPoint",
       ErrorCode::NoEntryPoint,
       [] { return verify_mutated([](auto& p) { p.program.entry_points.clear(); }); },
       {"no entry point"}},
      {"EntryPointOutOfRange",
       ErrorCode::GraphIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { p.program.entry_points = {4}; }); },
       {"entry point 0", "graph 4"}},
      {"EntryPointTwice",
       ErrorCode::DuplicateName,
       [] { return verify_mutated([](auto& p) {
              p.program.entry_points = {0, 0};
            }); },
       {"graph 0"}},
      {"GraphNamedTwice",
       ErrorCode::DuplicateName,
       [] { return verify_mutated([](auto& p) { body_graph(p).name = "main"; }); },
       {"graph 1 'main'"}},
  };
}

std::vector<Case> index_cases() {
  return {
      {"NodeOperatorOutOfRange",
       ErrorCode::OperatorIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { main_node(p, 1).op = 99; }); },
       {"graph 'main' node 1 'relu'", "operator index 99"}},
      {"OperatorArgOutOfRange",
       ErrorCode::OperatorIndexOutOfRange,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "combine") member<fb::OperatorArgT>(in->arg).op = 5;
           }
         });
       },
       {"graph 'main' node 1 'relu' argument 13", "operator index 5"}},
      {"TensorArgOutOfRange",
       ErrorCode::ValueIndexOutOfRange,
       [] {
         return verify_mutated([](auto& p) { member<fb::TensorArgT>(main_node(p, 0).inputs[0]->arg).value = 99; });
       },
       {"graph 'main' node 0 'linear' argument 0", "value index 99"}},
      {"GraphOutputOutOfRange",
       ErrorCode::ValueIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { member<fb::TensorArgT>(body_graph(p).outputs[0]->arg).value = 3; }); },
       {"graph 'body' output 0", "value index 3"}},
      {"SymIntItemOutOfRange",
       ErrorCode::ValueIndexOutOfRange,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "shape") member<fb::SymIntListArgT>(in->arg).items[0] = fb::SymIntItem(40, 0);
           }
         });
       },
       {"graph 'main' node 1 'relu' argument 5", "value index 40"}},
      {"WeightStorageOutOfRange",
       ErrorCode::StorageIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { p.program.weights[1]->storage = 5; }); },
       {"weight 1 'linear.bias'", "storage 5"}},
      {"DTensorMeshOutOfRange",
       ErrorCode::MeshIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor->mesh = 3; }); },
       {"graph 'main' value 4", "value 'r'", "mesh 3"}},
      {"GroupMeshOutOfRange",
       ErrorCode::MeshIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { p.program.process_groups[0]->mesh = 2; }); },
       {"process group 0 'tp0'", "mesh 2"}},
      {"ProcessGroupValueOutOfRange",
       ErrorCode::GroupIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { main_value(p, 6).process_group = 7; }); },
       {"value 'pg'", "process group 7"}},
      {"ProcessGroupArgOutOfRange",
       ErrorCode::GroupIndexOutOfRange,
       [] {
         return verify_mutated([](auto& p) { member<fb::ProcessGroupArgT>(main_node(p, 2).inputs[2]->arg).group = 9; });
       },
       {"graph 'main' node 2 'all_reduce' argument 2", "process group index 9"}},
      {"GraphArgOutOfRange",
       ErrorCode::GraphIndexOutOfRange,
       [] { return verify_mutated([](auto& p) { member<fb::GraphArgT>(main_node(p, 3).inputs[0]->arg).graph = 9; }); },
       {"graph 'main' node 3 'call_body' argument 0", "subgraph index 9"}},
      {"GraphValueOutOfRange",
       ErrorCode::GraphIndexOutOfRange,
       [] {
         return verify_mutated([](auto& p) {
           auto v = std::make_unique<fb::ValueT>();
           v->name = "callee";
           v->kind = fb::ValueKind::GRAPH;
           v->graph = 9;
           body_graph(p).values.push_back(std::move(v));
         });
       },
       {"graph 'body' value 3", "value 'callee'", "graph 9"}},
  };
}

std::vector<Case> enum_cases() {
  return {
      {"ValueDtype",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { main_value(p, 0).tensor->dtype = raw_enum<fb::ScalarType>(99); }); },
       {"graph 'main' value 0", "value 'x'", "dtype 99"}},
      {"ValueDtypeInNumberingGap",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { main_value(p, 0).tensor->dtype = raw_enum<fb::ScalarType>(20); }); },
       {"value 'x'", "dtype 20"}},
      {"ValueLayout",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { main_value(p, 3).tensor->layout = raw_enum<fb::Layout>(50); }); },
       {"value 'y'", "layout 50"}},
      {"ValueDeviceType",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) { main_value(p, 3).tensor->device->type = raw_enum<fb::DeviceType>(100); });
       },
       {"value 'y'", "device type 100"}},
      {"ValueKind",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { main_value(p, 7).kind = raw_enum<fb::ValueKind>(77); }); },
       {"value 'z'", "kind 77"}},
      {"PlacementKind",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[0] =
               fb::Placement(raw_enum<fb::PlacementKind>(9), fb::ReduceOp::SUM, 0, 0);
         });
       },
       {"value 'r' placement 0", "kind 9"}},
      {"PartialReduceOp",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[0] =
               fb::Placement(fb::PlacementKind::PARTIAL, raw_enum<fb::ReduceOp>(77), 0, 0);
         });
       },
       {"value 'r' placement 0", "reduce op 77"}},
      {"MeshDeviceType",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { p.program.meshes[0]->device_type = raw_enum<fb::DeviceType>(99); }); },
       {"mesh 0 'dp_tp'", "device type 99"}},
      {"InputSpecKind",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) { main_graph(p).signature->inputs[3]->kind = raw_enum<fb::InputKind>(42); });
       },
       {"graph 'main' signature 3", "input spec kind 42"}},
      {"InputSpecKindUnknown",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) { main_graph(p).signature->inputs[0]->kind = fb::InputKind::UNKNOWN; });
       },
       {"graph 'main' signature 0", "input spec kind 0"}},
      {"OutputSpecKind",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated(
             [](auto& p) { main_graph(p).signature->outputs[0]->kind = raw_enum<fb::OutputKind>(99); });
       },
       {"graph 'main' signature 0", "output spec kind 99"}},
      {"ArgumentKind",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { main_node(p, 0).inputs[1]->kind = raw_enum<fb::ArgumentKind>(9); }); },
       {"graph 'main' node 0 'linear' argument 1", "argument kind 9"}},
      {"ScalarTypeArg",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "dtype") member<fb::ScalarTypeArgT>(in->arg).value = raw_enum<fb::ScalarType>(14);
           }
         });
       },
       {"graph 'main' node 1 'relu' argument 7", "ScalarType argument 14"}},
      {"MemoryFormatArg",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "memory_format")
               member<fb::MemoryFormatArgT>(in->arg).value = raw_enum<fb::MemoryFormat>(99);
           }
         });
       },
       {"node 1 'relu' argument 8", "MemoryFormat argument 99"}},
      {"LayoutArg",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "layout") member<fb::LayoutArgT>(in->arg).value = raw_enum<fb::Layout>(-3);
           }
         });
       },
       {"node 1 'relu' argument 9", "Layout argument -3"}},
      {"DeviceArg",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "device") member<fb::DeviceArgT>(in->arg).value->type = raw_enum<fb::DeviceType>(15);
           }
         });
       },
       {"node 1 'relu' argument 10", "DeviceType argument 15"}},
      {"WeightDtype",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { p.program.weights[0]->meta->dtype = raw_enum<fb::ScalarType>(99); }); },
       {"weight 0", "dtype 99"}},
      {"WeightLayout",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { p.program.weights[0]->meta->layout = raw_enum<fb::Layout>(50); }); },
       {"weight 0 'linear.weight'", "layout 50"}},
      {"WeightDeviceType",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated(
             [](auto& p) { p.program.weights[1]->meta->device->type = raw_enum<fb::DeviceType>(99); });
       },
       {"weight 1 'linear.bias'", "device type 99"}},
      // Metadata a kind does not need is checked all the same when present.
      {"TensorMetaOfSymIntValue",
       ErrorCode::UnknownEnumValue,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 5).tensor = std::make_unique<fb::TensorMetaT>();
           main_value(p, 5).tensor->dtype = fb::ScalarType::INT64;
           main_value(p, 5).tensor->layout = raw_enum<fb::Layout>(40);
         });
       },
       {"graph 'main' value 5", "value 's' layout 40"}},
      {"WeightDtypeWithoutSize",
       ErrorCode::UnknownEnumValue,
       [] { return verify_mutated([](auto& p) { p.program.weights[1]->meta->dtype = fb::ScalarType::UNKNOWN; }); },
       {"weight 1 'linear.bias'", "no known element size"}},
      {"UnionTagBeyondArgument",
       ErrorCode::UnknownArgumentKind,
       [] {
         return open_patched([](const fb::Program& p) {
           set_scalar<uint8_t>(p.graphs()->Get(0)->nodes()->Get(0)->inputs()->Get(0), fb::NamedArgument::VT_ARG_TYPE,
                               60);
         });
       },
       {"graph 'main' node 0 'linear' argument 0", "member 60"}},
  };
}

std::vector<Case> weight_cases() {
  return {
      {"StorageEndOverflows",
       ErrorCode::StorageOutOfSegment,
       [] {
         return open_patched([](const fb::Program& p) {
           set_scalar<uint64_t>(p.storages()->Get(1), fb::Storage::VT_OFFSET,
                                std::numeric_limits<uint64_t>::max() - 63);
           set_scalar<uint64_t>(p.storages()->Get(1), fb::Storage::VT_SIZE, 128);
         });
       },
       {"storage 1", "18446744073709551552"}},
      {"StorageBeyondSegment",
       ErrorCode::StorageOutOfSegment,
       [] {
         return open_patched(
             [](const fb::Program& p) { set_scalar<uint64_t>(p.storages()->Get(1), fb::Storage::VT_SIZE, 4096); });
       },
       {"storage 1", "+4096", "segment of 144 bytes"}},
      {"StorageOffsetMisaligned",
       ErrorCode::StorageMisaligned,
       [] {
         return open_patched(
             [](const fb::Program& p) { set_scalar<uint64_t>(p.storages()->Get(1), fb::Storage::VT_OFFSET, 96); });
       },
       {"storage 1", "offset 96", "alignment 64"}},
      {"StorageAlignmentNotPowerOfTwo",
       ErrorCode::StorageMisaligned,
       [] {
         auto program = make_sample_program();
         program.program.storages[1]->alignment = 128;  // written as a non-default value, then patched
         NRT_TRY(bytes, serialize(program));
         set_scalar<uint32_t>(fb::GetProgram(bytes->data() + kContainerHeaderSize)->storages()->Get(1),
                              fb::Storage::VT_ALIGNMENT, 48);
         return open_bytes(std::move(*bytes));
       },
       {"storage 1", "alignment 48"}},
      {"StorageAlignmentBeyondAPage",
       ErrorCode::StorageMisaligned,
       [] {
         auto program = make_sample_program();
         program.program.storages[1]->alignment = 128;
         NRT_TRY(bytes, serialize(program));
         set_scalar<uint32_t>(fb::GetProgram(bytes->data() + kContainerHeaderSize)->storages()->Get(1),
                              fb::Storage::VT_ALIGNMENT, 1u << 30);
         return open_bytes(std::move(*bytes));
       },
       {"storage 1", "alignment 1073741824 exceeds the limit of 4096"}},
      {"WriterRejectsAlignmentBeyondAPage",
       ErrorCode::StorageMisaligned,
       [] {
         auto program = make_sample_program();
         program.program.storages[1]->alignment = 8192;  // would pad the segment by up to 8 KiB a storage
         return error_of(serialize_and_open(program));
       },
       {"storage 1", "alignment 8192", "up to 4096"}},
      {"ValueSizesBeyondAddressableMemory",
       ErrorCode::InvalidShape,
       [] {
         return verify_mutated([](auto& p) {
           auto& meta = *main_graph(p).values[0]->tensor;  // x: f32[2, 8] -> f32[1e8, 1e7]
           meta.sizes[0]->literal = 100000000;
           meta.sizes[1]->literal = 10000000;
           meta.strides[0]->literal = 10000000;
         });
       },
       {"'x'", "more than 281474976710656 bytes"}},
      {"WriterRejectsInlineData",
       ErrorCode::InlineDataMismatch,
       [] {
         auto program = make_sample_program();
         program.program.storages[0]->inline_data = program.storages[0];
         return error_of(serialize_and_open(program));
       },
       {"storage 0"}},
      {"InlineDataInBinaryFile",
       ErrorCode::InlineDataMismatch,
       [] {
         NRT_TRY(file, serialize_and_open(make_sample_program()));
         auto unpacked = unpack_program(*file);
         unpacked.program.storages[1]->inline_data = unpacked.storages[1];
         const auto segment = file->file_bytes().subspan(file->layout().segment_offset, file->layout().segment_size);
         return open_bytes(assemble(unpacked.program, segment));
       },
       {"storage 1", "inline data"}},
      {"JsonInlineDataSizeDiffers",
       ErrorCode::InlineDataMismatch,
       [] {
         NRT_TRY(file, serialize_and_open(make_sample_program()));
         NRT_TRY(json, program_to_json(*file));
         const std::string from = "\"size\": 16";
         const size_t at = json->find(from);
         if (at == std::string::npos) return make_error(ErrorCode::Ok, "no storage of 16 bytes in the JSON");
         json->replace(at, from.size(), "\"size\": 17");
         auto parsed = program_from_json(*json);
         return parsed.ok() ? Error{} : parsed.error();
       },
       {"storage 1", "17 bytes", "holds 16"}},
      {"ViewLargerThanStorage",
       ErrorCode::TensorViewOutOfStorage,
       [] {
         return verify_mutated([](auto& p) {
           auto& meta = *p.program.weights[0]->meta;
           meta.sizes[1]->literal = 9;
           meta.strides[0]->literal = 9;
         });
       },
       {"weight 0 'linear.weight'", "needs 144 bytes", "holds 128"}},
      {"ViewOffsetPastStorage",
       ErrorCode::TensorViewOutOfStorage,
       [] { return verify_mutated([](auto& p) { p.program.weights[1]->meta->storage_offset->literal = 1; }); },
       {"weight 1 'linear.bias'", "needs 20 bytes", "holds 16"}},
      {"ViewExtentOverflows",
       ErrorCode::InvalidShape,
       [] {
         return verify_mutated([](auto& p) {
           auto& meta = *p.program.weights[0]->meta;
           meta.strides[0]->literal = int64_t{1} << 62;
           meta.sizes[0]->literal = 5;
         });
       },
       {"weight 0 'linear.weight'", "overflows"}},
      {"ViewSymbolicSize",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { p.program.weights[0]->meta->sizes[1]->expr = "s0"; }); },
       {"weight 0 'linear.weight'", "dimension 1"}},
      {"ViewStrideCountDiffers",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { p.program.weights[0]->meta->strides.pop_back(); }); },
       {"weight 0 'linear.weight'", "2 sizes but 1 strides"}},
      {"ValueNegativeSize",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { main_value(p, 3).tensor->sizes[1]->literal = -3; }); },
       {"graph 'main' value 3", "value 'y' size 1 is negative (-3)"}},
      {"ValueStrideCountDiffers",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { main_value(p, 3).tensor->strides.push_back(dim(1)); }); },
       {"value 'y'", "2 sizes but 3 strides"}},
      {"ValueSizeNegativeHint",
       ErrorCode::InvalidShape,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 3).tensor->sizes[0]->expr = "s0";
           main_value(p, 3).tensor->sizes[0]->hint = -1;
         });
       },
       {"graph 'main' value 3", "value 'y' size 0 has a negative hint (-1)"}},
      // An empty expression reads as "no expression" to the executor, which then takes the
      // unchecked negative literal for the size.
      {"ValueSizeEmptyExpression",
       ErrorCode::InvalidShape,
       [] {
         auto program = make_sample_program();
         auto& size = *main_value(program, 3).tensor->sizes[1];
         size.expr = "s";  // emptied in place below: the object API never writes an empty string
         size.literal = -3;
         NRT_TRY(bytes, serialize(program));
         const auto* expr = fb::GetProgram(bytes->data() + kContainerHeaderSize)
                                ->graphs()->Get(0)->values()->Get(3)->tensor()->sizes()->Get(1)->expr();
         auto* raw = reinterpret_cast<uint8_t*>(const_cast<flatbuffers::String*>(expr));
         flatbuffers::WriteScalar<flatbuffers::uoffset_t>(raw, 0);  // length 0 ...
         raw[sizeof(flatbuffers::uoffset_t)] = 0;                   // ... and its terminator
         return open_bytes(std::move(*bytes));
       },
       {"graph 'main' value 3", "value 'y' size 1 has an empty symbolic expression"}},
      {"DTensorGlobalSizeNegative",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor->global_sizes[1]->literal = -4; }); },
       {"graph 'main' value 4", "value 'r' global size 1 is negative (-4)"}},
      {"DTensorGlobalSizeNegativeHint",
       ErrorCode::InvalidShape,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->global_sizes[0]->expr = "s0";
           main_value(p, 4).dtensor->global_sizes[0]->hint = -2;
         });
       },
       {"value 'r' global size 0 has a negative hint (-2)"}},
      {"DTensorGlobalRankDiffers",
       ErrorCode::InvalidShape,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->global_sizes.push_back(dim(1));
           main_value(p, 4).dtensor->global_strides.push_back(dim(1));
         });
       },
       {"graph 'main' value 4", "value 'r' has 3 global sizes for a local tensor of rank 2"}},
      {"DTensorGlobalStrideCountDiffers",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor->global_strides.pop_back(); }); },
       {"value 'r' has 2 global sizes but 1 global strides"}},
      {"DTensorGlobalStridesWithoutSizes",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor->global_sizes.clear(); }); },
       {"value 'r' has 0 global sizes but 2 global strides"}},
      {"DTensorLocalNotCoordinateZeroShard",
       ErrorCode::InvalidShape,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor->global_sizes[1]->literal = 6; }); },
       {"graph 'main' value 4", "value 'r' stores a local tensor of sizes [2, 2]",
        "shard of mesh coordinate (0, ..., 0)", "is [2, 3]"}},
      {"DTensorLocalNotCoordinateZeroStridedShard",
       ErrorCode::InvalidShape,
       [] {
         return verify_mutated([](auto& p) {
           // 6 in 2 x 2 chunks of torch.chunk (2, 2, 2, 0): coordinate 0 holds chunks 0 and 2.
           main_value(p, 4).dtensor->global_sizes[1]->literal = 6;
           main_value(p, 4).dtensor->placements[1] = fb::Placement(fb::PlacementKind::STRIDED_SHARD, fb::ReduceOp::SUM, 1, 2);
         });
       },
       {"value 'r' stores a local tensor of sizes [2, 2]", "is [2, 4]"}},
      {"ChecksumOfFlippedWeightByte",
       ErrorCode::ChecksumMismatch,
       [] {
         auto bytes = sample_bytes();
         const uint64_t segment = load_le64(bytes, 32);
         bytes.at(segment + 128 + 3) ^= 0x10;  // storage 1 starts at segment offset 128
         if (Error shallow = open_bytes(bytes); shallow.code != ErrorCode::Ok) return shallow;  // must not read weights
         return open_bytes(std::move(bytes), VerifyOptions{.deep = true});
       },
       {"storage 1", "16 bytes"}},
      {"ChecksumFieldAltered",
       ErrorCode::ChecksumMismatch,
       [] {
         return open_patched(
             [](const fb::Program& p) {
               set_struct_bytes<uint64_t>(p.storages()->Get(0)->checksum(), 8, 0x0123456789abcdefu);
             },
             VerifyOptions{.deep = true});
       },
       {"storage 0", "128 bytes"}},
      {"ValueNamedTwice",
       ErrorCode::DuplicateName,
       [] { return verify_mutated([](auto& p) { main_value(p, 7).name = "y"; }); },
       {"graph 'main' value 7", "value 'y' is named twice"}},
      {"WeightNamedTwice",
       ErrorCode::DuplicateName,
       [] { return verify_mutated([](auto& p) { p.program.weights[1]->fqn = "linear.weight"; }); },
       {"weight 1 'linear.weight'"}},
      {"GroupNamedTwice",
       ErrorCode::DuplicateName,
       [] { return verify_mutated([](auto& p) { p.program.process_groups[1]->name = "tp0"; }); },
       {"process group 1 'tp0'"}},
  };
}

std::vector<Case> graph_cases() {
  return {
      {"NodeRedefinesInput",
       ErrorCode::ValueRedefined,
       [] { return verify_mutated([](auto& p) { main_node(p, 0).outputs[0]->arg = tensor_arg(0); }); },
       {"graph 'main' node 0 'linear' result 0", "value 'x' is already defined"}},
      {"GraphInputTwice",
       ErrorCode::ValueRedefined,
       [] { return verify_mutated([](auto& p) { main_graph(p).inputs[1]->arg = tensor_arg(0); }); },
       {"graph 'main' input 1", "value 'x'"}},
      {"UseBeforeDefinition",
       ErrorCode::ValueUsedBeforeDefinition,
       [] { return verify_mutated([](auto& p) { member<fb::TensorArgT>(main_node(p, 0).inputs[0]->arg).value = 7; }); },
       {"graph 'main' node 0 'linear' argument 0", "value 'z'"}},
      {"OutputNeverDefined",
       ErrorCode::ValueUsedBeforeDefinition,
       [] { return verify_mutated([](auto& p) { body_graph(p).nodes.clear(); }); },
       {"graph 'body' output 0", "value 'd'"}},
      {"TensorArgNamesSymInt",
       ErrorCode::TypeMismatch,
       [] { return verify_mutated([](auto& p) { member<fb::TensorArgT>(main_node(p, 0).inputs[0]->arg).value = 5; }); },
       {"graph 'main' node 0 'linear' argument 0", "value 's' of kind SYM_INT"}},
      {"SymIntArgNamesTensor",
       ErrorCode::TypeMismatch,
       [] {
         return verify_mutated([](auto& p) {
           for (auto& in : main_node(p, 1).inputs) {
             if (in->name == "n") member<fb::SymIntArgT>(in->arg).value = 0;
           }
         });
       },
       {"node 1 'relu' argument 6", "value 'x' of kind TENSOR"}},
      {"NodeOutputIsConstant",
       ErrorCode::InvalidOutputArgument,
       [] { return verify_mutated([](auto& p) { main_node(p, 0).outputs[0]->arg = int_arg(3); }); },
       {"graph 'main' node 0 'linear' result 0", "IntArg"}},
      {"TensorWithoutMeta",
       ErrorCode::MissingTypeInfo,
       [] { return verify_mutated([](auto& p) { main_value(p, 3).tensor.reset(); }); },
       {"graph 'main' value 3", "value 'y' has no tensor metadata"}},
      {"DTensorWithoutSpec",
       ErrorCode::MissingTypeInfo,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor.reset(); }); },
       {"graph 'main' value 4", "value 'r'"}},
      {"SubgraphCallsItself",
       ErrorCode::GraphRecursion,
       [] {
         return verify_mutated([](auto& p) { body_graph(p).nodes[0]->inputs.push_back(named("loop", graph_arg(1))); });
       },
       {"graph 1 reaches graph 1"}},
      {"SubgraphsCallEachOther",
       ErrorCode::GraphRecursion,
       [] {
         return verify_mutated([](auto& p) { body_graph(p).nodes[0]->inputs.push_back(named("back", graph_arg(0))); });
       },
       {"recursive"}},
      {"GraphValueNamesItsOwnGraph",
       ErrorCode::GraphRecursion,
       [] { return verify_mutated([](auto& p) { add_body_value(p, "self", fb::ValueKind::GRAPH).graph = 1; }); },
       {"graph 1 reaches graph 1"}},
      {"GraphValueClosesCycle",  // main calls body through a GraphArg; body names main by a value
       ErrorCode::GraphRecursion,
       [] { return verify_mutated([](auto& p) { add_body_value(p, "caller", fb::ValueKind::GRAPH).graph = 0; }); },
       {"graph 1 reaches graph 0", "recursive"}},
      // Index fields of another kind are followed by readers that walk every field (the structure
      // hash would recurse into graph 0 from inside graph 0).
      {"TensorValueNamesGraph",
       ErrorCode::TypeMismatch,
       [] { return verify_mutated([](auto& p) { main_value(p, 3).graph = 0; }); },
       {"graph 'main' value 3", "value 'y' of kind TENSOR carries graph 0"}},
      {"TensorValueNamesProcessGroup",
       ErrorCode::TypeMismatch,
       [] { return verify_mutated([](auto& p) { main_value(p, 7).process_group = 1; }); },
       {"graph 'main' value 7", "value 'z' of kind TENSOR carries process group 1"}},
      {"TensorValueCarriesDTensorSpec",
       ErrorCode::TypeMismatch,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 3).dtensor = std::make_unique<fb::DTensorSpecT>();
           main_value(p, 3).dtensor->mesh = 7;
         });
       },
       {"value 'y' of kind TENSOR carries a DTensorSpec"}},
      {"ProcessGroupValueNamesGraph",
       ErrorCode::TypeMismatch,
       [] { return verify_mutated([](auto& p) { main_value(p, 6).graph = 1; }); },
       {"value 'pg' of kind PROCESS_GROUP carries graph 1"}},
      {"ArgumentMapsNestTooDeep",
       ErrorCode::GraphRecursion,
       [] {
         return verify_mutated([](auto& p) {
           fb::ArgumentUnion arg = int_arg(1);
           for (int depth = 0; depth < 20; ++depth) {
             fb::StringToArgumentArgT map;
             auto entry = std::make_unique<fb::StringToArgumentEntryT>();
             entry->key = "k";
             entry->value = std::move(arg);
             map.entries.push_back(std::move(entry));
             arg = fb::ArgumentUnion();
             arg.Set(std::move(map));
           }
           main_node(p, 0).inputs.push_back(named("deep", std::move(arg)));
         });
       },
       {"graph 'main' node 0 'linear' argument 3", "deeper than 16"}},
  };
}

std::vector<Case> signature_cases() {
  return {
      {"EntryPointWithoutSignature",
       ErrorCode::SignatureMissing,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature.reset(); }); },
       {"graph 'main'", "entry point has no signature"}},
      {"InputSpecMissing",
       ErrorCode::SignatureInputMismatch,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature->inputs.pop_back(); }); },
       {"graph 'main' signature", "4 input specs for 5 graph inputs"}},
      {"InputSpecNamesOtherValue",
       ErrorCode::SignatureInputMismatch,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature->inputs[2]->value = 1; }); },
       {"graph 'main' signature 2", "names value 1 but graph input 2 is value 2"}},
      {"ParameterWithoutTarget",
       ErrorCode::SignatureInputMismatch,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature->inputs[1]->target.clear(); }); },
       {"graph 'main' signature 1", "PARAMETER"}},
      {"OutputSpecMissing",
       ErrorCode::SignatureOutputMismatch,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature->outputs.clear(); }); },
       {"graph 'main' signature", "0 output specs for 1 graph outputs"}},
      {"OutputSpecNamesOtherValue",
       ErrorCode::SignatureOutputMismatch,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature->outputs[0]->value = 7; }); },
       {"graph 'main' signature 0", "names value 7 but graph output 0 is value 8"}},
      {"BufferMutationWithoutTarget",
       ErrorCode::SignatureOutputMismatch,
       [] {
         return verify_mutated(
             [](auto& p) { main_graph(p).signature->outputs[0]->kind = fb::OutputKind::BUFFER_MUTATION; });
       },
       {"graph 'main' signature 0", "BUFFER_MUTATION"}},
      {"ConstantInputWithoutConstant",
       ErrorCode::SignatureInputMismatch,
       [] { return verify_mutated([](auto& p) { add_constant_input(p, nullptr); }); },
       {"graph 'main' signature 5", "CONSTANT_INPUT input spec has no constant"}},
      {"ConstantInputWithEmptyConstant",  // a holder whose union holds nothing (NoneArg is None)
       ErrorCode::SignatureInputMismatch,
       [] { return verify_mutated([](auto& p) { add_constant_input(p, std::make_unique<fb::ArgumentHolderT>()); }); },
       {"graph 'main' signature 5", "CONSTANT_INPUT input spec has no constant"}},
      {"UserInputCarriesConstant",
       ErrorCode::SignatureInputMismatch,
       [] {
         return verify_mutated([](auto& p) { main_graph(p).signature->inputs[0]->constant = holder(int_arg(1)); });
       },
       {"graph 'main' signature 0", "USER_INPUT input spec carries a constant"}},
      {"NonPersistentParameter",
       ErrorCode::SignatureInputMismatch,
       [] { return verify_mutated([](auto& p) { main_graph(p).signature->inputs[1]->persistent = false; }); },
       {"graph 'main' signature 1", "PARAMETER input spec is marked non-persistent"}},
  };
}

std::vector<Case> distributed_cases() {
  return {
      {"MeshShapeDisagreesWithRanks",
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) {
              p.program.meshes[0]->shape = {2, 3};
            }); },
       {"mesh 0 'dp_tp'", "6 ranks but 4 are listed"}},
      {"MeshShapeEmpty",
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) { p.program.meshes[0]->shape.clear(); }); },
       {"mesh 0 'dp_tp'", "shape is empty"}},
      {"MeshExtentZero",
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) {
              p.program.meshes[0]->shape = {4, 0};
            }); },
       {"mesh 0 'dp_tp'", "dimension 1 has extent 0"}},
      {"MeshExtentOverflows",
       ErrorCode::InvalidMesh,
       [] {
         return verify_mutated([](auto& p) { p.program.meshes[0]->shape = {int64_t{1} << 40, int64_t{1} << 40}; });
       },
       {"mesh 0 'dp_tp'", "dimension 1"}},
      {"MeshDimNamesCount",
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) { p.program.meshes[0]->dim_names = {"dp"}; }); },
       {"mesh 0 'dp_tp'", "1 dim names for 2 dimensions"}},
      {"MeshDimNamesRepeated",  // torch's DeviceMesh refuses them: a placement by name is ambiguous
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) { p.program.meshes[0]->dim_names = {"tp", "tp"}; }); },
       {"mesh 0 'dp_tp'", "dim name 'tp' names two dimensions"}},
      {"MeshTooManyDims",  // planning is linear in ranks x dims per dim: both are capped
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) {
              p.program.meshes[0]->shape = std::vector<int64_t>(17, 1);
              p.program.meshes[0]->dim_names.clear();
            }); },
       {"mesh 0 'dp_tp'", "has 17 dimensions; at most 16 are supported"}},
      {"MeshTooManyRanks",
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) { p.program.meshes[0]->shape = {int64_t{1} << 21, 1}; }); },
       {"mesh 0 'dp_tp'", "holds 2097152 ranks; at most 1048576 are supported"}},
      {"MeshRankRepeated",
       ErrorCode::InvalidMesh,
       [] { return verify_mutated([](auto& p) {
              p.program.meshes[0]->ranks = {0, 1, 2, 1};
            }); },
       {"mesh 0 'dp_tp'", "rank 1 at position 3"}},
      {"PlacementDimOutOfRange",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[1] = fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, 2, 0);
         });
       },
       {"graph 'main' value 4", "value 'r' placement 1", "shard dim 2", "rank 2"}},
      {"PlacementNegativeDim",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[1] = fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, -1, 0);
         });
       },
       {"value 'r' placement 1", "shard dim -1"}},
      {"PlacementCountVsMeshDims",
       ErrorCode::InvalidPlacement,
       [] { return verify_mutated([](auto& p) { main_value(p, 4).dtensor->placements.pop_back(); }); },
       {"value 'r'", "1 placements for a 2-D mesh"}},
      {"StridedShardSplitFactor",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[1] =
               fb::Placement(fb::PlacementKind::STRIDED_SHARD, fb::ReduceOp::SUM, 1, 0);
         });
       },
       {"value 'r' placement 1", "split factor 0"}},
      {"ReplicateWithReduceOp",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[0] =
               fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::AVG, 0, 0);
         });
       },
       {"graph 'main' value 4", "value 'r' placement 0", "REPLICATE placement carries reduce op 1"}},
      {"ShardWithReduceOp",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[1] =
               fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::MAXIMUM, 1, 0);
         });
       },
       {"value 'r' placement 1", "SHARD placement carries reduce op 4"}},
      {"ShardWithUnknownReduceOp",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[1] =
               fb::Placement(fb::PlacementKind::SHARD, raw_enum<fb::ReduceOp>(77), 1, 0);
         });
       },
       {"value 'r' placement 1", "reduce op 77"}},
      {"ReplicateWithDim",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[0] =
               fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::SUM, 1, 0);
         });
       },
       {"value 'r' placement 0", "REPLICATE placement carries dim 1"}},
      {"PartialWithDim",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[0] =
               fb::Placement(fb::PlacementKind::PARTIAL, fb::ReduceOp::AVG, 1, 0);
         });
       },
       {"value 'r' placement 0", "PARTIAL placement carries dim 1"}},
      {"ShardWithSplitFactor",
       ErrorCode::InvalidPlacement,
       [] {
         return verify_mutated([](auto& p) {
           main_value(p, 4).dtensor->placements[1] = fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, 1, 2);
         });
       },
       {"value 'r' placement 1", "SHARD placement carries split factor 2"}},
      {"GroupRankNotInMesh",
       ErrorCode::InvalidProcessGroup,
       [] { return verify_mutated([](auto& p) {
              p.program.process_groups[0]->ranks = {0, 5};
            }); },
       {"process group 0 'tp0'", "rank 5 is not in its mesh"}},
      {"MeshGroupWithoutRanks",
       ErrorCode::InvalidProcessGroup,
       [] { return verify_mutated([](auto& p) { p.program.process_groups[0]->ranks.clear(); }); },
       {"process group 0 'tp0'", "no ranks"}},
      {"GroupRankRepeated",
       ErrorCode::InvalidProcessGroup,
       [] { return verify_mutated([](auto& p) {
              p.program.process_groups[1]->ranks = {0, 1, 1, 3};
            }); },
       {"process group 1 'world'", "rank 1 at position 2"}},
      {"GroupMeshDimOutOfRange",
       ErrorCode::InvalidProcessGroup,
       [] { return verify_mutated([](auto& p) { p.program.process_groups[0]->mesh_dim = 2; }); },
       {"process group 0 'tp0'", "mesh dimension 2 is outside a 2-D mesh"}},
      {"GroupMeshDimWithoutMesh",
       ErrorCode::InvalidProcessGroup,
       [] { return verify_mutated([](auto& p) { p.program.process_groups[1]->mesh_dim = 0; }); },
       {"process group 1 'world'", "no mesh"}},
      {"GroupSizeVsMeshExtent",
       ErrorCode::InvalidProcessGroup,
       [] { return verify_mutated([](auto& p) {
              p.program.process_groups[0]->ranks = {0, 1, 2};
            }); },
       {"process group 0 'tp0'", "3 ranks for a mesh dimension of extent 2"}},
  };
}

std::vector<Case> json_cases() {
  auto parse = [](std::string text) {
    auto parsed = program_from_json(text);
    return parsed.ok() ? Error{} : parsed.error();
  };
  return {
      {"JsonSyntax", ErrorCode::JsonParse, [parse] { return parse("{ \"producer\": "); }, {}},
      {"JsonWrongFieldType", ErrorCode::JsonParse, [parse] { return parse("{ \"graphs\": 3 }"); }, {}},
      {"JsonUnknownField",
       ErrorCode::JsonParse,
       [parse] { return parse("{ \"no_such_field\": 1 }"); },
       {"no_such_field"}},
      // FlatBuffers' parser accepts a union tag without its value; the object API would then hold
      // a null member that copying or serializing the program dereferences.
      {"JsonSchemaMajorUnknown",
       ErrorCode::UnsupportedSchemaVersion,
       [parse] { return parse(R"({ "schema_version": { "major": 99, "minor": 0 }, "graphs": [] })"); },
       {"schema version 99.0", "major version 1"}},
      {"JsonWithoutSchemaVersion",
       ErrorCode::MissingField,
       [parse] { return parse(R"({ "graphs": [] })"); },
       {"schema_version"}},
      {"JsonInlineDataNotAByte",
       ErrorCode::JsonParse,
       [parse] {
         return parse(R"({ "schema_version": { "major": 1, "minor": 0 },
                           "storages": [ { "size": 2, "inline_data": [1, 256] } ] })");
       },
       {"storage 0 inline_data", "expected a byte value 0..255"}},
      {"JsonUnionTagWithoutValue",
       ErrorCode::MissingField,
       [parse] {
         return parse(R"({ "graphs": [ { "name": "g", "inputs": [ { "arg_type": "TensorArg" } ] } ],
                          "entry_points": [ 0 ] })");
       },
       {"input 0"}},
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> all;
  for (auto group : {container_cases(), program_cases(), index_cases(), enum_cases(), weight_cases(), graph_cases(),
                     signature_cases(), distributed_cases(), json_cases()}) {
    for (auto& c : group) all.push_back(std::move(c));
  }
  return all;
}

// ---------------------------------------------------------------------------------------------
// Tests

TEST(VerifySample, SampleProgramIsValid) {
  auto file = serialize_and_open(make_sample_program());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(file->program().graphs()->size(), 2u);
  EXPECT_EQ(file->program().storages()->size(), 2u);
  auto deep = serialize_and_open(make_sample_program(), VerifyOptions{.deep = true});
  ASSERT_TRUE(deep.ok()) << deep.error().to_string();
}

// The tools the cases use to damage files must leave an undamaged file valid.
TEST(VerifySample, UnchangedPatchAndAssemblyStayValid) {
  EXPECT_EQ(open_patched([](const fb::Program&) {}).code, ErrorCode::Ok);
  EXPECT_EQ(open_patched([](const fb::Program& p) {
              set_scalar<uint64_t>(p.storages()->Get(1), fb::Storage::VT_OFFSET, 128);
            }).code,
            ErrorCode::Ok);
  auto file = serialize_and_open(make_sample_program());
  ASSERT_TRUE(file.ok());
  const auto segment = file->file_bytes().subspan(file->layout().segment_offset, file->layout().segment_size);
  Error assembled = open_bytes(assemble(unpack_program(*file).program, segment), VerifyOptions{.deep = true});
  EXPECT_EQ(assembled.code, ErrorCode::Ok) << assembled.to_string();
}

// The hand-built program behind the misaligned-vector cases is valid when its vectors are
// aligned, and the misaligned ones really start 4 bytes off.
TEST(VerifySample, HandBuiltProgramIsValidAndMisalignsOnRequest) {
  Error aligned = open_bytes(hand_built(false, false));
  EXPECT_EQ(aligned.code, ErrorCode::Ok) << aligned.to_string();
  auto bytes = hand_built(true, true);
  const auto* program = fb::GetProgram(bytes.data() + kContainerHeaderSize);
  const auto* node = program->graphs()->Get(0)->nodes()->Get(0);
  const auto* ints = static_cast<const fb::IntListArg*>(node->inputs()->Get(0)->arg());
  EXPECT_EQ(ints->values()->size(), 3u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ints->values()->Data()) % 8, 4u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(program->meshes()->Get(0)->shape()->Data()) % 8, 4u);
}

TEST(VerifySample, JsonFormRoundTrips) {
  auto file = serialize_and_open(make_sample_program());
  ASSERT_TRUE(file.ok());
  auto json = program_to_json(*file);
  ASSERT_TRUE(json.ok()) << json.error().to_string();
  auto parsed = program_from_json(*json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  auto reopened = serialize_and_open(*parsed, VerifyOptions{.deep = true});
  ASSERT_TRUE(reopened.ok()) << reopened.error().to_string();
  EXPECT_TRUE(std::equal(file->file_bytes().begin(), file->file_bytes().end(), reopened->file_bytes().begin(),
                         reopened->file_bytes().end()));
}

// The rules the signature, placement and shape cases break leave these valid, so those cases fail
// for the one thing they change.
TEST(VerifySample, AcceptsWhatTheNewerRulesAllow) {
  auto accepted = [](const char* what, const std::function<void(ProgramWithWeights&)>& mutate) {
    const Error error = verify_mutated(mutate);
    EXPECT_EQ(error.code, ErrorCode::Ok) << what << ": " << error.to_string();
  };
  accepted("constant input with its constant", [](auto& p) { add_constant_input(p, holder(int_arg(2))); });
  accepted("constant input that is None", [](auto& p) {
    fb::ArgumentUnion none;
    none.Set(fb::NoneArgT{});
    add_constant_input(p, holder(std::move(none)));
  });
  accepted("non-persistent buffer", [](auto& p) {
    main_graph(p).signature->inputs[1]->kind = fb::InputKind::BUFFER;
    main_graph(p).signature->inputs[1]->persistent = false;
  });
  // Weights may be supplied apart from the program (a bare torch.export JSON has none); the
  // executor reports a target without data when it binds weights.
  accepted("parameters without weights in the file", [](auto& p) {
    p.program.weights.clear();
    p.program.storages.clear();
    p.storages.clear();
  });
  accepted("partial placement with its reduce op", [](auto& p) {
    main_value(p, 4).dtensor->placements[0] = fb::Placement(fb::PlacementKind::PARTIAL, fb::ReduceOp::PREMUL_SUM, 0, 0);
  });
  accepted("symbolic global size with a hint", [](auto& p) {
    main_value(p, 4).dtensor->global_sizes[0]->expr = "s0";
    main_value(p, 4).dtensor->global_sizes[0]->hint = 2;
  });
  accepted("uneven shards: the local tensor is coordinate 0's, the largest", [](auto& p) {
    main_value(p, 4).dtensor->global_sizes[1]->literal = 3;  // chunks 2, 1
  });
  accepted("strided shard of coordinate 0", [](auto& p) {
    // 4 in 2 x 2 chunks of 1: coordinate 0 holds chunks 0 and 2.
    main_value(p, 4).dtensor->placements[1] = fb::Placement(fb::PlacementKind::STRIDED_SHARD, fb::ReduceOp::SUM, 1, 2);
  });
  accepted("DTensor without a recorded global shape", [](auto& p) {
    main_value(p, 4).dtensor->global_sizes.clear();
    main_value(p, 4).dtensor->global_strides.clear();
  });
  accepted("graph value naming a subgraph", [](auto& p) {
    auto v = std::make_unique<fb::ValueT>();
    v->name = "callee";
    v->kind = fb::ValueKind::GRAPH;
    v->graph = 1;
    main_graph(p).values.push_back(std::move(v));
  });
}

class VerifyErrorTest : public ::testing::TestWithParam<Case> {};

TEST_P(VerifyErrorTest, ReportsCodeAndPlace) {
  const Case& c = GetParam();
  const Error error = c.run();
  ASSERT_EQ(error.code, c.code) << "expected " << error_id(c.code) << " " << error_name(c.code) << ", got "
                                << error.to_string();
  for (const auto& place : c.places) {
    EXPECT_NE(error.message.find(place), std::string::npos)
        << "message does not name '" << place << "': " << error.message;
  }
}

INSTANTIATE_TEST_SUITE_P(All, VerifyErrorTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Codes only the torch.export importer (serializer/torch_export) reports; its own tests trigger
// them from .pt2 archives and ExportedProgram JSON.
bool reported_by_torch_import(std::string_view name) {
  static const std::set<std::string_view> names = {"TorchSchemaVersion", "UnmappedEnumValue", "ArchiveEntryMissing",
                                                   "ArchiveCorrupt",     "PickledPayload",    "WeightsConfigMismatch",
                                                   "UnknownValueName",   "LegacyTorchArchive", "PickleGlobalRefused",
                                                   "PickleMalformed",    "PickleLimit",       "PickleStorageInvalid"};
  return names.count(name) > 0;
}

// Codes 10xx are the executor's (tests/executor: execution_plan_test, executor_test, npy_test,
// control_flow_test, collective_kernels_test trigger them); a verified file never needs them.
bool reported_by_executor(ErrorCode code) { return static_cast<int>(code) >= 1000; }

// Every code but Ok has a case above; a new code needs a case (and a line in docs/ERRORS.md), or,
// when only the torch.export importer reports it, a place in the list above.
TEST(VerifyErrorCoverage, EveryErrorCodeIsTriggered) {
  std::set<ErrorCode> covered;
  for (const auto& c : all_cases()) covered.insert(c.code);
  std::vector<ErrorCode> codes;
#define NRT_LIST_CODE(name, number, summary) codes.push_back(ErrorCode::name);
  NRT_ERROR_CODES(NRT_LIST_CODE)
#undef NRT_LIST_CODE
  for (ErrorCode code : codes) {
    if (code == ErrorCode::Ok || reported_by_torch_import(error_name(code)) || reported_by_executor(code)) continue;
    EXPECT_TRUE(covered.count(code)) << "no case triggers " << error_id(code) << " " << error_name(code);
  }
}

}  // namespace
}  // namespace nrt
