// MPI process groups under mpirun (run by mpi_process_group_test.sh with 2 and 3 ranks): every
// collective for every dtype and reduce op, with rank-dependent data and exact expected values,
// contiguous and strided tensors; groups over subsets and permutations of the world; the registry
// built from a program; and the errors (unsupported pairings, ranks outside the world).
//
// Every rank runs every test in the same order, so collectives match up. Rank 0 prints gtest's
// usual output; other ranks print only their failures, prefixed with their rank.
#include "executor/comm/mpi_process_group.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include "executor/runtime/reduced_float.h"
#include "executor/runtime/tensor_copy.h"
#include "core/schema_enums.h"

namespace nrt::testing {
namespace {

using exec::ProcessGroup;
using exec::Tensor;
using nrt::ScalarType;

constexpr ScalarType kDtypes[] = {ScalarType::FLOAT32, ScalarType::FLOAT64, ScalarType::FLOAT16, ScalarType::BFLOAT16,
                                  ScalarType::INT8,    ScalarType::INT16,   ScalarType::INT32,   ScalarType::INT64,
                                  ScalarType::UINT8,   ScalarType::BOOL};
constexpr ReduceOp kOps[] = {ReduceOp::SUM,  ReduceOp::AVG, ReduceOp::PRODUCT, ReduceOp::MINIMUM,   ReduceOp::MAXIMUM,
                             ReduceOp::BAND, ReduceOp::BOR, ReduceOp::BXOR,    ReduceOp::PREMUL_SUM};

bool is_floating(ScalarType t) {
  return t == ScalarType::FLOAT32 || t == ScalarType::FLOAT64 || t == ScalarType::FLOAT16 || t == ScalarType::BFLOAT16;
}

// The pairings the header promises.
bool supported(ScalarType dtype, ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::PRODUCT:
    case ReduceOp::MINIMUM:
    case ReduceOp::MAXIMUM: return true;
    case ReduceOp::AVG: return is_floating(dtype);
    case ReduceOp::BAND:
    case ReduceOp::BOR:
    case ReduceOp::BXOR: return !is_floating(dtype);
    default: return false;
  }
}

std::string describe(ScalarType dtype, ReduceOp op) {
  return std::string(nrt::short_name(dtype)) + " " + reduce_op_name(op);
}

// Element `i` of a contiguous tensor, as a double (every value used here is exact in it).
double load(const Tensor& t, int64_t i) {
  const uint8_t* p = t.raw_data();
  switch (t.dtype()) {
    case ScalarType::FLOAT32: return reinterpret_cast<const float*>(p)[i];
    case ScalarType::FLOAT64: return reinterpret_cast<const double*>(p)[i];
    case ScalarType::FLOAT16: return exec::half_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case ScalarType::BFLOAT16: return exec::bfloat16_to_float(reinterpret_cast<const uint16_t*>(p)[i]);
    case ScalarType::INT8: return reinterpret_cast<const int8_t*>(p)[i];
    case ScalarType::INT16: return reinterpret_cast<const int16_t*>(p)[i];
    case ScalarType::INT32: return reinterpret_cast<const int32_t*>(p)[i];
    case ScalarType::INT64: return static_cast<double>(reinterpret_cast<const int64_t*>(p)[i]);
    case ScalarType::UINT8:
    case ScalarType::BOOL: return p[i];
    default: ADD_FAILURE() << "load: dtype"; return 0;
  }
}

void store(const Tensor& t, int64_t i, double v) {
  uint8_t* p = t.raw_data();
  switch (t.dtype()) {
    case ScalarType::FLOAT32: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); return;
    case ScalarType::FLOAT64: reinterpret_cast<double*>(p)[i] = v; return;
    case ScalarType::FLOAT16: reinterpret_cast<uint16_t*>(p)[i] = exec::float_to_half(static_cast<float>(v)); return;
    case ScalarType::BFLOAT16:
      reinterpret_cast<uint16_t*>(p)[i] = exec::float_to_bfloat16(static_cast<float>(v));
      return;
    case ScalarType::INT8: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); return;
    case ScalarType::INT16: reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); return;
    case ScalarType::INT32: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); return;
    case ScalarType::INT64: reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); return;
    case ScalarType::UINT8: p[i] = static_cast<uint8_t>(v); return;
    case ScalarType::BOOL: p[i] = v != 0 ? 1 : 0; return;
    default: ADD_FAILURE() << "store: dtype"; return;
  }
}

