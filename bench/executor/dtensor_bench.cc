// DTensor execution against the single process, under mpirun -np 2 (docs/DISTRIBUTED.md):
//  1. mlp: x [32, d] -> fc1 (d -> 4d) -> relu -> fc2 (4d -> d), d = 1024, fc1 colwise and fc2
//     rowwise (the plan `nrt-inspect shard` takes): the median time of the sharded run against the
//     unsharded program run by every rank alone (np 1's work; the machine loaded alike), and the
//     bytes each rank sent against the plan's minimum, one all_reduce of the [32, d] output:
//     2 (n-1)/n x its bytes.
//  2. argmax: logits [8, 32768] Shard(1), argmax over the vocabulary: the bytes each rank sent
//     for the (value, index) exchange against all-gathering the logits (ratio), and both times.
//  3. weight_rss: a 512 MiB weight [131072, 1024] Shard(0), y = linear(x, W): each rank's VmRSS
//     growth over open + load + run against the unsharded program's (ratio ~ 1/n).
// Every sharded result is checked against the unsharded one (mlp to 1e-4 of the largest
// magnitude, argmax exactly); a mismatch fails the benchmark.
//
// Usage: mpirun -np 2 dtensor_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: d = 256, a 4096
// vocabulary, a 16 MiB weight, few iterations). Without a launcher it says so and exits 0.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/executor/mpi_timing.h"
#include "bench/resident_memory.h"
#include "bench/scratch_dir.h"
#include "executor/comm/mpi_process_group.h"
#include "executor/comm/rank_world.h"
#include "executor/dtensor/shard_plan.h"
#include "serializer/program_file.h"
#include "session/session.h"
#include "serializer/write_program.h"
#include "testdata/program_builder.h"

namespace {

using nrt::Error;
using nrt::ProgramWithWeights;
using nrt::Result;
using nrt::ScalarType;
using nrt::exec::Tensor;
namespace arg = nrt::testdata::arg;
using Args = std::vector<std::pair<std::string, nrt::fb::ArgumentUnion>>;

int rank = 0, world_size = 1;

std::string file_in(const std::string& dir, const std::string& name) { return dir + "/" + name; }

bool fail(const std::string& what) {
  std::fprintf(stderr, "dtensor_bench (rank %d): %s\n", rank, what.c_str());
  return false;
}

void say(const char* format, double a = 0, double b = 0, double c = 0, double d = 0) {
  if (rank == 0) std::printf(format, a, b, c, d);
}

// Rank 0 reports each target once. A world of one shards nothing and sends nothing, so its ratios
// say nothing about sharding: no target lines there.
void report(const std::string& what, double value, nrt::bench::Goal goal, double bound) {
  if (rank == 0 && world_size > 1) nrt::bench::report_target("dtensor_bench/" + what, value, goal, bound);
}

// A program of one entry graph whose nodes `build` adds; weights as (fqn, sizes) in order.
struct Weight {
  std::string fqn;
  std::vector<int64_t> sizes;
};

ProgramWithWeights linear_program(const std::vector<Weight>& weights, int64_t batch, int64_t in_features,
                                  bool relu_between) {
  nrt::testdata::ProgramBuilder p("nrt bench: bench/executor/dtensor_bench.cc");
  const uint32_t linear = p.op("aten::linear", "default");
  const uint32_t relu = p.op("aten::relu", "default");
  for (const auto& w : weights) {
    int64_t count = 1;
    for (int64_t s : w.sizes) count *= s;
    const float scale = 1.0f / std::sqrt(static_cast<float>(w.sizes.back()));
    p.weight(w.fqn, p.storage(nrt::testdata::pattern_f32(count, scale)),
             nrt::testdata::tensor_meta(ScalarType::FLOAT32, w.sizes), true);
  }
  auto g = p.graph("forward", true);
  std::vector<uint32_t> values;
  for (const auto& w : weights) {
    std::string name = "p_" + w.fqn;
    std::replace(name.begin(), name.end(), '.', '_');
    values.push_back(g.tensor(name, ScalarType::FLOAT32, w.sizes));
  }
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {batch, in_features});
  for (size_t i = 0; i < weights.size(); ++i) g.input(arg::tensor(values[i]), nrt::fb::InputKind::PARAMETER, weights[i].fqn);
  g.user_input(arg::tensor(x));
  // Weights come in (weight, bias) pairs, or a lone weight.
  uint32_t h = x;
  for (size_t i = 0; i < weights.size();) {
    const bool has_bias = i + 1 < weights.size() && weights[i + 1].sizes.size() == 1;
    const std::string name = "linear_" + std::to_string(i);
    const uint32_t out = g.tensor(name, ScalarType::FLOAT32, {batch, weights[i].sizes[0]});
    Args args{{"input", arg::tensor(h)}, {"weight", arg::tensor(values[i])}};
    if (has_bias) args.emplace_back("bias", arg::tensor(values[i + 1]));
    g.node(name, linear, args, {}, {arg::tensor(out)});
    h = out;
    i += has_bias ? 2 : 1;
    if (relu_between && i < weights.size()) {
      const uint32_t r = g.tensor("relu_" + std::to_string(i), ScalarType::FLOAT32, {batch, weights[i - 2].sizes[0]});
      g.node("relu_" + std::to_string(i), relu, Args{{"self", arg::tensor(h)}}, {}, {arg::tensor(r)});
      h = r;
    }
  }
  g.user_output(arg::tensor(h));
  return p.finish();
}

