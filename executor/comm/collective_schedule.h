// The collectives a program issues, in order: what the ranks of one job must agree on when each
// runs a program of its own (`nrt-run 'model_{rank}.pt2'`: torch exports a tensor-parallel model
// once per rank, with per-rank weights and per-rank all_to_all split sizes, so their structure
// digests legitimately differ). One entry per `_c10d_functional::*` node of every graph, graphs
// and nodes in file order: its target, group, reduce op and input dtypes, sizes left out
// ("_c10d_functional::all_reduce.default group=tp reduce=sum f32"). wait_tensor issues nothing
// and is left out.
#pragma once

#include <string>
#include <vector>

#include "schema/nrt_generated.h"

namespace nrt::exec {

std::vector<std::string> collective_schedule(const fb::Program& program);

// One line for comparing schedules across ranks: the count, a digest of the whole schedule and
// its first entries ("3 collectives, digest 1f2e...: all_reduce ...; ..."). Equal schedules give
// equal lines, different ones (almost surely) different lines.
std::string collective_schedule_line(const std::vector<std::string>& schedule);

}  // namespace nrt::exec