// A small value of `dtype` determined by `seed` (>= 0): 0/1 for bool, 1..11 for uint8, -5..5
// otherwise; exact in every dtype, and products of three stay within int8.
double small_value(ScalarType dtype, int64_t seed) {
  if (dtype == ScalarType::BOOL) return static_cast<double>(seed % 2);
  if (dtype == ScalarType::UINT8) return static_cast<double>(seed % 5 + 1);
  return static_cast<double>(seed % 5 - 2);
}

// Rank `rank`'s element i in the reduction tests. Bool takes every combination over the ranks.
double reduction_input(ScalarType dtype, int rank, int64_t i) {
  if (dtype == ScalarType::BOOL) return static_cast<double>((i >> rank) & 1);
  return small_value(dtype, rank * 3 + i);
}

// The reduction over ranks 0..size-1 of reduction_input(., r, i), exactly as the group defines it.
double reduced(ScalarType dtype, ReduceOp op, int size, int64_t i) {
  if (dtype == ScalarType::BOOL) {
    bool any = false, all = true, odd = false;
    for (int r = 0; r < size; ++r) {
      const bool v = reduction_input(dtype, r, i) != 0;
      any = any || v;
      all = all && v;
      odd = odd != v;
    }
    if (op == ReduceOp::SUM || op == ReduceOp::MAXIMUM || op == ReduceOp::BOR) return any;
    if (op == ReduceOp::BXOR) return odd;
    return all;  // PRODUCT, MINIMUM, BAND
  }
  if (is_floating(dtype)) {
    // Exact in every floating dtype (small integers), in IEEE arithmetic: 0 * -2 is -0.
    double acc = reduction_input(dtype, 0, i);
    for (int r = 1; r < size; ++r) {
      const double v = reduction_input(dtype, r, i);
      switch (op) {
        case ReduceOp::SUM:
        case ReduceOp::AVG: acc += v; break;
        case ReduceOp::PRODUCT: acc *= v; break;
        case ReduceOp::MINIMUM: acc = std::min(acc, v); break;
        case ReduceOp::MAXIMUM: acc = std::max(acc, v); break;
        default: break;
      }
    }
    if (op != ReduceOp::AVG) return acc;
    // AVG divides the sum in the dtype's compute type: f64 for f64, f32 otherwise.
    if (dtype == ScalarType::FLOAT64) return acc / size;
    return static_cast<double>(static_cast<float>(acc) / static_cast<float>(size));
  }
  auto value = [&](int r) { return static_cast<int64_t>(reduction_input(dtype, r, i)); };
  int64_t acc = value(0);
  for (int r = 1; r < size; ++r) {
    switch (op) {
      case ReduceOp::SUM: acc += value(r); break;
      case ReduceOp::PRODUCT: acc *= value(r); break;
      case ReduceOp::MINIMUM: acc = std::min(acc, value(r)); break;
      case ReduceOp::MAXIMUM: acc = std::max(acc, value(r)); break;
      case ReduceOp::BAND: acc &= value(r); break;
      case ReduceOp::BOR: acc |= value(r); break;
      case ReduceOp::BXOR: acc ^= value(r); break;
      default: break;
    }
  }
  return static_cast<double>(acc);
}

Tensor filled(ScalarType dtype, std::vector<int64_t> sizes, const std::function<double(int64_t)>& value) {
  Tensor t = Tensor::empty(dtype, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i) store(t, i, value(i));
  return t;
}

// A tensor with `sizes` whose memory is laid out transposed (last two dims swapped), so that it is
// not contiguous; holds the same row-major values as `dense`.
Tensor strided_like(const Tensor& dense) {
  std::vector<int64_t> sizes = dense.sizes();
  const size_t n = sizes.size();
  std::vector<int64_t> swapped = sizes;
  std::swap(swapped[n - 1], swapped[n - 2]);
  Tensor backing = Tensor::empty(dense.dtype(), swapped);
  std::vector<int64_t> strides = backing.strides();
  std::swap(strides[n - 1], strides[n - 2]);
  Tensor view = backing.as_strided(sizes, strides, 0);
  EXPECT_FALSE(view.is_contiguous());
  EXPECT_TRUE(exec::copy_elements(dense, view).ok());
  return view;
}

