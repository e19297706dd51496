#include "executor/comm/mpi_process_group.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <vector>

#include "executor/comm/mpi_work.h"
#include "executor/runtime/reduced_float.h"
#include "executor/runtime/tensor_copy.h"
#include "core/schema_enums.h"

namespace nrt::exec {
namespace {

std::string ranks_text(std::span<const int32_t> ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

Error rank_outside_world(const std::string& group, std::span<const int32_t> ranks, int32_t rank, int world_size) {
  std::string message = "process group '" + group + "' has ranks " + ranks_text(ranks) + " but the world has " +
                        std::to_string(world_size) + (world_size == 1 ? " rank" : " ranks") + ": rank " +
                        std::to_string(rank) + " is outside it";
  int32_t highest = 0;
  for (int32_t r : ranks) highest = std::max(highest, r);
  if (rank >= 0) message += " (the group needs a launcher with at least " + std::to_string(highest + 1) + " ranks)";
  return make_error(ErrorCode::CollectiveFailed, std::move(message));
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

// ---- f16 / bf16 reductions: user-defined ops computing in f32 ----------------------------------

enum class Combine { kSum, kProduct, kMin, kMax };

template <bool kBFloat16>
float decode(uint16_t bits) {
  return kBFloat16 ? bfloat16_to_float(bits) : half_to_float(bits);
}

template <bool kBFloat16>
uint16_t encode(float value) {
  return kBFloat16 ? float_to_bfloat16(value) : float_to_half(value);
}

// MPI_User_function: inout[i] = in[i] (op) inout[i].
template <bool kBFloat16, Combine kCombine>
void reduce_16bit_floats(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) {
    const float x = decode<kBFloat16>(a[i]);
    const float y = decode<kBFloat16>(b[i]);
    float r = 0;
    if constexpr (kCombine == Combine::kSum) r = x + y;
    if constexpr (kCombine == Combine::kProduct) r = x * y;
    if constexpr (kCombine == Combine::kMin) r = y < x ? y : x;
    if constexpr (kCombine == Combine::kMax) r = y > x ? y : x;
    b[i] = encode<kBFloat16>(r);
  }
}

// Created by init_mpi, after MPI_Init; index [bf16][combine].
MPI_Op g_16bit_ops[2][4];

template <bool kBFloat16>
int create_16bit_ops() {
  MPI_Op* ops = g_16bit_ops[kBFloat16 ? 1 : 0];
  int rc = MPI_Op_create(&reduce_16bit_floats<kBFloat16, Combine::kSum>, 1, &ops[0]);
  if (rc == MPI_SUCCESS) rc = MPI_Op_create(&reduce_16bit_floats<kBFloat16, Combine::kProduct>, 1, &ops[1]);
  if (rc == MPI_SUCCESS) rc = MPI_Op_create(&reduce_16bit_floats<kBFloat16, Combine::kMin>, 1, &ops[2]);
  if (rc == MPI_SUCCESS) rc = MPI_Op_create(&reduce_16bit_floats<kBFloat16, Combine::kMax>, 1, &ops[3]);
  return rc;
}

// ---- dtypes and reductions ---------------------------------------------------------------------

enum class Family { kFloating, kReducedFloat, kIntegral, kBool };

struct WireType {
  MPI_Datatype type;
  Family family;
};

std::optional<WireType> wire_type(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::FLOAT32: return WireType{MPI_FLOAT, Family::kFloating};
    case ScalarType::FLOAT64: return WireType{MPI_DOUBLE, Family::kFloating};
    case ScalarType::FLOAT16:
    case ScalarType::BFLOAT16: return WireType{MPI_UINT16_T, Family::kReducedFloat};
    case ScalarType::INT8: return WireType{MPI_INT8_T, Family::kIntegral};
    case ScalarType::INT16: return WireType{MPI_INT16_T, Family::kIntegral};
    case ScalarType::INT32: return WireType{MPI_INT32_T, Family::kIntegral};
    case ScalarType::INT64: return WireType{MPI_INT64_T, Family::kIntegral};
    case ScalarType::UINT8: return WireType{MPI_UINT8_T, Family::kIntegral};
    // torch's unsigned dtypes past uint8 (the stateless random keys are uint64).
    case ScalarType::UINT16: return WireType{MPI_UINT16_T, Family::kIntegral};
    case ScalarType::UINT32: return WireType{MPI_UINT32_T, Family::kIntegral};
    case ScalarType::UINT64: return WireType{MPI_UINT64_T, Family::kIntegral};
    case ScalarType::BOOL: return WireType{MPI_UINT8_T, Family::kBool};  // torch bools are bytes 0/1
    default: return std::nullopt;
  }
}

// The MPI op reducing `dtype` by `op`; AVG reduces by the sum and divides afterwards.
std::optional<MPI_Op> mpi_reduction(ScalarType dtype, Family family, ReduceOp op) {
  using R = ReduceOp;
  switch (family) {
    case Family::kFloating:
      switch (op) {
        case R::SUM:
        case R::AVG: return MPI_SUM;
        case R::PRODUCT: return MPI_PROD;
        case R::MINIMUM: return MPI_MIN;
        case R::MAXIMUM: return MPI_MAX;
        default: return std::nullopt;
      }
    case Family::kReducedFloat: {
      const MPI_Op* ops = g_16bit_ops[dtype == ScalarType::BFLOAT16 ? 1 : 0];
      switch (op) {
        case R::SUM:
        case R::AVG: return ops[0];
        case R::PRODUCT: return ops[1];
        case R::MINIMUM: return ops[2];
        case R::MAXIMUM: return ops[3];
        default: return std::nullopt;
      }
    }
    case Family::kIntegral:
      switch (op) {
        case R::SUM: return MPI_SUM;
        case R::PRODUCT: return MPI_PROD;
        case R::MINIMUM: return MPI_MIN;
        case R::MAXIMUM: return MPI_MAX;
        case R::BAND: return MPI_BAND;
        case R::BOR: return MPI_BOR;
        case R::BXOR: return MPI_BXOR;
        default: return std::nullopt;
      }
    case Family::kBool:
      // Bytes holding 0 or 1: max is a logical or, min a logical and (torch's NCCL mapping).
      switch (op) {
        case R::SUM:
        case R::MAXIMUM:
        case R::BOR: return MPI_MAX;
        case R::PRODUCT:
        case R::MINIMUM:
        case R::BAND: return MPI_MIN;
        case R::BXOR: return MPI_BXOR;
        default: return std::nullopt;
      }
  }
  return std::nullopt;
}

// Divides every element of the contiguous buffer by `divisor` (AVG after a SUM).
void divide_elements(void* data, int64_t count, ScalarType dtype, int divisor) {
  switch (dtype) {
    case ScalarType::FLOAT32: {
      auto* p = static_cast<float*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] /= static_cast<float>(divisor);
      return;
    }
    case ScalarType::FLOAT64: {
      auto* p = static_cast<double*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] /= static_cast<double>(divisor);
      return;
    }
    case ScalarType::FLOAT16: {
      auto* p = static_cast<uint16_t*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] = float_to_half(half_to_float(p[i]) / static_cast<float>(divisor));
      return;
    }
    case ScalarType::BFLOAT16: {
      auto* p = static_cast<uint16_t*>(data);
      for (int64_t i = 0; i < count; ++i) {
        p[i] = float_to_bfloat16(bfloat16_to_float(p[i]) / static_cast<float>(divisor));
      }
      return;
    }
    default: return;  // mpi_reduction admits AVG for floating dtypes only
  }
}

