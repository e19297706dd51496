// The reliability hooks of collectives (executor/comm/traced_process_group.h and its parts): the flight
// recorder's ring and JSON dumps, the environment, the NaN check, sequence numbers and records of a
// traced group, the watchdog, and the analysis of crafted dumps.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <thread>

#include "executor/comm/collective_hooks.h"
#include "executor/comm/collective_watchdog.h"
#include "executor/runtime/executor.h"
#include "executor/comm/flight_recorder.h"
#include "executor/comm/flight_recorder_analysis.h"
#include "executor/comm/flight_recorder_torch.h"
#include "executor/comm/nan_check.h"
#include "executor/comm/single_process_group.h"
#include "executor/comm/traced_process_group.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace nrt::exec {
namespace {

using nrt::ScalarType;
namespace arg = testdata::arg;
using testdata::Args;

CollectiveRecord record(const std::string& op, int64_t seq) {
  CollectiveRecord r;
  r.pg_name = "world";
  r.pg_size = 2;
  r.backend = "mpi";
  r.op = op;
  r.collective_seq_id = seq;
  r.input_sizes = {{3, 4}};
  r.output_sizes = {{3, 4}};
  r.input_dtypes = {"f32"};
  r.output_dtypes = {"f32"};
  r.state = CollectiveState::kCompleted;
  r.time_created_ns = 1000 + seq;
  return r;
}

TEST(FlightRecorder, KeepsTheLastEntriesOldestFirst) {
  FlightRecorder recorder(3);
  for (int i = 1; i <= 5; ++i) recorder.add(record("all_reduce", i));
  EXPECT_EQ(recorder.recorded(), 5u);
  const auto entries = recorder.entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].record_id, 2u);
  EXPECT_EQ(entries[0].collective_seq_id, 3);
  EXPECT_EQ(entries[2].record_id, 4u);
  recorder.completed(0, 5);  // dropped already: left alone, nothing else touched
  recorder.started(3, 100'000);
  recorder.completed(3, 2'100'000);
  const auto after = recorder.entries();
  EXPECT_EQ(after[1].state, CollectiveState::kCompleted);
  EXPECT_DOUBLE_EQ(after[1].duration_ms, 2.0);
  EXPECT_EQ(after[0].time_completed_ns, 0);

  FlightRecorder off(0);
  off.add(record("all_reduce", 1));
  EXPECT_TRUE(off.entries().empty());
  EXPECT_EQ(off.recorded(), 1u);
}

TEST(FlightRecorder, DumpsRoundTripThroughJson) {
  FlightRecorderDump dump;
  dump.rank = 1;
  dump.world_size = 2;
  dump.reason = "timeout";
  dump.dump_time_ns = 123456789;
  dump.recorded = 7;
  CollectiveRecord r = record("all_gather_into_tensor", 4);
  r.node = "all_gather_into_tensor_1";
  r.output_sizes = {{6, 4}};
  r.state = CollectiveState::kFailed;
  r.error = "Watchdog caught ...";
  r.duration_ms = -1;
  dump.entries = {record("all_reduce", 3), r};
  dump.entries[0].duration_ms = 0.25;
  auto back = flight_recorder_dump_from_json(to_json(dump));
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->world_size, 2);
  EXPECT_EQ(back->reason, "timeout");
  EXPECT_EQ(back->recorded, 7u);
  ASSERT_EQ(back->entries.size(), 2u);
  EXPECT_DOUBLE_EQ(back->entries[0].duration_ms, 0.25);
  EXPECT_EQ(back->entries[1].node, "all_gather_into_tensor_1");
  EXPECT_EQ(back->entries[1].output_sizes, (std::vector<std::vector<int64_t>>{{6, 4}}));
  EXPECT_EQ(back->entries[1].state, CollectiveState::kFailed);
  EXPECT_EQ(back->entries[1].duration_ms, -1);
  EXPECT_EQ(back->entries[1].error, "Watchdog caught ...");
  EXPECT_EQ(to_json(*back), to_json(dump));
}