// True when `actual` holds exactly `expected`'s bytes (row-major, any layout).
::testing::AssertionResult same_elements(const Tensor& actual, const Tensor& expected) {
  if (actual.dtype() != expected.dtype() || actual.sizes() != expected.sizes()) {
    return ::testing::AssertionFailure() << actual.type_string() << " vs " << expected.type_string();
  }
  Tensor a = exec::contiguous_copy(actual);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (std::memcmp(a.raw_data() + i * a.element_size(), expected.raw_data() + i * a.element_size(),
                    a.element_size()) != 0) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << load(a, i) << ", expected " << load(expected, i);
    }
  }
  return ::testing::AssertionSuccess();
}

class MpiProcessGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto world = exec::mpi_world();
    ASSERT_TRUE(world.ok()) << world.error().to_string();
    rank_ = world->rank;
    size_ = world->size;
    auto group = exec::create_mpi_world_group("world");
    ASSERT_TRUE(group.ok()) << group.error().to_string();
    group_ = std::move(*group);
  }
  int rank_ = 0;
  int size_ = 1;
  std::shared_ptr<ProcessGroup> group_;
};

TEST_F(MpiProcessGroupTest, RunsUnderALauncherWithSeveralRanks) {
  EXPECT_TRUE(exec::detect_mpi_launcher().has_value());
  EXPECT_GE(size_, 2) << "run this under mpirun -np 2 or more";
  EXPECT_EQ(group_->rank(), rank_);
  EXPECT_EQ(group_->size(), size_);
  EXPECT_EQ(group_->backend(), "mpi");
  EXPECT_TRUE(exec::wait_for(group_->barrier()).ok());
}