// A contiguous buffer for a tensor a collective reads or writes: the tensor itself when it is
// contiguous, else a staging copy (holding the tensor's values when `load`), which finish()
// copies back.
class Staged {
 public:
  Staged(const Tensor& tensor, bool load) : tensor_(tensor) {
    if (tensor.is_contiguous()) {
      buffer_ = tensor;
    } else {
      buffer_ = load ? contiguous_copy(tensor) : Tensor::empty(tensor.dtype(), tensor.sizes());
      staged_ = true;
    }
  }
  void* data() const { return buffer_.numel() == 0 ? nullptr : buffer_.raw_data(); }
  Status finish() const { return staged_ ? copy_elements(buffer_, tensor_) : Status{}; }

 private:
  Tensor tensor_;
  Tensor buffer_;
  bool staged_ = false;
};

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup(std::string name, MPI_Comm comm, int rank, int size, std::vector<int> world_ranks)
      : name_(std::move(name)), comm_(comm), rank_(rank), size_(size), world_ranks_(std::move(world_ranks)) {}
  ~MpiProcessGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  const std::string& name() const override { return name_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend() const override { return "mpi"; }
  std::vector<int> global_ranks() const override { return world_ranks_; }

  WorkResult all_reduce(Tensor& tensor, ReduceOp op) override;
  WorkResult all_gather_into_tensor(const Tensor& input, Tensor& output) override;
  WorkResult reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp op) override;
  WorkResult all_to_all_single(const Tensor& input, Tensor& output, std::span<const int64_t> output_splits,
                               std::span<const int64_t> input_splits) override;
  WorkResult broadcast(Tensor& tensor, int src) override;
  WorkResult barrier() override;

 private:
  std::string prefix(const char* collective) const {
    return "process group '" + name_ + "' (mpi, rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
           ") " + collective;
  }
  // Starts `call` (an MPI_I* collective on comm_) as a Work; `keep` holds what MPI reads and
  // writes until it completes, `finish` completes it.
  // Issues a collective: `nonblocking` (MPI_I*) returns with it in flight; when the caller waits
  // for it at once (CollectiveOrigin::waited_at_once), `blocking` (the MPI call of the same
  // operation) runs it to completion instead, since MPI's blocking collectives are faster than its
  // nonblocking ones (bench/executor/collective_bench prints both).
  WorkResult start(const char* collective, std::shared_ptr<void> keep, std::function<Status()> finish,
                   const std::function<int(MPI_Request*)>& nonblocking, const std::function<int()>& blocking) const {
    auto work = std::make_shared<mpi::MpiWork>(
        prefix(collective),
        [what = prefix(collective)](int rc) {
          return make_error(ErrorCode::CollectiveFailed, what + ": MPI failed: " + mpi_error_text(rc));
        },
        std::move(finish), std::move(keep));
    if (CollectiveOrigin::waited_at_once()) return mpi::run_blocking(std::move(work), blocking);
    return mpi::start_work(std::move(work), nonblocking);
  }

  Error failure(const char* collective, const std::string& message) const {
    return make_error(ErrorCode::CollectiveFailed, "process group '" + name_ + "' (mpi, rank " + std::to_string(rank_) +
                                                       " of " + std::to_string(size_) + ") " + collective + ": " +
                                                       message);
  }
  Result<WireType> check_tensor(const char* collective, const char* role, const Tensor& t) const;
  Result<int> count_of(const char* collective, int64_t n) const;
  Result<MPI_Op> reduction(const char* collective, ScalarType dtype, Family family, ReduceOp op) const;

  std::string name_;
  MPI_Comm comm_;
  int rank_;
  int size_;
  std::vector<int> world_ranks_;
};