// torch's format: the pickle torch's analyzer reads, and back without loss (what torch has no
// field for travels in nrt_* keys); the group table comes from the traced groups' members.
TEST(FlightRecorder, DumpsRoundTripThroughTorchsPickle) {
  FlightRecorderDump dump;
  dump.rank = 1;
  dump.world_size = 4;
  dump.reason = "timeout";
  dump.dump_time_ns = 123456789;
  dump.recorded = 9;
  dump.groups["world"] = {1, 3};  // a group of 2 in a world of 4: its members come from the table
  CollectiveRecord r = record("reduce_scatter_tensor", 4);
  r.pg_rank = 0;
  r.node = "reduce_scatter_tensor_1";
  r.output_sizes = {{1, 4}};
  r.input_dtypes = {"bf16"};
  r.output_dtypes = {"bf16"};
  r.state = CollectiveState::kFailed;
  r.error = "Watchdog caught ...";
  r.time_started_ns = 2000;
  r.timeout_ms = 600000;
  CollectiveRecord first = record("all_reduce", 3);
  first.duration_ms = 0.25;
  first.time_started_ns = 1500;
  first.time_completed_ns = 1750;
  dump.entries = {first, r};
  const auto bytes = flight_recorder_dump_to_torch(dump);
  // torch's layout: a dict with its keys, the op under torch's name, c10 dtype names.
  const std::string text(bytes.begin(), bytes.end());
  for (const char* key : {"version", "pg_config", "pg_status", "entries", "profiling_name", "collective_seq_id",
                          "mpi:_reduce_scatter_base", "BFloat16", "[1, 3]", "time_discovered_started_ns"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key;
  }
  auto back = flight_recorder_dump_from_torch(bytes, 1, "rank_1");
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(to_json(*back), to_json(dump));
  EXPECT_EQ(back->groups.at("world"), (std::vector<int>{1, 3}));
  // The rank comes from the file name; a dump of a rank outside a group it recorded is refused.
  auto wrong = flight_recorder_dump_from_torch(bytes, 0, "rank_0");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("says rank 1"), std::string::npos) << wrong.error().message;
  // A global in a dump is refused (torch's dumps hold none), and so is a truncated one.
  auto truncated = flight_recorder_dump_from_torch(std::span(bytes).first(bytes.size() / 2), 1, "rank_1");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, ErrorCode::PickleMalformed);
  static constexpr char kGlobal[] = "\x80\x02" "cos\nsystem\n.";
  const std::string global(kGlobal, sizeof kGlobal - 1);
  auto refused = flight_recorder_dump_from_torch({reinterpret_cast<const uint8_t*>(global.data()), global.size()}, 0, "x0");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::PickleGlobalRefused);
}

// A dump goes to a regular file or a new path only: never through a FIFO, a symbolic link or onto
// a directory, and no temporary is left beside them (issue 25, class 5).
TEST(FlightRecorder, DumpsOnlyToARegularFileOrANewPath) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/fr_dump_targets";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/a_directory");
  ASSERT_EQ(::mkfifo((dir + "/a_fifo").c_str(), 0600), 0);
  std::ofstream(dir + "/target.json") << "kept";
  std::filesystem::create_symlink(dir + "/target.json", dir + "/a_link");
  FlightRecorderDump dump;
  dump.rank = 0;
  dump.world_size = 1;
  dump.reason = "test";
  for (const std::string name : {"a_directory", "a_fifo", "a_link"}) {
    Status s = write_flight_recorder_dump(dump, dir + "/" + name);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.error().code, ErrorCode::IoWrite) << name;
  }
  std::ifstream kept(dir + "/target.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "kept") << "the link's target was written";
  ASSERT_TRUE(write_flight_recorder_dump(dump, dir + "/new.json").ok());
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 5u) << "a temporary was left behind";
}

TEST(FlightRecorder, MalformedDumpsAreRefusedNamingWhat) {
  auto expect_refused = [](const std::string& text, const std::string& says) {
    auto parsed = flight_recorder_dump_from_json(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(parsed.error().message.find(says), std::string::npos) << parsed.error().message;
  };
  expect_refused("{not json", "not JSON");
  expect_refused("[]", "not a JSON object");
  expect_refused(R"({"format": "torch", "version": 1})", "format 'torch'");
  expect_refused(R"({"format": "nrt-flight-recorder", "version": 9})", "version 9 is not supported");
  expect_refused(R"({"format": "nrt-flight-recorder", "version": 1, "rank": 0})", "missing field 'world_size'");
  FlightRecorderDump dump;
  dump.world_size = 2;
  dump.recorded = 1;
  dump.entries = {record("all_reduce", 1)};
  std::string text = to_json(dump);
  const auto at = text.find("\"completed\"");
  ASSERT_NE(at, std::string::npos);
  expect_refused(text.substr(0, at) + "\"exploded\"" + text.substr(at + 11), "unknown state 'exploded'");
  text = to_json(dump);
  const std::string field = "\"collective_seq_id\":1";
  const auto seq = text.find(field);
  ASSERT_NE(seq, std::string::npos) << text;
  for (const char* wrong : {"\"one\"", "1.5", "1e300", "99999999999999999999"}) {
    expect_refused(text.substr(0, seq) + "\"collective_seq_id\":" + wrong + text.substr(seq + field.size()),
                   "entry 0: field 'collective_seq_id' has the wrong type");
  }
  expect_refused(R"({"format": "nrt-flight-recorder", "version": 1, "rank": 2, "world_size": 2, "reason": "",
                     "dump_time_ns": 0, "recorded": 0, "entries": []})",
                 "rank 2 of world size 2 is not a rank");
  expect_refused(R"({"format": "nrt-flight-recorder", "version": 1, "rank": 0, "world_size": 2000000000,
                     "reason": "", "dump_time_ns": 0, "recorded": 0, "entries": []})",
                 "world size 2000000000");

  // Every field is checked against the dump's own world and groups (issue 25, class 2).
  auto refused_with = [&](auto change, const std::string& says) {
    FlightRecorderDump bad = dump;
    change(bad);
    expect_refused(to_json(bad), says);
  };
  refused_with([](auto& d) { d.entries[0].pg_size = 0; }, "group size 0 in a world of 2");
  refused_with([](auto& d) { d.entries[0].pg_size = 1000; }, "group size 1000 in a world of 2");
  refused_with([](auto& d) { d.entries[0].pg_rank = 7; }, "group rank 7 in a group of 2");
  refused_with([](auto& d) { d.entries[0].collective_seq_id = 0; }, "exactly one is positive");
  refused_with([](auto& d) { d.entries[0].collective_seq_id = -3; }, "sequence numbers -3 (collective)");
  refused_with([](auto& d) { d.entries[0].input_sizes = {{3, -4}}; }, "negative size -4");
  refused_with([](auto& d) { d.entries[0].op = "all_reduce\x1b[2K"; }, "unknown op 'all_reduce\\x1b[2K'");
  refused_with([](auto& d) { d.entries[0].output_dtypes = {"f33"}; }, "unknown dtype 'f33'");
  refused_with([](auto& d) { d.recorded = 0; }, "'recorded' is 0 but the dump holds 1 entries");
  refused_with(
      [](auto& d) {
        d.recorded = 2;
        d.entries.push_back(record("all_reduce", 2));
        d.entries[1].pg_size = 1;
      },
      "entry 1 (process group 'world'): group size 1 and rank 0, where an earlier entry had size 2 and rank 0");
  expect_refused(R"({"format": "nrt-flight-recorder", "format": "nrt-flight-recorder"})",
                 "key \"format\" appears twice in the top level");
  expect_refused(std::string(200, '[') + std::string(200, ']'), "nested deeper than 64 levels");
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char* name_;
};