// Collectives are nonblocking: the Work of a barrier rank 0 enters alone does not complete, a
// wait with a timeout gives up naming it, and the same Work completes once every rank arrived.
TEST_F(MpiProcessGroupTest, WorkWaitsWithATimeoutAndCompletesLater) {
  if (rank_ != 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto work = group_->barrier();
  ASSERT_TRUE(work.ok()) << work.error().to_string();
  if (rank_ == 0) {
    EXPECT_FALSE((*work)->test()) << "the other ranks have not arrived";
    Status early = (*work)->wait(std::chrono::milliseconds(50));
    ASSERT_FALSE(early.ok());
    EXPECT_EQ(early.error().code, ErrorCode::CollectiveFailed);
    EXPECT_NE(early.error().message.find("barrier: did not complete within 50 ms"), std::string::npos)
        << early.error().message;
  }
  EXPECT_TRUE((*work)->wait().ok());
  EXPECT_TRUE((*work)->test());
  // Two collectives in flight at once, waited for in reverse order.
  Tensor a = filled(ScalarType::FLOAT32, {1024}, [&](int64_t) { return 1.0; });
  Tensor b = filled(ScalarType::FLOAT32, {8}, [&](int64_t) { return static_cast<double>(rank_); });
  auto first = group_->all_reduce(a, ReduceOp::SUM);
  auto second = group_->all_reduce(b, ReduceOp::MAXIMUM);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE((*second)->wait().ok());
  EXPECT_TRUE((*first)->wait().ok());
  EXPECT_EQ(a.data<float>()[1023], static_cast<float>(size_));
  EXPECT_EQ(b.data<float>()[0], static_cast<float>(size_ - 1));
}

TEST_F(MpiProcessGroupTest, AllReduceEveryDtypeAndOp) {
  for (ScalarType dtype : kDtypes) {
    for (ReduceOp op : kOps) {
      SCOPED_TRACE(describe(dtype, op));
      for (bool strided : {false, true}) {
        Tensor dense = filled(dtype, {2, 4}, [&](int64_t i) { return reduction_input(dtype, rank_, i); });
        Tensor tensor = strided ? strided_like(dense) : dense;
        Status s = exec::wait_for(group_->all_reduce(tensor, op));
        if (!supported(dtype, op)) {
          ASSERT_FALSE(s.ok());
          EXPECT_NE(s.error().message.find("process group 'world'"), std::string::npos) << s.error().message;
          EXPECT_NE(s.error().message.find("all_reduce"), std::string::npos) << s.error().message;
          continue;
        }
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        Tensor expected = filled(dtype, {2, 4}, [&](int64_t i) { return reduced(dtype, op, size_, i); });
        EXPECT_TRUE(same_elements(tensor, expected)) << (strided ? "strided" : "contiguous");
      }
    }
  }
}

TEST_F(MpiProcessGroupTest, ReduceScatterEveryDtypeAndOp) {
  const int64_t block = 6;  // output [2, 3]
  for (ScalarType dtype : kDtypes) {
    for (ReduceOp op : kOps) {
      SCOPED_TRACE(describe(dtype, op));
      for (bool strided : {false, true}) {
        Tensor input = filled(dtype, {2 * size_, 3}, [&](int64_t i) { return reduction_input(dtype, rank_, i); });
        Tensor dense_output = Tensor::empty(dtype, {2, 3});
        Tensor output = strided ? strided_like(dense_output) : dense_output;
        Status s = exec::wait_for(group_->reduce_scatter_tensor(strided ? strided_like(input) : input, output, op));
        if (!supported(dtype, op)) {
          ASSERT_FALSE(s.ok());
          EXPECT_NE(s.error().message.find("reduce_scatter_tensor"), std::string::npos) << s.error().message;
          continue;
        }
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        Tensor expected =
            filled(dtype, {2, 3}, [&](int64_t i) { return reduced(dtype, op, size_, rank_ * block + i); });
        EXPECT_TRUE(same_elements(output, expected)) << (strided ? "strided" : "contiguous");
      }
    }
  }
}

TEST_F(MpiProcessGroupTest, AllGatherEveryDtype) {
  for (ScalarType dtype : kDtypes) {
    SCOPED_TRACE(nrt::short_name(dtype));
    for (bool strided : {false, true}) {
      Tensor input = filled(dtype, {2, 3}, [&](int64_t i) { return small_value(dtype, 7 * rank_ + i); });
      Tensor dense_output = Tensor::empty(dtype, {2 * size_, 3});
      Tensor output = strided ? strided_like(dense_output) : dense_output;
      Status s = exec::wait_for(group_->all_gather_into_tensor(strided ? strided_like(input) : input, output));
      ASSERT_TRUE(s.ok()) << s.error().to_string();
      Tensor expected =
          filled(dtype, {2 * size_, 3}, [&](int64_t i) { return small_value(dtype, 7 * (i / 6) + i % 6); });
      EXPECT_TRUE(same_elements(output, expected)) << (strided ? "strided" : "contiguous");
    }
  }
}

TEST_F(MpiProcessGroupTest, BroadcastEveryDtypeFromEverySource) {
  for (ScalarType dtype : kDtypes) {
    SCOPED_TRACE(nrt::short_name(dtype));
    for (int src = 0; src < size_; ++src) {
      for (bool strided : {false, true}) {
        Tensor dense = filled(dtype, {3, 2}, [&](int64_t i) { return small_value(dtype, 3 * rank_ + i + 1); });
        Tensor tensor = strided ? strided_like(dense) : dense;
        Status s = exec::wait_for(group_->broadcast(tensor, src));
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        Tensor expected = filled(dtype, {3, 2}, [&](int64_t i) { return small_value(dtype, 3 * src + i + 1); });
        EXPECT_TRUE(same_elements(tensor, expected)) << "src " << src << (strided ? " strided" : " contiguous");
      }
    }
  }
}

// Rank s sends rank d (s + d + 1) rows of width 2; row k of that block holds cell(s, d, k, c).
double cell(ScalarType dtype, int src, int dst, int64_t k, int64_t c) {
  return small_value(dtype, 11 * src + 7 * dst + 3 * k + c);
}

TEST_F(MpiProcessGroupTest, AllToAllSingleUnevenSplitsEveryDtype) {
  std::vector<int64_t> input_splits, output_splits;
  for (int d = 0; d < size_; ++d) input_splits.push_back(rank_ + d + 1);
  for (int s = 0; s < size_; ++s) output_splits.push_back(s + rank_ + 1);
  int64_t input_rows = 0, output_rows = 0;
  for (int64_t n : input_splits) input_rows += n;
  for (int64_t n : output_splits) output_rows += n;
  for (ScalarType dtype : kDtypes) {
    SCOPED_TRACE(nrt::short_name(dtype));
    Tensor input = Tensor::empty(dtype, {input_rows, 2});
    int64_t row = 0;
    for (int d = 0; d < size_; ++d) {
      for (int64_t k = 0; k < input_splits[static_cast<size_t>(d)]; ++k, ++row) {
        for (int64_t c = 0; c < 2; ++c) store(input, row * 2 + c, cell(dtype, rank_, d, k, c));
      }
    }
    Tensor expected = Tensor::empty(dtype, {output_rows, 2});
    row = 0;
    for (int s = 0; s < size_; ++s) {
      for (int64_t k = 0; k < output_splits[static_cast<size_t>(s)]; ++k, ++row) {
        for (int64_t c = 0; c < 2; ++c) store(expected, row * 2 + c, cell(dtype, s, rank_, k, c));
      }
    }
    for (bool strided : {false, true}) {
      Tensor dense_output = Tensor::empty(dtype, {output_rows, 2});
      Tensor output = strided ? strided_like(dense_output) : dense_output;
      Status s = exec::wait_for(group_->all_to_all_single(strided ? strided_like(input) : input, output, output_splits, input_splits));
      ASSERT_TRUE(s.ok()) << s.error().to_string();
      EXPECT_TRUE(same_elements(output, expected)) << (strided ? "strided" : "contiguous");
    }
  }
}

TEST_F(MpiProcessGroupTest, AllToAllSingleWithoutSplitsUsesEqualBlocks) {
  const ScalarType dtype = ScalarType::INT32;
  Tensor input = filled(dtype, {size_, 2}, [&](int64_t i) { return 100 * rank_ + i; });  // row d goes to rank d
  Tensor output = Tensor::empty(dtype, {size_, 2});
  Status s = exec::wait_for(group_->all_to_all_single(input, output, {}, {}));
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  Tensor expected = filled(dtype, {size_, 2}, [&](int64_t i) { return 100 * (i / 2) + 2 * rank_ + i % 2; });
  EXPECT_TRUE(same_elements(output, expected));

  const std::vector<int64_t> wrong(static_cast<size_t>(size_), 2);  // sums to 2 * size, the tensor has size rows
  Status bad = exec::wait_for(group_->all_to_all_single(input, output, wrong, wrong));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("splits sum to"), std::string::npos) << bad.error().message;
}