Result<WireType> MpiProcessGroup::check_tensor(const char* collective, const char* role, const Tensor& t) const {
  if (!t.defined()) return failure(collective, std::string(role) + " is an undefined tensor");
  if (t.device().kind != DeviceKind::kCpu) {
    return failure(collective,
                   std::string(role) + " is on " + t.device().to_string() + "; MPI groups take cpu tensors");
  }
  auto wire = wire_type(t.dtype());
  if (!wire) {
    return failure(collective, std::string(role) + " has dtype " + std::string(nrt::short_name(t.dtype())) +
                                   ", which MPI groups do not support");
  }
  return *wire;
}

Result<int> MpiProcessGroup::count_of(const char* collective, int64_t n) const {
  if (n < 0 || n > INT_MAX) {
    return failure(collective, std::to_string(n) + " elements exceed the element count MPI takes (" +
                                   std::to_string(INT_MAX) + ")");
  }
  return static_cast<int>(n);
}

Result<MPI_Op> MpiProcessGroup::reduction(const char* collective, ScalarType dtype, Family family,
                                          ReduceOp op) const {
  if (op == ReduceOp::PREMUL_SUM) return failure(collective, "PREMUL_SUM needs a factor and is not supported");
  auto mpi_op = mpi_reduction(dtype, family, op);
  if (!mpi_op) {
    return failure(collective, std::string("reduce op ") + reduce_op_name(op) + " is not defined for dtype " +
                                   std::string(nrt::short_name(dtype)));
  }
  return *mpi_op;
}