TEST(CollectiveHooksOptions, ReadFromTheEnvironment) {
  auto defaults = collective_hooks_from_env();
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->nan_check);
  EXPECT_EQ(defaults->fr_buffer_size, 2000u);
  EXPECT_EQ(defaults->timeout, std::chrono::milliseconds(600'000));
  EXPECT_EQ(defaults->dump_path(3), "nrt_fr_trace_3.json");
  {
    ScopedEnv a("NRT_NAN_CHECK", "1"), b("NRT_FR_BUFFER_SIZE", "16"), c("NRT_COLLECTIVE_TIMEOUT_S", "2.5"),
        d("NRT_FR_DUMP_PREFIX", "/tmp/fr_"), e("NRT_FR_DUMP_ON_EXIT", "1");
    auto set = collective_hooks_from_env();
    ASSERT_TRUE(set.ok()) << set.error().to_string();
    EXPECT_TRUE(set->nan_check);
    EXPECT_TRUE(set->fr_dump_on_exit);
    EXPECT_EQ(set->fr_buffer_size, 16u);
    EXPECT_EQ(set->timeout, std::chrono::milliseconds(2500));
    EXPECT_EQ(set->dump_path(0), "/tmp/fr_0.json");
  }
  // Every variable by the same rules (core/number_text.h), each error with its real reason.
  struct Bad {
    const char* name;
    const char* value;
    const char* reason;
  };
  for (const Bad& b : {Bad{"NRT_NAN_CHECK", "yes", "is not 0, 1, true or false"},
                       Bad{"NRT_NAN_CHECK", "2", "is not 0, 1, true or false"},
                       Bad{"NRT_NAN_CHECK", "", "is empty (unset it for the default)"},
                       Bad{"NRT_FR_BUFFER_SIZE", "-1", "is below the minimum of 0"},
                       Bad{"NRT_FR_BUFFER_SIZE", "12x", "is not an integer"},
                       Bad{"NRT_FR_BUFFER_SIZE", "lots", "is not an integer"},
                       Bad{"NRT_FR_BUFFER_SIZE", "99999999999", "is above the cap of 10000000"},
                       Bad{"NRT_FR_BUFFER_SIZE", " 5", "has spaces around the number"},
                       Bad{"NRT_FR_BUFFER_SIZE", "5 ", "has spaces around the number"},
                       Bad{"NRT_COLLECTIVE_TIMEOUT_S", "0", "is below the minimum of 0.001"},
                       Bad{"NRT_COLLECTIVE_TIMEOUT_S", "1e-300", "is below the minimum of 0.001"},
                       Bad{"NRT_COLLECTIVE_TIMEOUT_S", "1e30", "is above the cap of 1e+07"},
                       Bad{"NRT_COLLECTIVE_TIMEOUT_S", "1e999", "is above the cap of 1e+07"},
                       Bad{"NRT_COLLECTIVE_TIMEOUT_S", "nan", "is not a number"},
                       Bad{"NRT_COLLECTIVE_TIMEOUT_S", "", "is empty"},
                       Bad{"NRT_FR_DUMP_PREFIX", "", "is empty"},
                       Bad{"NRT_FR_DUMP_PREFIX", "/no/such/directory/fr_", "its directory '/no/such/directory' does not exist"},
                       Bad{"NRT_FR_DUMP_ON_EXIT", "2", "is not 0, 1, true or false"}}) {
    ScopedEnv bad(b.name, b.value);
    auto refused = collective_hooks_from_env();
    ASSERT_FALSE(refused.ok()) << b.name << "=" << b.value;
    EXPECT_EQ(refused.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(refused.error().message.find(b.name), std::string::npos) << refused.error().message;
    EXPECT_NE(refused.error().message.find(b.reason), std::string::npos) << b.name << "='" << b.value << "': "
                                                                          << refused.error().message;
  }
}

TEST(NanCheck, FindsTheFirstNanOfFloatingDtypes) {
  Tensor f32 = Tensor::empty(ScalarType::FLOAT32, {2, 3});
  EXPECT_FALSE(first_nan_index(f32).has_value());
  f32.data<float>()[4] = std::numeric_limits<float>::quiet_NaN();
  f32.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(first_nan_index(f32), 4);
  f32.data<float>()[1] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(first_nan_index(f32), 4) << "infinity is not NaN";

  Tensor f64 = Tensor::empty(ScalarType::FLOAT64, {3});
  f64.data<double>()[2] = std::nan("");
  EXPECT_EQ(first_nan_index(f64), 2);

  Tensor f16 = Tensor::empty(ScalarType::FLOAT16, {4}), bf16 = Tensor::empty(ScalarType::BFLOAT16, {4});
  f16.data<uint16_t>()[0] = 0x7c00;  // +inf
  f16.data<uint16_t>()[3] = 0x7e00;  // NaN
  bf16.data<uint16_t>()[0] = 0x7f80;  // +inf
  bf16.data<uint16_t>()[2] = 0xffc1;  // a negative NaN
  EXPECT_EQ(first_nan_index(f16), 3);
  EXPECT_EQ(first_nan_index(bf16), 2);

  Tensor c64 = Tensor::empty(ScalarType::COMPLEX64, {3});
  c64.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();  // imaginary part of element 1
  EXPECT_EQ(first_nan_index(c64), 1);

  // A strided view: the transpose's flat order, not the storage's.
  Tensor grid = Tensor::empty(ScalarType::FLOAT32, {2, 2});
  grid.data<float>()[1] = std::numeric_limits<float>::quiet_NaN();  // (0, 1): (1, 0) of the transpose
  Tensor transposed(grid.storage(), ScalarType::FLOAT32, {2, 2}, {1, 2});
  EXPECT_EQ(first_nan_index(transposed), 2);

  Tensor ints = Tensor::empty(ScalarType::INT32, {4});
  ints.data<int32_t>()[0] = -1;
  EXPECT_FALSE(first_nan_index(ints).has_value());
}

std::shared_ptr<CollectiveTracing> tracing(bool nan_check, std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  CollectiveHooksOptions options;
  options.nan_check = nan_check;
  options.fr_buffer_size = 16;
  options.timeout = timeout;
  return std::make_shared<CollectiveTracing>(options, 0, 1);
}

TEST(TracedProcessGroup, NumbersAndRecordsEveryCollective) {
  auto t = tracing(false);
  TracedProcessGroup group(std::make_shared<SingleProcessGroup>("world"), t);
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {2, 3});
  Tensor gathered = Tensor::empty(ScalarType::FLOAT32, {2, 3});
  {
    CollectiveOrigin origin("all_reduce_7");
    ASSERT_TRUE(wait_for(group.all_reduce(x, ReduceOp::SUM)).ok());
  }
  ASSERT_TRUE(wait_for(group.all_gather_into_tensor(x, gathered)).ok());
  ASSERT_TRUE(wait_for(group.barrier()).ok());
  EXPECT_EQ(group.collective_seq_id(), 3);
  EXPECT_EQ(group.p2p_seq_id(), 0);
  const auto entries = t->recorder.entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].op, "all_reduce");
  EXPECT_EQ(entries[0].node, "all_reduce_7");
  EXPECT_EQ(entries[0].collective_seq_id, 1);
  EXPECT_EQ(entries[0].p2p_seq_id, 0);
  EXPECT_EQ(entries[0].pg_name, "world");
  EXPECT_EQ(entries[0].backend, "single");
  EXPECT_EQ(entries[0].input_sizes, (std::vector<std::vector<int64_t>>{{2, 3}}));
  EXPECT_EQ(entries[0].input_dtypes, (std::vector<std::string>{"f32"}));
  EXPECT_EQ(entries[0].state, CollectiveState::kCompleted);
  EXPECT_GE(entries[0].duration_ms, 0);
  EXPECT_GT(entries[0].time_created_ns, 0);
  EXPECT_LE(entries[0].time_created_ns, entries[0].time_started_ns);
  EXPECT_LE(entries[0].time_started_ns, entries[0].time_completed_ns);
  EXPECT_EQ(entries[0].timeout_ms, 60'000);
  EXPECT_EQ(entries[1].op, "all_gather_into_tensor");
  EXPECT_EQ(entries[1].node, "") << "the origin ended with its scope";
  EXPECT_EQ(entries[2].op, "barrier");
  EXPECT_EQ(entries[2].collective_seq_id, 3);
}

