// Communication/computation overlap (issue 9): an all_reduce of 16 MiB (f32[4Mi], sum over the
// world) with an independent 512^3 aten::mm scheduled between it and its wait_tensor, against the
// same two run back to back (all_reduce, wait_tensor, then mm). Both programs are run alternately
// in the same process, median of the repetitions:
//   ratio = overlapped time / back-to-back time     below 1: the matmul ran while the
//                                                    all_reduce was in flight
// Also printed: each piece alone (the all_reduce with its wait; the mm), for the ideal
// max(comm, mm) / (comm + mm).
// Usage: mpirun -np 2 overlap_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: 3 repetitions).
// Without a launcher it runs in a world of one (no communication: a smoke of the programs only)
// and says so.
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "executor/runtime/executor.h"
#include "executor/comm/mpi_process_group.h"
#include "io/random_inputs.h"
#include "executor/comm/single_process_group.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace {

using nrt::ScalarType;
namespace arg = nrt::testdata::arg;
using Args = std::vector<std::pair<std::string, nrt::fb::ArgumentUnion>>;

constexpr int64_t kReduceElements = int64_t{4} << 20;  // 16 MiB of f32
constexpr int64_t kMatmul = 512;

enum class Shape { kOverlapped, kBackToBack, kCommOnly, kMatmulOnly };

nrt::ProgramWithWeights program(Shape shape) {
  nrt::testdata::ProgramBuilder p("overlap_bench");
  p.group("world", {}, "mpi");
  const uint32_t all_reduce = p.op("_c10d_functional::all_reduce", "default");
  const uint32_t wait = p.op("_c10d_functional::wait_tensor", "default");
  const uint32_t mm = p.op("aten::mm", "default");
  auto g = p.graph("main", true);
  const auto f32 = ScalarType::FLOAT32;
  const uint32_t x = g.tensor("x", f32, {kReduceElements});
  const uint32_t a = g.tensor("a", f32, {kMatmul, kMatmul});
  const uint32_t b = g.tensor("b", f32, {kMatmul, kMatmul});
  for (uint32_t v : {x, a, b}) g.user_input(arg::tensor(v));
  const uint32_t reduced = g.tensor("all_reduce", f32, {kReduceElements});
  const uint32_t done = g.tensor("wait_tensor", f32, {kReduceElements});
  const uint32_t product = g.tensor("mm", f32, {kMatmul, kMatmul});
  auto issue = [&] {
    g.node("all_reduce", all_reduce,
           Args{{"input", arg::tensor(x)}, {"reduce_op", arg::string("sum")}, {"group_name", arg::string("world")}},
           {}, {arg::tensor(reduced)});
  };
  auto finish = [&] { g.node("wait_tensor", wait, Args{{"tensor", arg::tensor(reduced)}}, {}, {arg::tensor(done)}); };
  auto multiply = [&] {
    g.node("mm", mm, Args{{"self", arg::tensor(a)}, {"mat2", arg::tensor(b)}}, {}, {arg::tensor(product)});
  };
  switch (shape) {
    case Shape::kOverlapped: issue(); multiply(); finish(); break;
    case Shape::kBackToBack: issue(); finish(); multiply(); break;
    case Shape::kCommOnly: issue(); finish(); break;
    case Shape::kMatmulOnly: multiply(); break;
  }
  if (shape != Shape::kMatmulOnly) g.user_output(arg::tensor(done));
  if (shape != Shape::kCommOnly) g.user_output(arg::tensor(product));
  return p.finish();
}

int fail(const std::string& what) {
  std::fprintf(stderr, "overlap_bench: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  const bool launched = nrt::exec::detect_mpi_launcher().has_value();
  int rank = 0, world = 1;
  if (launched) {
    if (auto s = nrt::exec::init_mpi(); !s) return fail(s.error().to_string());
    auto w = nrt::exec::mpi_world();
    if (!w) return fail(w.error().to_string());
    rank = w->rank;
    world = w->size;
  }
  struct Loaded {
    std::unique_ptr<nrt::exec::Executor> executor;
    nrt::exec::NamedInputs inputs;
  };
  std::vector<Loaded> loaded;
  for (Shape shape : {Shape::kOverlapped, Shape::kBackToBack, Shape::kCommOnly, Shape::kMatmulOnly}) {
    auto file = nrt::verify_in_memory(program(shape));
    if (!file) return fail(file.error().to_string());
    nrt::exec::ExecutorOptions options;
    options.copy_outputs = false;
    if (launched) {
      auto registry = nrt::exec::mpi_process_registry(file->program());
      if (!registry) return fail(registry.error().to_string());
      options.process_groups = std::make_shared<const nrt::exec::ProcessGroupRegistry>(std::move(*registry));
    }
    auto executor = nrt::exec::Executor::load(std::move(*file), options);
    if (!executor) return fail(executor.error().to_string());
    auto inputs = nrt::exec::random_inputs((*executor)->user_inputs(), 1 + static_cast<uint64_t>(rank));
    if (!inputs) return fail(inputs.error().to_string());
    loaded.push_back({std::move(*executor), std::move(*inputs)});
  }
  const int repetitions = smoke ? 3 : 21;
  std::vector<std::vector<double>> times(loaded.size());
  bool ok = true;
  for (auto& l : loaded) ok &= l.executor->run(l.inputs).ok();  // warm-up: frames, pages, progress thread
  for (int r = 0; r < repetitions && ok; ++r) {
    for (size_t i = 0; i < loaded.size(); ++i) {
      times[i].push_back(nrt::bench::median_seconds(1, [&] { ok &= loaded[i].executor->run(loaded[i].inputs).ok(); }));
    }
  }
  if (!ok) return fail("a run failed");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double overlapped = median(times[0]), serial = median(times[1]), comm = median(times[2]),
               matmul = median(times[3]);
  if (rank == 0) {
    if (!launched) std::printf("(no launcher: a world of one, nothing is communicated; run under mpirun -np 2)\n");
    std::printf("all_reduce f32[%lld] (16 MiB) over %d ranks + independent mm %lldx%lldx%lld, median of %d\n",
                static_cast<long long>(kReduceElements), world, static_cast<long long>(kMatmul),
                static_cast<long long>(kMatmul), static_cast<long long>(kMatmul), repetitions);
    std::printf("  the overlapped program leaves the all_reduce in flight across the mm: %s\n",
                loaded[0].executor->plan().nodes[0].defer_collective_wait ? "yes" : "NO");
    std::printf("  all_reduce + wait alone: %8.3f ms\n  mm alone:               %8.3f ms\n", comm * 1e3, matmul * 1e3);
    std::printf("  back to back:           %8.3f ms\n  overlapped:             %8.3f ms\n", serial * 1e3,
                overlapped * 1e3);
    std::printf("  overlap ratio (overlapped / back to back): %.3f (ideal max/sum: %.3f; below 1 shows overlap)\n",
                overlapped / serial, std::max(comm, matmul) / (comm + matmul));
    // In a world of one nothing is in flight, so there is no overlap to claim: no target line.
    if (world > 1) {
      nrt::bench::report_target("overlap_bench/overlapped_over_back_to_back", overlapped / serial,
                                nrt::bench::Goal::kAtMost, 1.0);
    }
  }
  return 0;
}
