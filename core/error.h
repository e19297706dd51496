// Errors as values. Every failure nrt reports about a file or an input carries a stable numeric
// code (documented in docs/ERRORS.md, checked by tests/error_codes_doc_test) and a message naming
// the place: graph, node, value, byte offset. Nothing in the serializer throws or aborts on bad input.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace nrt {

// X(Name, number, summary). Numbers are stable: never reuse or renumber; append new codes.
#define NRT_ERROR_CODES(X)                                                                       \
  X(Ok, 0, "no error")                                                                           \
  /* 1xx: I/O and usage */                                                                       \
  X(IoOpen, 101, "the file cannot be opened or mapped")                                          \
  X(IoWrite, 102, "the output file cannot be written")                                           \
  X(UnknownFormat, 103, "the input format is not recognised")                                    \
  X(InvalidArgument, 104, "a caller passed an invalid argument")                                 \
  /* 2xx: container */                                                                           \
  X(FileTooSmall, 201, "the file is smaller than the container header")                          \
  X(BadMagic, 202, "the file does not start with the nrt container magic")                       \
  X(UnsupportedContainerVersion, 203, "the container version is not supported")                  \
  X(FlatbufferOutOfRange, 204, "the FlatBuffer region lies outside the file")                    \
  X(SegmentOutOfRange, 205, "the weight segment lies outside the file or overlaps the FlatBuffer") \
  X(BadFileIdentifier, 206, "the FlatBuffer file identifier is not NRT1")                        \
  X(FlatbufferInvalid, 207, "the FlatBuffers verifier rejected the buffer")                      \
  X(UnsupportedSchemaVersion, 208, "the schema major version is not supported")                  \
  X(MissingField, 209, "a field the format requires is absent")                                  \
  /* 3xx: indices */                                                                             \
  X(OperatorIndexOutOfRange, 301, "an operator index is out of range")                           \
  X(ValueIndexOutOfRange, 302, "a value index is out of range")                                  \
  X(StorageIndexOutOfRange, 303, "a storage index is out of range")                              \
  X(MeshIndexOutOfRange, 304, "a device mesh index is out of range")                             \
  X(GroupIndexOutOfRange, 305, "a process group index is out of range")                          \
  X(GraphIndexOutOfRange, 306, "a graph index is out of range")                                  \
  X(NoEntryPoint, 307, "the program has no entry point")                                         \
  /* 4xx: enums */                                                                               \
  X(UnknownEnumValue, 401, "an enum field holds a value this version does not know")             \
  X(UnknownArgumentKind, 402, "an argument union holds a member this version does not know")     \
  /* 5xx: weights */                                                                             \
  X(StorageOutOfSegment, 501, "a storage's offset + size lies outside the weight segment")       \
  X(StorageMisaligned, 502, "a storage is not aligned as its alignment field says")              \
  X(TensorViewOutOfStorage, 503, "a tensor view reaches outside its storage")                    \
  X(InvalidShape, 504, "a size, stride or offset is negative or overflows")                      \
  X(ChecksumMismatch, 505, "a storage's bytes do not match its checksum")                        \
  X(InlineDataMismatch, 506, "inline weight data is misplaced or has the wrong size")            \
  X(DuplicateName, 507, "two entries share a name that must be unique")                          \
  /* 6xx: graph structure */                                                                     \
  X(ValueRedefined, 601, "a value is defined more than once")                                    \
  X(ValueUsedBeforeDefinition, 602, "a value is used before it is defined (or never defined)")   \
  X(TypeMismatch, 603, "a reference's kind disagrees with the value it names")                   \
  X(InvalidOutputArgument, 604, "a node or graph input slot holds something that defines no value") \
  X(MissingTypeInfo, 605, "a value lacks the metadata its kind requires")                        \
  X(GraphRecursion, 606, "subgraphs reference each other in a cycle or nest too deeply")         \
  /* 7xx: signature */                                                                           \
  X(SignatureMissing, 701, "an entry point has no signature")                                    \
  X(SignatureInputMismatch, 702, "the input specs disagree with the graph inputs")               \
  X(SignatureOutputMismatch, 703, "the output specs disagree with the graph outputs")            \
  /* 8xx: distributed */                                                                         \
  X(InvalidMesh, 801, "a device mesh's shape, names and ranks disagree")                         \
  X(InvalidPlacement, 802, "a DTensor placement does not fit its mesh or tensor")                \
  X(InvalidProcessGroup, 803, "a process group's ranks or mesh dimension are invalid")           \
  /* 9xx: foreign formats */                                                                     \
  X(JsonParse, 901, "the JSON text does not parse against the schema")                           \
  X(TorchSchemaVersion, 902, "the torch.export schema version is not supported")                 \
  X(UnmappedEnumValue, 903, "an enum value has no row in its mapping table")                     \
  X(ArchiveEntryMissing, 904, "a .pt2 archive lacks an entry it needs")                          \
  X(ArchiveCorrupt, 905, "the .pt2 archive is unreadable, inconsistent or a zip bomb")           \
  X(PickledPayload, 906, "a .pt2 payload is a pickle nrt does not read")                         \
  X(WeightsConfigMismatch, 907, "a weight record disagrees with its weights config")             \
  X(UnknownValueName, 908, "a reference names a value the graph does not declare")               \
  X(LegacyTorchArchive, 909, "the archive is a legacy (before torch 2.6) torch.export archive") \
  X(PickleGlobalRefused, 910, "a pickle names a global outside nrt's allowlist")                  \
  X(PickleMalformed, 911, "a pickle is truncated or holds an opcode or shape nrt does not read")  \
  X(PickleLimit, 912, "a pickle exceeds a bound: a length, nesting, memo, stack or value count")  \
  X(PickleStorageInvalid, 913, "a pickle's persistent id names no storage record of its size")   \
  /* 10xx: execution */                                                                          \
  X(MissingKernel, 1001, "a target has no kernel for the device")                                \
  X(InputMismatch, 1002, "a run's inputs disagree with the graph's declared inputs")             \
  X(KernelError, 1003, "a kernel rejected its arguments or could not compute its result")       \
  X(KernelResultMismatch, 1004, "a kernel's result disagrees with the graph's metadata")         \
  X(WeightMismatch, 1005, "a parameter, buffer or constant is absent or disagrees with its value") \
  X(NpyInvalid, 1006, "a .npy file is malformed or holds a dtype nrt cannot read")               \
  X(CollectiveFailed, 1007, "a collective failed, or its process group is unbound or mismatched") \
  X(MemoryBudgetExceeded, 1008, "a run would need more memory than its budget, or an allocation failed") \
  X(RankMismatch, 1009, "the ranks of one job hold different programs")                         \
  X(NotSupported, 1010, "the program is valid, but uses something this build cannot do")         \
  X(Internal, 1011, "nrt broke one of its own invariants (a bug to report)")                    \
  X(CollectiveTimeout, 1012, "a collective did not complete within its timeout")                  \
  X(NanInCollective, 1013, "a collective's send buffer holds a NaN (NRT_NAN_CHECK=1)")             \
  X(DeviceUnavailable, 1014, "the requested device is absent, or its driver cannot be used")    \
  X(DeviceError, 1015, "a call into the device's runtime or libraries failed")

