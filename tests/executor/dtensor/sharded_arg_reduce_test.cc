// argmax/argmin/max/min over a dim sharded across the world (sharded_arg_reduce.h), under mpirun
// with 1 to 4 ranks: every rank's answer must equal the unsharded one computed here by torch's
// rules (first occurrence on ties, across shards too; NaN first, for the minimum as well; bool as
// integers), for f32 with NaNs, int64 beyond 2^53 (a double compare would tie them), f16 and bool,
// shards that are uneven or empty (a dim of 1 or 5 over 4 ranks), keepdim, and dim 0 or 1.
// Linked into distributed_test_bin beside redistribute_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "executor/dtensor/shard_layout.h"
#include "executor/dtensor/sharded_arg_reduce.h"
#include "executor/comm/mpi_process_group.h"
#include "executor/runtime/reduced_float.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::dist {
namespace {

using exec::Tensor;

std::shared_ptr<exec::ProcessGroup> world_group() {
  static std::shared_ptr<exec::ProcessGroup> group = [] {
    auto world = exec::mpi_world();
    std::vector<int32_t> ranks;
    for (int r = 0; r < world->size; ++r) ranks.push_back(r);
    return *exec::create_mpi_process_group("arg_reduce_world", ranks, 900);
  }();
  return group;
}

// Element (i, j) of the test pattern as a double: ties and NaNs at fixed places.
double pattern(int64_t i, int64_t j, int64_t extent) {
  if (i == 0) return (j % 3 == 1) ? 7.0 : 1.0;              // ties: the first 7 wins
  if (i == 1) return (j == extent - 1 || j == extent / 2) ? NAN : static_cast<double>(j);  // NaNs
  return static_cast<double>((j * 5) % 7) - 3.0;             // mixed signs, repeats
}

Tensor make(ScalarType dtype, int64_t rows, int64_t extent) {
  Tensor t = Tensor::empty(dtype, {rows, extent});
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < extent; ++j) {
      const double v = pattern(i, j, extent);
      const int64_t e = i * extent + j;
      switch (dtype) {
        case ScalarType::FLOAT32: t.data<float>()[e] = static_cast<float>(v); break;
        case ScalarType::FLOAT16: t.data<uint16_t>()[e] = exec::float_to_half(static_cast<float>(v)); break;
        case ScalarType::BOOL: t.data<uint8_t>()[e] = std::isnan(v) ? 1 : (v > 2 ? 1 : 0); break;
        case ScalarType::INT64: {
          // Values past 2^53: neighbours differ by one, which a double would not see.
          const int64_t big = (int64_t{1} << 60) + (std::isnan(v) ? 3 : static_cast<int64_t>(v) + 3);
          t.data<int64_t>()[e] = big;
          break;
        }
        default: break;
      }
    }
  }
  return t;
}

// The unsharded answer along dim 1, by torch's rules.
int64_t reference(const Tensor& t, int64_t row, bool maximum) {
  const int64_t extent = t.sizes()[1];
  int64_t best = 0;
  auto at = [&](int64_t j, bool& nan) -> long double {
    const int64_t e = row * extent + j;
    nan = false;
    switch (t.dtype()) {
      case ScalarType::FLOAT32: nan = std::isnan(t.data<float>()[e]); return t.data<float>()[e];
      case ScalarType::FLOAT16: {
        const float f = exec::half_to_float(t.data<uint16_t>()[e]);
        nan = std::isnan(f);
        return f;
      }
      case ScalarType::BOOL: return t.data<uint8_t>()[e];
      case ScalarType::INT64: return static_cast<long double>(t.data<int64_t>()[e]);
      default: return 0;
    }
  };
  bool best_nan = false;
  long double best_value = at(0, best_nan);
  for (int64_t j = 1; j < extent && !best_nan; ++j) {
    bool nan = false;
    const long double v = at(j, nan);
    if (nan || (maximum ? v > best_value : v < best_value)) {
      best = j;
      best_value = v;
      best_nan = nan;
    }
  }
  return best;
}

Tensor narrow(const Tensor& t, int64_t d, int64_t start, int64_t length) {
  std::vector<int64_t> sizes = t.sizes();
  sizes[static_cast<size_t>(d)] = length;
  return t.as_strided(sizes, t.strides(), t.storage_offset() + start * t.strides()[static_cast<size_t>(d)]);
}

TEST(ShardedArgReduce, EqualsTheUnshardedAnswer) {
  auto group = world_group();
  const int n = group->size(), r = group->rank();
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::INT64, ScalarType::FLOAT16, ScalarType::BOOL}) {
    for (int64_t extent : {1, 5, 7, 12}) {
      const Tensor global = make(dtype, 3, extent);
      const ChunkRange mine = chunk_range(extent, n, r);
      for (bool maximum : {true, false}) {
        for (bool keepdim : {false, true}) {
          // Sharded along dim 1, and (transposed) along dim 0.
          for (int64_t dim : {1, 0}) {
            Tensor g = dim == 1 ? global : global.as_strided({extent, 3}, {1, extent}, 0);
            const Tensor local = narrow(g, dim, mine.offset, mine.size);
            auto result = sharded_arg_reduce(local, dim, keepdim, maximum, mine.offset, *group);
            const std::string what = std::string(short_name(dtype)) + " extent " + std::to_string(extent) +
                                     (maximum ? " max" : " min") + (keepdim ? " keepdim" : "") + " dim " +
                                     std::to_string(dim);
            ASSERT_TRUE(result) << what << ": " << result.error().message;
            EXPECT_EQ(result->indices.numel(), 3) << what;
            EXPECT_EQ(result->indices.dim(), keepdim ? 2 : 1) << what;
            for (int64_t row = 0; row < 3; ++row) {
              const int64_t want = reference(global, row, maximum);
              EXPECT_EQ(result->indices.data<int64_t>()[row], want) << what << " row " << row;
              // The value is the element at that index, bit for bit.
              const size_t elem = global.element_size();
              EXPECT_EQ(std::memcmp(result->values.raw_data() + row * static_cast<int64_t>(elem),
                                    global.raw_data() + (row * extent + want) * static_cast<int64_t>(elem), elem),
                        0)
                  << what << " row " << row;
            }
          }
        }
      }
    }
  }
}

TEST(ShardedArgReduce, BytesSentAreTheRecordsNotTheTensor) {
  // 32k-entry vocabulary, 8 rows, f32, 2 ranks: 8 records of 12 bytes against 8 x 16k x 4 bytes.
  EXPECT_EQ(arg_reduce_bytes_sent(8, 4, 2), 8 * 12);
  EXPECT_EQ(arg_reduce_bytes_sent(8, 4, 1), 0);
}

}  // namespace
}  // namespace nrt::dist