TEST(TracedProcessGroup, TheNanCheckRefusesASendBufferHoldingANan) {
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {4});
  x.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  {
    auto t = tracing(false);
    TracedProcessGroup group(std::make_shared<SingleProcessGroup>("world"), t);
    EXPECT_TRUE(wait_for(group.all_reduce(x, ReduceOp::SUM)).ok()) << "off by default: the NaN goes through";
  }
  auto t = tracing(true);
  TracedProcessGroup group(std::make_shared<SingleProcessGroup>("world"), t);
  ASSERT_TRUE(wait_for(group.barrier()).ok());
  CollectiveOrigin origin("all_reduce_2");
  auto refused = group.all_reduce(x, ReduceOp::SUM);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::NanInCollective);
  const std::string& m = refused.error().message;
  for (const char* part : {"rank 0", "process group 'world'", "SeqNum=2", "all_reduce of node 'all_reduce_2'",
                           "f32[4]", "NaN at flat index 2"}) {
    EXPECT_NE(m.find(part), std::string::npos) << part << " in: " << m;
  }
  EXPECT_EQ(t->recorder.entries().back().state, CollectiveState::kFailed);
  EXPECT_EQ(t->recorder.entries().back().error, m);
  // Broadcast checks only the root's buffer: rank 0 is the root here, so it is refused...
  EXPECT_FALSE(group.broadcast(x, 0).ok());
  Tensor clean = Tensor::empty(ScalarType::FLOAT32, {4});
  EXPECT_TRUE(wait_for(group.all_reduce(clean, ReduceOp::SUM)).ok());
  Tensor ints = Tensor::empty(ScalarType::INT64, {4});
  EXPECT_TRUE(wait_for(group.all_reduce(ints, ReduceOp::SUM)).ok());
}