WorkResult MpiProcessGroup::all_reduce(Tensor& tensor, ReduceOp op) {
  constexpr const char* kWhat = "all_reduce";
  NRT_TRY(wire, check_tensor(kWhat, "tensor", tensor));
  NRT_TRY(mpi_op, reduction(kWhat, tensor.dtype(), wire->family, op));
  NRT_TRY(count, count_of(kWhat, tensor.numel()));
  auto buffer = std::make_shared<Staged>(tensor, /*load=*/true);
  const int n = *count, size = size_;
  const ScalarType dtype = tensor.dtype();
  auto finish = [buffer, n, dtype, size, op] {
    if (op == ReduceOp::AVG) divide_elements(buffer->data(), n, dtype, size);
    return buffer->finish();
  };
  return start(
      kWhat, buffer, finish,
      [&](MPI_Request* request) {
        return MPI_Iallreduce(MPI_IN_PLACE, buffer->data(), n, wire->type, *mpi_op, comm_, request);
      },
      [&] { return MPI_Allreduce(MPI_IN_PLACE, buffer->data(), n, wire->type, *mpi_op, comm_); });
}

WorkResult MpiProcessGroup::all_gather_into_tensor(const Tensor& input, Tensor& output) {
  constexpr const char* kWhat = "all_gather_into_tensor";
  NRT_TRY(wire, check_tensor(kWhat, "input", input));
  NRT_RETURN_IF_ERROR(check_tensor(kWhat, "output", output));
  std::vector<int64_t> expected = input.sizes();
  if (expected.empty()) expected.push_back(1);
  expected[0] *= size_;
  if (output.dtype() != input.dtype() || output.sizes() != expected) {
    return failure(kWhat, "output " + output.type_string() + " does not hold " + std::to_string(size_) +
                              " blocks of input " + input.type_string());
  }
  NRT_TRY(count, count_of(kWhat, input.numel()));
  NRT_RETURN_IF_ERROR(count_of(kWhat, output.numel()));
  auto buffers = std::make_shared<std::pair<Staged, Staged>>(Staged(input, /*load=*/true), Staged(output, false));
  return start(
      kWhat, buffers, [buffers] { return buffers->second.finish(); },
      [&](MPI_Request* request) {
        return MPI_Iallgather(buffers->first.data(), *count, wire->type, buffers->second.data(), *count, wire->type,
                              comm_, request);
      },
      [&] {
        return MPI_Allgather(buffers->first.data(), *count, wire->type, buffers->second.data(), *count, wire->type,
                             comm_);
      });
}

WorkResult MpiProcessGroup::reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp op) {
  constexpr const char* kWhat = "reduce_scatter_tensor";
  NRT_TRY(wire, check_tensor(kWhat, "input", input));
  NRT_RETURN_IF_ERROR(check_tensor(kWhat, "output", output));
  NRT_TRY(mpi_op, reduction(kWhat, input.dtype(), wire->family, op));
  std::vector<int64_t> expected = output.sizes();
  if (expected.empty()) expected.push_back(1);
  expected[0] *= size_;
  if (output.dtype() != input.dtype() || input.sizes() != expected) {
    return failure(kWhat, "input " + input.type_string() + " is not " + std::to_string(size_) + " blocks of output " +
                              output.type_string());
  }
  NRT_TRY(count, count_of(kWhat, output.numel()));
  NRT_RETURN_IF_ERROR(count_of(kWhat, input.numel()));
  auto buffers = std::make_shared<std::pair<Staged, Staged>>(Staged(input, /*load=*/true), Staged(output, false));
  const int n = *count, size = size_;
  const ScalarType dtype = output.dtype();
  auto finish = [buffers, n, dtype, size, op] {
    if (op == ReduceOp::AVG) divide_elements(buffers->second.data(), n, dtype, size);
    return buffers->second.finish();
  };
  return start(
      kWhat, buffers, finish,
      [&](MPI_Request* request) {
        return MPI_Ireduce_scatter_block(buffers->first.data(), buffers->second.data(), n, wire->type, *mpi_op, comm_,
                                         request);
      },
      [&] {
        return MPI_Reduce_scatter_block(buffers->first.data(), buffers->second.data(), n, wire->type, *mpi_op, comm_);
      });
}