enum class ErrorCode : int {
#define NRT_ERROR_ENUM(name, number, summary) name = number,
  NRT_ERROR_CODES(NRT_ERROR_ENUM)
#undef NRT_ERROR_ENUM
};

// "NRT-E302" style identifier and CamelCase name of a code.
std::string error_id(ErrorCode code);
std::string_view error_name(ErrorCode code);
std::string_view error_summary(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::Ok;
  std::string message;

  // "NRT-E302 ValueIndexOutOfRange: graph 'main' node 3 ..."
  std::string to_string() const;
};

// Result<T>: a T or an Error. Small on purpose; no exceptions cross the serializer's API.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  // An Error whose code is Ok is no error to carry: it becomes Internal (ExecuTorch's guard), so a
  // failure can never read as success.
  Result(Error error) : state_(guarded(std::move(error))) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(state_); }

 private:
  static Error guarded(Error error) {
    if (error.code == ErrorCode::Ok) {
      error.code = ErrorCode::Internal;
      error.message = "an error with code Ok was returned as a failure" + (error.message.empty() ? "" : ": " + error.message);
    }
    return error;
  }
  std::variant<T, Error> state_;
};

// Status: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT
  static Status Ok() { return {}; }
  bool ok() const { return error_.code == ErrorCode::Ok; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_;
};

inline Error make_error(ErrorCode code, std::string message) { return Error{code, std::move(message)}; }

// The two short forms of error propagation. Both return the error from the enclosing function,
// which returns a Status or any Result.
//
// NRT_RETURN_IF_ERROR(expr): for a Status, or a Result whose value is not needed.
// `NRT_RETURN_IF_ERROR(check(t));` stands for `if (Status s = check(t); !s) return s;`.
//
// NRT_TRY(name, expr): declares `auto name = expr;` (a Result) and returns its error when it holds
// one; below it, `name` holds a value (read it as *name or name->). `NRT_TRY(x, parse(b));` stands
// for `auto x = parse(b); if (!x) return x.error();`.
#define NRT_TRY(name, ...)  \
  auto name = (__VA_ARGS__); \
  if (!name) return name.error()

#define NRT_RETURN_IF_ERROR(...)                                   \
  do {                                                             \
    if (auto&& nrt_outcome_ = (__VA_ARGS__); !nrt_outcome_) {      \
      return nrt_outcome_.error();                                 \
    }                                                              \
  } while (false)

}  // namespace nrt