// A Work that completes when told to.
class GatedWork final : public Work {
 public:
  Status wait(std::optional<std::chrono::milliseconds> timeout) override {
    const auto until = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::hours(1));
    while (!open_.load()) {
      if (std::chrono::steady_clock::now() > until) return make_error(ErrorCode::CollectiveFailed, "timed out");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status::Ok();
  }
  bool test() override { return open_.load(); }
  void open() { open_ = true; }

 private:
  std::atomic<bool> open_{false};
};

// Hands out GatedWorks for all_reduce; the rest is the single process's.
class GatedGroup final : public ProcessGroup {
 public:
  const std::string& name() const override { return name_; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string_view backend() const override { return "gated"; }
  WorkResult all_reduce(Tensor&, ReduceOp) override {
    last = std::make_shared<GatedWork>();
    return std::shared_ptr<Work>(last);
  }
  WorkResult all_gather_into_tensor(const Tensor&, Tensor&) override { return completed_work({}); }
  WorkResult reduce_scatter_tensor(const Tensor&, Tensor&, ReduceOp) override { return completed_work({}); }
  WorkResult all_to_all_single(const Tensor&, Tensor&, std::span<const int64_t>, std::span<const int64_t>) override {
    return completed_work({});
  }
  WorkResult broadcast(Tensor&, int) override { return completed_work({}); }
  WorkResult barrier() override { return completed_work({}); }
  std::shared_ptr<GatedWork> last;

 private:
  std::string name_ = "world";
};

TEST(CollectiveWatchdog, RecordsCompletionsItSees) {
  auto t = tracing(false);
  t->watchdog = std::make_unique<CollectiveWatchdog>([](const Error&) { ADD_FAILURE() << "no timeout expected"; },
                                                     std::chrono::milliseconds(5));
  auto inner = std::make_shared<GatedGroup>();
  TracedProcessGroup group(inner, t);
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {12});
  auto work = group.all_reduce(x, ReduceOp::SUM);
  ASSERT_TRUE(work.ok());
  EXPECT_EQ(t->recorder.entries()[0].state, CollectiveState::kStarted);
  EXPECT_EQ(t->watchdog->watched(), 1u);
  inner->last->open();
  for (int i = 0; i < 2000 && t->watchdog->watched() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(t->watchdog->watched(), 0u);
  EXPECT_EQ(t->recorder.entries()[0].state, CollectiveState::kCompleted) << "recorded by the watchdog's test";
  EXPECT_TRUE((*work)->test());
}

TEST(CollectiveWatchdog, FiresOncePastTheTimeoutWithTorchsLine) {
  auto t = tracing(false, std::chrono::milliseconds(100));
  std::mutex mutex;
  std::vector<Error> fired;
  t->watchdog = std::make_unique<CollectiveWatchdog>(
      [&](const Error& e) {
        std::lock_guard<std::mutex> lock(mutex);
        fired.push_back(e);
      },
      std::chrono::milliseconds(5));
  auto inner = std::make_shared<GatedGroup>();
  TracedProcessGroup group(inner, t);
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {3, 4});
  ASSERT_TRUE(wait_for(group.barrier()).ok());
  ASSERT_TRUE(wait_for(group.barrier()).ok());
  auto work = group.all_reduce(x, ReduceOp::SUM);
  ASSERT_TRUE(work.ok());
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < 5000; ++i) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!fired.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto waited = std::chrono::steady_clock::now() - started;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // it fires once, not every round
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_GE(waited, std::chrono::milliseconds(90));
  EXPECT_EQ(fired[0].code, ErrorCode::CollectiveTimeout);
  const std::string& m = fired[0].message;
  EXPECT_EQ(m.rfind("Watchdog caught collective operation timeout: Work(SeqNum=3, OpType=ALLREDUCE, NumelIn=12, "
                    "NumelOut=12, Timeout(ms)=100) ran for ",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find(" milliseconds before timing out"), std::string::npos) << m;
  EXPECT_TRUE(t->watchdog->fired());
  const auto entries = t->recorder.entries();
  EXPECT_EQ(entries.back().state, CollectiveState::kFailed);
  EXPECT_EQ(entries.back().error, m);
  inner->last->open();  // let the Work go
}