TEST_F(MpiProcessGroupTest, ErrorsNameTheGroupAndCollective) {
  Tensor t = Tensor::empty(ScalarType::FLOAT32, {4});
  Status premul = exec::wait_for(group_->all_reduce(t, ReduceOp::PREMUL_SUM));
  ASSERT_FALSE(premul.ok());
  EXPECT_EQ(premul.error().code, ErrorCode::CollectiveFailed);
  EXPECT_NE(premul.error().message.find("process group 'world'"), std::string::npos);
  EXPECT_NE(premul.error().message.find("PREMUL_SUM"), std::string::npos);

  Status source = exec::wait_for(group_->broadcast(t, size_));
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.error().message.find("broadcast: source rank " + std::to_string(size_)), std::string::npos)
      << source.error().message;

  Tensor complex = Tensor::empty(ScalarType::COMPLEX64, {2});
  Status dtype = exec::wait_for(group_->broadcast(complex, 0));
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.error().message.find("dtype c64"), std::string::npos) << dtype.error().message;

  Tensor wrong_output = Tensor::empty(ScalarType::FLOAT32, {4});
  Status gather = exec::wait_for(group_->all_gather_into_tensor(t, wrong_output));
  ASSERT_FALSE(gather.ok());
  EXPECT_NE(gather.error().message.find("all_gather_into_tensor"), std::string::npos) << gather.error().message;

  EXPECT_TRUE(exec::wait_for(group_->barrier()).ok()) << "the group still works after refused calls";
}

TEST_F(MpiProcessGroupTest, GroupRanksFollowTheirListOrder) {
  std::vector<int32_t> reversed;
  for (int r = size_ - 1; r >= 0; --r) reversed.push_back(r);
  auto group = exec::create_mpi_process_group("reversed", reversed, 1);
  ASSERT_TRUE(group.ok()) << group.error().to_string();
  ASSERT_NE(*group, nullptr);
  EXPECT_EQ((*group)->rank(), size_ - 1 - rank_);
  Tensor mine = filled(ScalarType::INT64, {1}, [&](int64_t) { return rank_; });
  Tensor all = Tensor::empty(ScalarType::INT64, {size_});
  ASSERT_TRUE(exec::wait_for((*group)->all_gather_into_tensor(mine, all)).ok());
  Tensor expected = filled(ScalarType::INT64, {size_}, [&](int64_t i) { return size_ - 1 - i; });
  EXPECT_TRUE(same_elements(all, expected));
}