WorkResult MpiProcessGroup::all_to_all_single(const Tensor& input, Tensor& output,
                                              std::span<const int64_t> output_splits,
                                              std::span<const int64_t> input_splits) {
  constexpr const char* kWhat = "all_to_all_single";
  NRT_TRY(wire, check_tensor(kWhat, "input", input));
  NRT_RETURN_IF_ERROR(check_tensor(kWhat, "output", output));
  if (input.dim() == 0 || output.dim() != input.dim() || output.dtype() != input.dtype() ||
      !std::equal(input.sizes().begin() + 1, input.sizes().end(), output.sizes().begin() + 1)) {
    return failure(kWhat, "input " + input.type_string() + " and output " + output.type_string() +
                              " must be tensors of one dtype, at least 1-d, equal beyond dim 0");
  }
  int64_t row_elements = 1;
  for (size_t d = 1; d < input.sizes().size(); ++d) row_elements *= input.sizes()[d];

  // Empty splits: equal blocks, as torch.
  auto splits_of = [&](std::span<const int64_t> given, int64_t rows,
                       const char* which) -> Result<std::vector<int64_t>> {
    if (given.empty()) {
      if (rows % size_ != 0) {
        return failure(kWhat, std::string("no ") + which + " splits and " + std::to_string(rows) +
                                  " rows do not divide into " + std::to_string(size_) + " equal blocks");
      }
      return std::vector<int64_t>(static_cast<size_t>(size_), rows / size_);
    }
    if (given.size() != static_cast<size_t>(size_)) {
      return failure(kWhat,
                     std::to_string(given.size()) + " " + which + " splits for a group of " + std::to_string(size_));
    }
    int64_t total = 0;
    for (int64_t s : given) {
      if (s < 0 || __builtin_add_overflow(total, s, &total)) {
        return failure(kWhat, std::string(which) + " split " + std::to_string(s) + " is negative or too large");
      }
    }
    if (total != rows) {
      return failure(kWhat, std::string(which) + " splits sum to " + std::to_string(total) + " rows, the " + which +
                                " has " + std::to_string(rows));
    }
    return std::vector<int64_t>(given.begin(), given.end());
  };
  NRT_TRY(send_rows, splits_of(input_splits, input.size(0), "input"));
  NRT_TRY(receive_rows, splits_of(output_splits, output.size(0), "output"));
  NRT_RETURN_IF_ERROR(count_of(kWhat, input.numel()));
  NRT_RETURN_IF_ERROR(count_of(kWhat, output.numel()));

  // MPI reads the count arrays until the operation completes: they live in the Work.
  struct Exchange {
    Staged in, out;
    std::vector<int> send_counts, send_offsets, receive_counts, receive_offsets;
  };
  auto exchange = std::make_shared<Exchange>(Exchange{Staged(input, /*load=*/true), Staged(output, false), {}, {}, {}, {}});
  auto& [in, out, send_counts, send_offsets, receive_counts, receive_offsets] = *exchange;
  int64_t send_at = 0, receive_at = 0;
  for (int r = 0; r < size_; ++r) {
    const int64_t send = (*send_rows)[static_cast<size_t>(r)] * row_elements;
    const int64_t receive = (*receive_rows)[static_cast<size_t>(r)] * row_elements;
    // Totals fit an int (checked above), so every count and offset does too.
    send_counts.push_back(static_cast<int>(send));
    send_offsets.push_back(static_cast<int>(send_at));
    receive_counts.push_back(static_cast<int>(receive));
    receive_offsets.push_back(static_cast<int>(receive_at));
    send_at += send;
    receive_at += receive;
  }
  return start(
      kWhat, exchange, [exchange] { return exchange->out.finish(); },
      // The lambdas name the exchange's fields through `e`: clang 14 (the ASan build) cannot
      // capture structured bindings.
      [&, &e = *exchange](MPI_Request* request) {
        return MPI_Ialltoallv(e.in.data(), e.send_counts.data(), e.send_offsets.data(), wire->type, e.out.data(),
                              e.receive_counts.data(), e.receive_offsets.data(), wire->type, comm_, request);
      },
      [&, &e = *exchange] {
        return MPI_Alltoallv(e.in.data(), e.send_counts.data(), e.send_offsets.data(), wire->type, e.out.data(),
                             e.receive_counts.data(), e.receive_offsets.data(), wire->type, comm_);
      });
}