// A backend whose all_reduce blocks in the call until told to return (a blocking MPI call that
// never returns, say).
class BlockingGroup final : public ProcessGroup {
 public:
  const std::string& name() const override { return name_; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string_view backend() const override { return "blocking"; }
  WorkResult all_reduce(Tensor&, ReduceOp) override {
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return completed_work({});
  }
  WorkResult all_gather_into_tensor(const Tensor&, Tensor&) override { return completed_work({}); }
  WorkResult reduce_scatter_tensor(const Tensor&, Tensor&, ReduceOp) override { return completed_work({}); }
  WorkResult all_to_all_single(const Tensor&, Tensor&, std::span<const int64_t>, std::span<const int64_t>) override {
    return completed_work({});
  }
  WorkResult broadcast(Tensor&, int) override { return completed_work({}); }
  WorkResult barrier() override { return completed_work({}); }
  std::atomic<bool> release{false};

 private:
  std::string name_ = "world";
};

TEST(CollectiveWatchdog, FiresWhileABlockingCallHasNotReturned) {
  auto t = tracing(false, std::chrono::milliseconds(50));
  std::atomic<bool> fired{false};
  t->watchdog = std::make_unique<CollectiveWatchdog>([&](const Error&) { fired = true; }, std::chrono::milliseconds(5));
  auto inner = std::make_shared<BlockingGroup>();
  TracedProcessGroup group(inner, t);
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {2});
  std::thread caller([&] {
    CollectiveOrigin waited("all_reduce", /*waited_at_once=*/true);
    EXPECT_TRUE(wait_for(group.all_reduce(x, ReduceOp::SUM)).ok());
  });
  for (int i = 0; i < 5000 && !fired.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(fired.load()) << "the watchdog watches a collective from before the backend is called";
  inner->release = true;
  caller.join();
  // It completed at last, and the record keeps the watchdog's line.
  EXPECT_EQ(t->recorder.entries().back().state, CollectiveState::kCompleted);
  EXPECT_EQ(t->recorder.entries().back().error.rfind("Watchdog caught collective operation timeout", 0), 0u);
}

// A completion the watchdog records can release the last owner of the watchdog itself (the
// tracing that owns it, when the session that held it is gone): the watchdog is then destroyed
// on its own thread, which cannot join itself. It must let the thread end instead of throwing
// std::system_error (terminate), which is what it did.
TEST(CollectiveWatchdog, MayBeDestroyedByACompletionItRecords) {
  struct Owner {
    std::unique_ptr<CollectiveWatchdog> watchdog;
  };
  auto owner = std::make_shared<Owner>();
  owner->watchdog = std::make_unique<CollectiveWatchdog>(nullptr, std::chrono::milliseconds(1));
  std::atomic<bool> released{false};
  auto watched = std::make_shared<WatchedWork>();
  watched->started = std::chrono::steady_clock::now();
  watched->timeout = std::chrono::hours(1);
  watched->on_completed = [keep = owner, &released]() mutable {
    keep.reset();  // the last owner: ~CollectiveWatchdog runs here, on the watchdog's thread
    released = true;
  };
  owner->watchdog->watch(watched);
  owner.reset();
  auto done = completed_work(Status::Ok());
  ASSERT_TRUE(done.ok());
  watched->set_work(*done);
  for (int i = 0; i < 5000 && !released.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(released.load()) << "the watchdog recorded the completion";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the let-go thread ends by itself
}

// all_reduce(x) then wait_tensor, run by the executor over a traced single-process group.
ProgramWithWeights collective_program() {
  testdata::ProgramBuilder p("collective_hooks_test");
  p.group("world", {0}, "single");
  const uint32_t all_reduce = p.op("_c10d_functional::all_reduce", "default");
  const uint32_t wait = p.op("_c10d_functional::wait_tensor", "default");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  const uint32_t reduced = g.tensor("all_reduce_3", ScalarType::FLOAT32, {4});
  const uint32_t done = g.tensor("wait_tensor", ScalarType::FLOAT32, {4});
  g.node("all_reduce_3", all_reduce,
         Args{{"input", arg::tensor(x)}, {"reduce_op", arg::string("sum")}, {"group_name", arg::string("world")}}, {},
         {arg::tensor(reduced)});
  g.node("wait_tensor", wait, Args{{"tensor", arg::tensor(reduced)}}, {}, {arg::tensor(done)});
  g.user_output(arg::tensor(done));
  return p.finish();
}

TEST(TracedProcessGroup, RecordsTheProgramNodeThatIssuedTheCollective) {
  auto file = verify_in_memory(collective_program());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto t = tracing(true);
  auto registry = std::make_shared<ProcessGroupRegistry>();
  registry->bind("world", std::make_shared<SingleProcessGroup>("world"));
  trace_process_groups(*registry, t);
  ExecutorOptions options;
  options.process_groups = registry;
  auto loaded = Executor::load(std::move(*file), options);
  ASSERT_TRUE(loaded.ok()) << loaded.error().to_string();
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {4});
  for (int run = 0; run < 2; ++run) ASSERT_TRUE((*loaded)->run({{"x", x}}).ok());
  auto entries = t->recorder.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[1].node, "all_reduce_3");
  EXPECT_EQ(entries[1].collective_seq_id, 2);
  EXPECT_EQ(entries[1].state, CollectiveState::kCompleted);

  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  auto failed = (*loaded)->run({{"x", x}});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::NanInCollective) << failed.error().to_string();
  EXPECT_NE(failed.error().message.find("node 'all_reduce_3'"), std::string::npos) << failed.error().message;
  EXPECT_NE(failed.error().message.find("flat index 3"), std::string::npos) << failed.error().message;
}

