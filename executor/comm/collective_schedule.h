// The collectives a program issues, in order: what the ranks of one job must agree on before any
// communicator exists. When each runs a program of its own (`nrt-run 'model_{rank}.pt2'`: torch
// exports a tensor-parallel model once per rank, with per-rank weights and per-rank all_to_all
// split sizes), their structure digests legitimately differ; and a DTensor program's collectives
// appear only once the sharding pass has run. One entry per collective node (op_facts.h: every
// `_c10d_functional::*` op and the sharding pass's redistribution steps and sharded
// arg-reductions) of every graph, graphs and nodes in file order: its target, group, reduce op,
// other text arguments (a redistribution's from/to placements) and input dtypes; sizes are left
// out, since shards of uneven dims and per-rank exports differ in them
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

// The program's process groups as the ranks create them: each group's name, ranks and mesh
// ("mesh.tp.0 ranks=[0, 1] mesh=0/0; ..."), in table order.
std::string process_groups_line(const fb::Program& program);

}  // namespace nrt::exec