ProgramWithWeights argmax_program(int64_t rows, int64_t vocab, bool with_argmax) {
  nrt::testdata::ProgramBuilder p("nrt bench: bench/executor/dtensor_bench.cc");
  const uint32_t op = with_argmax ? p.op("aten::argmax", "default") : p.op("aten::clone", "default");
  auto g = p.graph("forward", true);
  const uint32_t logits = g.tensor("logits", ScalarType::FLOAT32, {rows, vocab});
  g.user_input(arg::tensor(logits));
  const uint32_t out = with_argmax ? g.tensor("argmax", ScalarType::INT64, {rows})
                                   : g.tensor("clone", ScalarType::FLOAT32, {rows, vocab});
  if (with_argmax) {
    g.node("argmax", op, Args{{"self", arg::tensor(logits)}, {"dim", arg::integer(1)}}, {}, {arg::tensor(out)});
  } else {
    g.node("clone", op, Args{{"self", arg::tensor(logits)}}, {}, {arg::tensor(out)});
  }
  g.user_output(arg::tensor(out));
  return p.finish();
}

// Deterministic values in [-1, 1) without a period that lines up with shards.
Tensor filled(std::vector<int64_t> sizes, uint64_t seed) {
  Tensor t = Tensor::empty(ScalarType::FLOAT32, std::move(sizes));
  float* v = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t z = (static_cast<uint64_t>(i) + seed) * 0x9e3779b97f4a7c15ull;
    z ^= z >> 29;
    v[i] = static_cast<float>(static_cast<double>(z >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return t;
}

// Rank 0 writes the program; every rank opens it after the barrier.
bool write_shared(const std::string& path, ProgramWithWeights program) {
  bool ok = true;
  if (rank == 0) {
    std::vector<std::span<const uint8_t>> storages;
    for (const auto& s : program.storages) storages.emplace_back(s);
    if (auto s = nrt::write_program_file(path, std::move(program.program), storages); !s) ok = fail(s.error().to_string());
  }
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// A program opened for this rank through the library's entry point (session/session.h): whole,
// by every rank alone (the baseline), or sharded by a plan over the world, its groups traced for
// the bytes sent.
struct Loaded {
  std::unique_ptr<nrt::Session> session;
  nrt::exec::NamedInputs inputs;  // this rank's
};

nrt::exec::RankWorld the_world;

Result<Loaded> load(const std::string& path, const std::string& plan_json, nrt::exec::NamedInputs global_inputs) {
  Loaded loaded;
  loaded.inputs = std::move(global_inputs);
  if (plan_json.empty()) {
    auto session = nrt::Session::open(path);
    if (!session) return session.error();
    loaded.session = std::move(*session);
    return loaded;
  }
  nrt::SessionOptions options;
  auto plan = nrt::dist::parse_shard_plan(plan_json);
  if (!plan) return plan.error();
  options.shard_plan = std::move(*plan);
  auto session = nrt::Session::open(path, the_world, options);
  if (!session) return session.error();
  loaded.session = std::move(*session);
  // This rank's shards of the inputs, cut once: the timed runs measure the runs alone.
  auto local = loaded.session->local_inputs(std::move(loaded.inputs));
  if (!local) return local.error();
  loaded.inputs = std::move(*local);
  return loaded;
}

// One run; its first output, a tensor.
Result<Tensor> run_once(Loaded& loaded) {
  auto outputs = loaded.session->run(loaded.inputs, nrt::InputsAre::kLocal);
  if (!outputs) return outputs.error();
  const auto* tensor = outputs->empty() ? nullptr : std::get_if<Tensor>(&(*outputs)[0].value);
  if (tensor == nullptr) return nrt::make_error(nrt::ErrorCode::Internal, "the first output is not a tensor");
  return *tensor;
}

// The slowest rank's median run time, and the last run's output.
Result<Tensor> timed_runs(Loaded& loaded, int iterations, double* seconds) {
  Tensor last;
  std::optional<Error> problem;
  bool ok = true;
  *seconds = nrt::bench::slowest_median_seconds(
      iterations,
      [&] {
        auto out = run_once(loaded);
        if (!out) {
          problem = out.error();
          return false;
        }
        last = std::move(*out);
        return true;
      },
      ok);
  if (problem) return *problem;
  return last;
}

int64_t max_over_ranks(int64_t mine) {
  int64_t all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

bool agree(bool mine) {
  int m = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&m, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

std::string mlp_plan() {
  return R"json({"mesh": {"shape": [)json" + std::to_string(world_size) +
         R"json(]}, "modules": {"fc1": "colwise", "fc2": "rowwise"}})json";
}

bool bench_mlp(const std::string& dir, bool smoke) {
  const int64_t d = smoke ? 256 : 1024, batch = 32;
  const int iterations = smoke ? 3 : 30;
  const std::string path = file_in(dir, "mlp.nrt");
  if (!write_shared(path, linear_program({{"fc1.weight", {4 * d, d}}, {"fc1.bias", {4 * d}},
                                          {"fc2.weight", {d, 4 * d}}, {"fc2.bias", {d}}},
                                         batch, d, true))) {
    return false;
  }
  nrt::exec::NamedInputs inputs{{"x", filled({batch, d}, 1)}};
  auto whole = load(path, "", inputs);
  auto sharded = whole ? load(path, mlp_plan(), inputs) : Result<Loaded>(whole.error());
  if (!agree(sharded.ok())) return fail(sharded ? "another rank failed" : sharded.error().to_string());
  double t_whole = 0, t_sharded = 0;
  auto expected = timed_runs(*whole, iterations, &t_whole);
  auto got = timed_runs(*sharded, iterations, &t_sharded);
  if (!agree(expected && got)) return fail(!expected ? expected.error().to_string() : !got ? got.error().to_string() : "another rank failed");
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < expected->numel(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(expected->data<float>()[i])));
    worst = std::max(worst, static_cast<double>(std::fabs(expected->data<float>()[i] - got->data<float>()[i])));
  }
  const int64_t sent = max_over_ranks(sharded->session->tracing()->counts.bytes_sent());
  const int64_t minimum = nrt::exec::ring_bytes_sent("all_reduce", world_size, 0, batch * d * 4);
  say("mlp d=%.0f hidden=%.0f batch 32: ", static_cast<double>(d), static_cast<double>(4 * d));
  say("np 1 %.3f ms, np %.0f %.3f ms per run, speedup %.2fx\n", t_whole * 1e3, world_size, t_sharded * 1e3,
      t_whole / t_sharded);
  const double sent_over_minimum = minimum > 0 ? double(sent) / double(minimum) : 1.0;
  say("mlp bytes sent per rank %.0f, plan minimum %.0f (1 all_reduce of the output), ratio %.2f\n",
      static_cast<double>(sent), static_cast<double>(minimum), sent_over_minimum);
  // The plan's minimum is what a colwise->rowwise MLP must send: anything above it is extra traffic.
  report("mlp_bytes_sent_over_plan_minimum", sent_over_minimum, nrt::bench::Goal::kAtMost, 1.0);
  say("mlp max abs difference to np 1 %.3g (largest output magnitude %.3g)\n", worst, scale);
  if (worst > 1e-4 * std::max(scale, 1.0)) return fail("the sharded MLP differs from the single process");
  return true;
}

bool bench_argmax(const std::string& dir, bool smoke) {
  const int64_t rows = 8, vocab = smoke ? 4096 : 32768;
  const int iterations = smoke ? 3 : 50;
  const std::string argmax_path = file_in(dir, "argmax.nrt"), gather_path = file_in(dir, "gather.nrt");
  if (!write_shared(argmax_path, argmax_program(rows, vocab, true)) ||
      !write_shared(gather_path, argmax_program(rows, vocab, false))) {
    return false;
  }
  const std::string plan = R"json({"mesh": {"shape": [)json" + std::to_string(world_size) +
                           R"json(]}, "inputs": {"logits": ["Shard(1)"]}})json";
  nrt::exec::NamedInputs inputs{{"logits", filled({rows, vocab}, 7)}};
  auto whole = load(argmax_path, "", inputs);
  auto exchange = whole ? load(argmax_path, plan, inputs) : Result<Loaded>(whole.error());
  auto gather = exchange ? load(gather_path, plan, inputs) : Result<Loaded>(exchange.error());
  if (!agree(gather.ok())) return fail(gather ? "another rank failed" : gather.error().to_string());
  double t_whole = 0, t_exchange = 0, t_gather = 0;
  auto expected = timed_runs(*whole, iterations, &t_whole);
  auto got = timed_runs(*exchange, iterations, &t_exchange);
  auto gathered = timed_runs(*gather, iterations, &t_gather);
  if (!agree(expected && got && gathered)) return fail("a run failed");
  const bool same = std::memcmp(expected->data<int64_t>(), got->data<int64_t>(), rows * sizeof(int64_t)) == 0;
  const int64_t exchange_bytes = max_over_ranks(exchange->session->tracing()->counts.bytes_sent());
  const int64_t gather_bytes = max_over_ranks(gather->session->tracing()->counts.bytes_sent());
  say("argmax over a %.0f vocabulary, %.0f rows, on %.0f ranks: ", static_cast<double>(vocab),
      static_cast<double>(rows), world_size);
  const double exchange_over_gather = gather_bytes > 0 ? double(exchange_bytes) / double(gather_bytes) : 1.0;
  say("bytes sent per rank %.0f (exchange) vs %.0f (all-gathering the logits), ratio %.2e\n",
      static_cast<double>(exchange_bytes), static_cast<double>(gather_bytes), exchange_over_gather);
  // No number is stated: the exchange sends 12 bytes per row against a shard of the row's logits,
  // 12 n / (4 vocab) on n ranks (1.46e-3 in smoke: 96 / 65536; 1.83e-4 at 32k, docs/DISTRIBUTED.md),
  // so 0.01 holds with room and still fails if the logits are gathered.
  report("argmax_exchange_bytes_over_all_gather", exchange_over_gather, nrt::bench::Goal::kAtMost, 0.01);
  say("argmax time: sharded %.3f ms, all-gathering the logits alone %.3f ms, np 1 argmax %.3f ms\n",
      t_exchange * 1e3, t_gather * 1e3, t_whole * 1e3);
  if (!agree(same)) return fail("the sharded argmax differs from the single process");
  return true;
}

// VmRSS growth (KiB) over opening, loading and running `path` once.
Result<int64_t> rss_growth(const std::string& path, const std::string& plan, const nrt::exec::NamedInputs& inputs) {
  const int64_t before = static_cast<int64_t>(nrt::bench::vm_rss_kib().value_or(0));
  auto loaded = load(path, plan, inputs);
  if (!loaded) return loaded.error();
  auto out = run_once(*loaded);
  if (!out) return out.error();
  return static_cast<int64_t>(nrt::bench::vm_rss_kib().value_or(0)) - before;
}

bool bench_weight_rss(const std::string& dir, bool smoke) {
  const int64_t cols = 1024, rows = (smoke ? 16 : 512) * (int64_t{1} << 20) / (cols * 4);
  const std::string path = file_in(dir, "weight.nrt");
  if (!write_shared(path, linear_program({{"proj.weight", {rows, cols}}}, 1, cols, false))) return false;
  const std::string plan = R"json({"mesh": {"shape": [)json" + std::to_string(world_size) +
                           R"json(]}, "parameters": {"proj.weight": ["Shard(0)"]}})json";
  nrt::exec::NamedInputs inputs{{"x", filled({1, cols}, 3)}};
  // Sharded first: the whole program's run would leave nothing for it to fault in, but RSS counts
  // only this process's mapped pages, so the order does not flatter either.
  auto sharded = rss_growth(path, plan, inputs);
  MPI_Barrier(MPI_COMM_WORLD);
  auto whole = sharded ? rss_growth(path, "", inputs) : Result<int64_t>(sharded.error());
  if (!agree(whole.ok())) return fail(whole ? "another rank failed" : whole.error().to_string());
  const int64_t worst_sharded = max_over_ranks(*sharded), worst_whole = max_over_ranks(*whole);
  say("weight_rss: a %.0f MiB weight Shard(0) on %.0f ranks: VmRSS growth per rank %.1f MiB sharded (largest rank)",
      static_cast<double>(rows * cols * 4 >> 20), world_size, static_cast<double>(worst_sharded) / 1024.0);
  const double sharded_over_whole = worst_whole > 0 ? double(worst_sharded) / double(worst_whole) : 1.0;
  say(" vs %.1f MiB whole, ratio %.3f (ideal %.3f)\n", static_cast<double>(worst_whole) / 1024.0,
      sharded_over_whole, 1.0 / world_size);
  // The header states ~1/n; 0.1 of slack (0.6 on 2 ranks) for the pages besides the weight's shard.
  report("weight_rss_sharded_over_whole", sharded_over_whole, nrt::bench::Goal::kAtMost, 1.0 / world_size + 0.1);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  if (!nrt::exec::detect_mpi_launcher()) {
    std::printf("dtensor_bench: no launcher, nothing to shard; run under mpirun -np 2\n");
    return 0;
  }
  auto world = nrt::exec::join_rank_world("dtensor_bench world");
  if (!world) {
    fail(world.error().to_string());
    return 1;
  }
  the_world = std::move(*world);
  rank = the_world.rank;
  world_size = the_world.size;
  // One machine: rank 0's scratch directory holds the programs every rank opens.
  std::optional<nrt::bench::ScratchDir> scratch;
  if (rank == 0) scratch.emplace("dtensor_bench");
  std::vector<char> shared(4096, 0);
  if (rank == 0) std::snprintf(shared.data(), shared.size(), "%s", scratch->path().c_str());
  MPI_Bcast(shared.data(), static_cast<int>(shared.size()), MPI_CHAR, 0, MPI_COMM_WORLD);
  const std::string dir = shared.data();
  bool ok = agree(!dir.empty());
  ok = ok && bench_mlp(dir, smoke);
  ok = ok && bench_argmax(dir, smoke);
  ok = ok && bench_weight_rss(dir, smoke);
  ok = agree(ok);  // every rank is done with the files before rank 0 removes them
  return ok ? 0 : 1;
}