// Rank `rank`'s dump; its entries are in groups spanning the world, so its group rank is `rank`.
FlightRecorderDump dump_of(int rank, std::vector<CollectiveRecord> entries, int world = 2) {
  FlightRecorderDump d;
  d.rank = rank;
  d.world_size = world;
  d.reason = "exit";
  d.recorded = entries.size();
  for (auto& e : entries) e.pg_rank = rank;
  d.entries = std::move(entries);
  return d;
}

TEST(FlightRecorderAnalysis, AgreeingDumpsAgree) {
  auto a = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1), record("barrier", 2)}),
                                    dump_of(1, {record("all_reduce", 1), record("barrier", 2)})});
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_TRUE(a->agree()) << analysis_text(*a);
  EXPECT_NE(analysis_text(*a).find("the dumps agree"), std::string::npos);
  EXPECT_NE(analysis_json(*a).find("\"agree\": true"), std::string::npos);
}

TEST(FlightRecorderAnalysis, NamesTheRankThatNeverEnteredACollective) {
  CollectiveRecord stuck = record("all_reduce", 2);
  stuck.node = "all_reduce_1";
  stuck.state = CollectiveState::kFailed;
  auto a = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1), stuck}), dump_of(1, {record("all_reduce", 1)})});
  ASSERT_TRUE(a.ok());
  ASSERT_FALSE(a->agree());
  const auto& f = a->findings.front();
  EXPECT_EQ(f.kind, "not_entered");
  EXPECT_EQ(f.ranks, std::vector<int>{1});
  EXPECT_EQ(f.others, std::vector<int>{0});
  EXPECT_EQ(f.seq, 2);
  EXPECT_EQ(f.message,
            "ranks [1] never entered all_reduce SeqNum=2 of process group 'world' (node 'all_reduce_1'), which ranks [0] "
            "entered; it never completed on ranks [0]");
  EXPECT_NE(analysis_json(*a).find("\"first_mismatch\": \"ranks [1] never entered"), std::string::npos);
}

CollectiveRecord in_group_of(int size, CollectiveRecord r) {
  r.pg_size = size;
  return r;
}

TEST(FlightRecorderAnalysis, NamesOpSizeAndDtypeMismatches) {
  auto op = analyze_flight_recorder({dump_of(0, {in_group_of(3, record("all_reduce", 1))}, 3),
                                     dump_of(1, {in_group_of(3, record("all_reduce", 1))}, 3),
                                     dump_of(2, {in_group_of(3, record("broadcast", 1))}, 3)});
  ASSERT_TRUE(op.ok());
  ASSERT_EQ(op->findings.size(), 1u) << analysis_text(*op);
  EXPECT_EQ(op->findings[0].kind, "op_mismatch");
  EXPECT_EQ(op->findings[0].ranks, std::vector<int>{2});
  EXPECT_EQ(op->findings[0].message,
            "SeqNum=1 of process group 'world': ranks [2] issued broadcast where ranks [0, 1] issued all_reduce");

  CollectiveRecord bigger = record("all_reduce", 1);
  bigger.input_sizes = bigger.output_sizes = {{3, 5}};
  auto size = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1)}), dump_of(1, {bigger})});
  ASSERT_TRUE(size.ok());
  ASSERT_FALSE(size->agree());
  EXPECT_EQ(size->findings[0].kind, "size_mismatch");
  EXPECT_NE(size->findings[0].message.find("f32[3,5] -> f32[3,5] where ranks"), std::string::npos)
      << size->findings[0].message;

  CollectiveRecord half = record("all_reduce", 1);
  half.input_dtypes = half.output_dtypes = {"bf16"};
  auto dtype = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1)}), dump_of(1, {half})});
  ASSERT_TRUE(dtype.ok());
  ASSERT_FALSE(dtype->agree());
  EXPECT_EQ(dtype->findings[0].kind, "dtype_mismatch");
  EXPECT_NE(dtype->findings[0].message.find("bf16[3,4]"), std::string::npos) << dtype->findings[0].message;
}