WorkResult MpiProcessGroup::broadcast(Tensor& tensor, int src) {
  constexpr const char* kWhat = "broadcast";
  NRT_TRY(wire, check_tensor(kWhat, "tensor", tensor));
  if (src < 0 || src >= size_) {
    return failure(kWhat, "source rank " + std::to_string(src) + " is outside a group of " + std::to_string(size_));
  }
  NRT_TRY(count, count_of(kWhat, tensor.numel()));
  auto buffer = std::make_shared<Staged>(tensor, /*load=*/rank_ == src);
  return start(
      kWhat, buffer, [buffer] { return buffer->finish(); },
      [&](MPI_Request* request) { return MPI_Ibcast(buffer->data(), *count, wire->type, src, comm_, request); },
      [&] { return MPI_Bcast(buffer->data(), *count, wire->type, src, comm_); });
}

WorkResult MpiProcessGroup::barrier() {
  return start(
      "barrier", nullptr, nullptr, [&](MPI_Request* request) { return MPI_Ibarrier(comm_, request); },
      [&] { return MPI_Barrier(comm_); });
}

// ---- lifecycle ---------------------------------------------------------------------------------

Error not_initialised(const std::string& what) {
  return make_error(ErrorCode::CollectiveFailed, what + ": MPI is not initialised (call init_mpi first)");
}

bool mpi_ready() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void finalize_mpi_at_exit() {
  mpi::stop_progress();
  if (mpi_ready()) MPI_Finalize();
}

Status initialise() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided); rc != MPI_SUCCESS) {
      return make_error(ErrorCode::CollectiveFailed, "MPI_Init_thread failed (error " + std::to_string(rc) + ")");
    }
    mpi::set_thread_multiple(provided >= MPI_THREAD_MULTIPLE);
    std::atexit(&finalize_mpi_at_exit);
  }
  if (int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    return make_error(ErrorCode::CollectiveFailed, "MPI_Comm_set_errhandler: " + mpi_error_text(rc));
  }
  int rc = create_16bit_ops<false>();
  if (rc == MPI_SUCCESS) rc = create_16bit_ops<true>();
  if (rc != MPI_SUCCESS) return make_error(ErrorCode::CollectiveFailed, "MPI_Op_create: " + mpi_error_text(rc));
  return {};
}

Result<std::shared_ptr<ProcessGroup>> wrap_communicator(std::string name, MPI_Comm comm) {
  auto fail = [&](const char* call, int rc) -> Error {
    return make_error(ErrorCode::CollectiveFailed,
                      "process group '" + name + "': " + call + " failed: " + mpi_error_text(rc));
  };
  if (int rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN); rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    return fail("MPI_Comm_set_errhandler", rc);
  }
  int rank = 0, size = 0;
  if (int rc = MPI_Comm_rank(comm, &rank); rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    return fail("MPI_Comm_rank", rc);
  }
  if (int rc = MPI_Comm_size(comm, &size); rc != MPI_SUCCESS) {
    MPI_Comm_free(&comm);
    return fail("MPI_Comm_size", rc);
  }
  // The members' world ranks (for flight-recorder dumps); unknown if MPI cannot translate them.
  std::vector<int> world_ranks;
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  if (MPI_Comm_group(comm, &group) == MPI_SUCCESS && MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
    std::vector<int> members(static_cast<size_t>(size));
    for (int i = 0; i < size; ++i) members[static_cast<size_t>(i)] = i;
    world_ranks.resize(static_cast<size_t>(size));
    if (MPI_Group_translate_ranks(group, size, members.data(), world, world_ranks.data()) != MPI_SUCCESS) world_ranks.clear();
  }
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
  return std::shared_ptr<ProcessGroup>(
      std::make_shared<MpiProcessGroup>(std::move(name), comm, rank, size, std::move(world_ranks)));
}

}  // namespace