TEST_F(MpiProcessGroupTest, SubgroupsLeaveNonMembersOut) {
  const std::vector<int32_t> ends = {size_ - 1, 0};  // with 3 ranks, rank 1 is not a member
  auto group = exec::create_mpi_process_group("ends", ends, 2);
  ASSERT_TRUE(group.ok()) << group.error().to_string();
  const bool member = rank_ == 0 || rank_ == size_ - 1;
  ASSERT_EQ(*group != nullptr, member);
  if (!member) return;
  EXPECT_EQ((*group)->size(), 2);
  EXPECT_EQ((*group)->rank(), rank_ == 0 ? 1 : 0);
  Tensor t = filled(ScalarType::FLOAT32, {2}, [&](int64_t i) { return rank_ + i; });
  ASSERT_TRUE(exec::wait_for((*group)->all_reduce(t, ReduceOp::SUM)).ok());
  Tensor expected = filled(ScalarType::FLOAT32, {2}, [&](int64_t i) { return (size_ - 1) + 2 * i; });
  EXPECT_TRUE(same_elements(t, expected));
}

// A packed program holding only process groups.
struct PackedGroups {
  flatbuffers::FlatBufferBuilder builder;
  const fb::Program* program = nullptr;
};

std::unique_ptr<PackedGroups> program_with_groups(
    const std::vector<std::pair<std::string, std::vector<int32_t>>>& groups) {
  fb::ProgramT program;
  for (const auto& [name, ranks] : groups) {
    auto group = std::make_unique<fb::ProcessGroupT>();
    group->name = name;
    group->ranks = ranks;
    program.process_groups.push_back(std::move(group));
  }
  auto packed = std::make_unique<PackedGroups>();
  packed->builder.Finish(fb::Program::Pack(packed->builder, &program));
  packed->program = flatbuffers::GetRoot<fb::Program>(packed->builder.GetBufferPointer());
  return packed;
}

TEST_F(MpiProcessGroupTest, RegistryBindsTheProgramsGroupsByName) {
  auto packed = program_with_groups({{"all", {}}, {"first_two", {1, 0}}, {"last", {size_ - 1}}});
  auto registry = exec::mpi_process_registry(*packed->program);
  ASSERT_TRUE(registry.ok()) << registry.error().to_string();
  ProcessGroup* all = registry->find("all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->size(), size_);
  EXPECT_EQ(all->rank(), rank_);
  EXPECT_EQ(all->name(), "all");

  ProcessGroup* first_two = registry->find("first_two");
  ASSERT_EQ(first_two != nullptr, rank_ < 2);
  if (first_two) {
    EXPECT_EQ(first_two->size(), 2);
    EXPECT_EQ(first_two->rank(), 1 - rank_);
  }
  ProcessGroup* last = registry->find("last");
  ASSERT_EQ(last != nullptr, rank_ == size_ - 1);
  if (last) {
    EXPECT_EQ(last->size(), 1);
  }

  // The bound groups work: the world group sums every rank.
  Tensor t = filled(ScalarType::INT32, {1}, [&](int64_t) { return rank_ + 1; });
  ASSERT_TRUE(exec::wait_for(all->all_reduce(t, ReduceOp::SUM)).ok());
  EXPECT_EQ(t.data<int32_t>()[0], size_ * (size_ + 1) / 2);
}

TEST_F(MpiProcessGroupTest, RegistryRefusesARankOutsideTheWorld) {
  auto packed = program_with_groups({{"fine", {0}}, {"too_big", {0, size_}}});
  auto registry = exec::mpi_process_registry(*packed->program);
  ASSERT_FALSE(registry.ok());
  EXPECT_EQ(registry.error().code, ErrorCode::CollectiveFailed);
  const std::string& message = registry.error().message;
  EXPECT_NE(message.find("process group 'too_big' has ranks [0, " + std::to_string(size_) + "]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("the world has " + std::to_string(size_) + " ranks"), std::string::npos) << message;
  EXPECT_TRUE(exec::wait_for(group_->barrier()).ok()) << "no rank was left inside a creation";
}

// Ranks other than 0 print only their failures, prefixed with the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "rank %d: %s:%d: failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed()) {
      std::fprintf(stderr, "rank %d: FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
    }
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace nrt::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (nrt::Status s = nrt::exec::init_mpi(); !s.ok()) {
    std::fprintf(stderr, "cannot initialise MPI: %s\n", s.error().to_string().c_str());
    return 2;
  }
  auto world = nrt::exec::mpi_world();
  if (!world.ok()) return 2;
  if (world->rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new nrt::testing::RankFailurePrinter(world->rank));
  }
  return RUN_ALL_TESTS();
}