// "Agree" only when there was something to compare (a job that timed out with
// NRT_FR_BUFFER_SIZE=0 left dumps without entries).
TEST(FlightRecorderAnalysis, DumpsWithNothingToCompareDoNotAgree) {
  FlightRecorderDump kept_none = dump_of(0, {});
  kept_none.recorded = 5;
  auto a = analyze_flight_recorder({kept_none, dump_of(1, {})});
  ASSERT_TRUE(a.ok());
  ASSERT_FALSE(a->agree());
  EXPECT_EQ(a->findings[0].kind, "nothing_recorded");
  EXPECT_EQ(analysis_text(*a).find("the dumps agree"), std::string::npos);
  EXPECT_NE(analysis_text(*a).find("ranks [0] recorded collectives but kept none"), std::string::npos) << analysis_text(*a);
}

// Ranks that describe one group differently contradict each other: no verdict of "agree".
TEST(FlightRecorderAnalysis, RanksDescribingAGroupDifferentlyAreNamed) {
  auto sizes = analyze_flight_recorder({dump_of(0, {in_group_of(3, record("all_reduce", 1))}, 3),
                                        dump_of(1, {in_group_of(2, record("all_reduce", 1))}, 3),
                                        dump_of(2, {in_group_of(3, record("all_reduce", 1))}, 3)});
  ASSERT_TRUE(sizes.ok());
  ASSERT_FALSE(sizes->agree());
  EXPECT_EQ(sizes->findings[0].kind, "inconsistent_group");
  EXPECT_EQ(sizes->findings[0].message,
            "process group 'world' is described inconsistently: size 2 on ranks [1], size 3 on ranks [0, 2]");

  FlightRecorderDump twin = dump_of(1, {record("all_reduce", 1)});
  twin.entries[0].pg_rank = 0;
  auto ranks = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1)}), twin});
  ASSERT_TRUE(ranks.ok());
  ASSERT_FALSE(ranks->agree());
  EXPECT_EQ(ranks->findings[0].message, "process group 'world' is described inconsistently: ranks [0, 1] all claim group rank 0");
}

// Names from a dump are printed escaped; many findings are summarized.
TEST(FlightRecorderAnalysis, EscapesNamesAndSummarizesHugeFindings) {
  std::vector<CollectiveRecord> many;
  for (int64_t seq = 1; seq <= 100; ++seq) {
    many.push_back(record("all_reduce", seq));
    many.back().node = "node\x1b[2K\r";
  }
  auto a = analyze_flight_recorder({dump_of(0, many), dump_of(1, {})});
  ASSERT_TRUE(a.ok());
  ASSERT_FALSE(a->agree());
  EXPECT_EQ(a->findings.size(), 100u);
  const std::string text = analysis_text(*a);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << "a terminal escape reached the output";
  EXPECT_NE(text.find("(node 'node\\x1b[2K\\r')"), std::string::npos) << text;
  EXPECT_NE(text.find("  and 80 more\n"), std::string::npos) << text;
}

TEST(FlightRecorderAnalysis, NamesRanksWithoutADumpAndRefusesMixedJobs) {
  auto missing = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1)}, 3), dump_of(2, {record("all_reduce", 1)}, 3)});
  ASSERT_TRUE(missing.ok());
  ASSERT_FALSE(missing->agree());
  EXPECT_EQ(missing->findings[0].kind, "missing_dump");
  EXPECT_EQ(missing->findings[0].ranks, std::vector<int>{1});

  EXPECT_FALSE(analyze_flight_recorder({dump_of(0, {}), dump_of(0, {})}).ok()) << "two dumps of one rank";
  EXPECT_FALSE(analyze_flight_recorder({dump_of(0, {}, 2), dump_of(1, {}, 3)}).ok()) << "two world sizes";
  EXPECT_FALSE(analyze_flight_recorder({}).ok());
}

TEST(FlightRecorderAnalysis, OnlyComparesWhatEveryRingStillHolds) {
  // Rank 0's ring wrapped: it holds SeqNum 3..4 of 4; rank 1 holds 1..4. SeqNum 1..2 are not missing.
  FlightRecorderDump wrapped = dump_of(0, {record("all_reduce", 3), record("all_reduce", 4)});
  wrapped.recorded = 4;
  auto a = analyze_flight_recorder({wrapped, dump_of(1, {record("all_reduce", 1), record("all_reduce", 2),
                                                       record("all_reduce", 3), record("all_reduce", 4)})});
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->agree()) << analysis_text(*a);
  // A rank behind: rank 1 stopped at SeqNum 2 of 3.
  auto behind = analyze_flight_recorder({dump_of(0, {record("all_reduce", 1), record("all_reduce", 2), record("barrier", 3)}),
                                         dump_of(1, {record("all_reduce", 1), record("all_reduce", 2)})});
  ASSERT_TRUE(behind.ok());
  ASSERT_EQ(behind->findings.size(), 1u);
  EXPECT_EQ(behind->findings[0].seq, 3);
  EXPECT_EQ(behind->findings[0].ranks, std::vector<int>{1});
}

}  // namespace
}  // namespace nrt::exec