std::optional<std::string> detect_mpi_launcher() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}) {
    if (const char* value = std::getenv(variable); value != nullptr && value[0] != '\0') return std::string(variable);
  }
  return std::nullopt;
}

Status init_mpi() {
  static std::once_flag once;
  static Status outcome;
  std::call_once(once, [] { outcome = initialise(); });
  return outcome;
}

Result<MpiWorld> mpi_world() {
  if (!mpi_ready()) return not_initialised("mpi_world");
  MpiWorld world;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  return world;
}

Result<std::shared_ptr<ProcessGroup>> create_mpi_world_group(std::string name) {
  if (!mpi_ready()) return not_initialised("process group '" + name + "'");
  MPI_Comm comm = MPI_COMM_NULL;
  if (int rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm); rc != MPI_SUCCESS) {
    return make_error(ErrorCode::CollectiveFailed,
                      "process group '" + name + "': MPI_Comm_dup failed: " + mpi_error_text(rc));
  }
  return wrap_communicator(std::move(name), comm);
}

Result<std::shared_ptr<ProcessGroup>> create_mpi_process_group(std::string name, std::span<const int32_t> ranks,
                                                               int tag) {
  auto world = mpi_world();
  if (!world) return not_initialised("process group '" + name + "'");
  std::vector<int> members(ranks.begin(), ranks.end());
  std::vector<bool> seen(static_cast<size_t>(world->size), false);
  for (int r : members) {
    if (r < 0 || r >= world->size) return rank_outside_world(name, ranks, r, world->size);
    if (seen[static_cast<size_t>(r)]) {
      return make_error(ErrorCode::CollectiveFailed, "process group '" + name + "' has ranks " + ranks_text(ranks) +
                                                         ": rank " + std::to_string(r) + " is repeated");
    }
    seen[static_cast<size_t>(r)] = true;
  }
  if (members.empty()) {
    for (int r = 0; r < world->size; ++r) members.push_back(r);
  }
  if (!ranks.empty() && !seen[static_cast<size_t>(world->rank)]) {
    return std::shared_ptr<ProcessGroup>();  // not a member: takes no part
  }

  MPI_Group world_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  if (rc == MPI_SUCCESS) rc = MPI_Group_incl(world_group, static_cast<int>(members.size()), members.data(), &group);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm);
  if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
  if (world_group != MPI_GROUP_NULL) MPI_Group_free(&world_group);
  if (rc != MPI_SUCCESS) {
    return make_error(ErrorCode::CollectiveFailed, "process group '" + name + "' over ranks " + ranks_text(ranks) +
                                                       ": MPI_Comm_create_group failed: " + mpi_error_text(rc));
  }
  return wrap_communicator(std::move(name), comm);
}

Result<ProcessGroupRegistry> mpi_process_registry(const fb::Program& program) {
  NRT_TRY(world, mpi_world());
  ProcessGroupRegistry registry;
  const auto* groups = program.process_groups();
  if (groups == nullptr) return registry;
  // Every group checked before any communication: a bad program fails alike on every rank.
  for (const auto* group : *groups) {
    if (group->ranks() == nullptr) continue;
    for (int32_t r : *group->ranks()) {
      if (r < 0 || r >= world->size) {
        return rank_outside_world(group->name()->str(), {group->ranks()->data(), group->ranks()->size()}, r,
                                  world->size);
      }
    }
  }
  for (uint32_t g = 0; g < groups->size(); ++g) {
    const auto* group = groups->Get(g);
    std::span<const int32_t> ranks;
    if (group->ranks() != nullptr) ranks = {group->ranks()->data(), group->ranks()->size()};
    // MPI guarantees tags up to 32767; creations are ordered, so wrapping beyond cannot mix them.
    NRT_TRY(created, create_mpi_process_group(group->name()->str(), ranks, static_cast<int>(g % 32768)));
    if (*created) registry.bind(group->name()->str(), std::move(*created));
  }
  return registry;
}

void abort_mpi_world(int exit_code) {
  if (mpi_ready()) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace nrt::exec
