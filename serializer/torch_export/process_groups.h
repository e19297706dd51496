// Functional collectives (_c10d_functional::all_reduce, all_gather_into_tensor, ...) name their
// process group by a string argument `group_name`. nrt records each distinct name once in
// Program.process_groups and turns the argument into a ProcessGroupArg pointing at it, so
// `info` lists the groups a program needs; exporting writes the name back as a string.
//
// A group's ranks are unknown to the exported graph (the runtime binds groups by name). When a
// collective states the group's size (`group_size`, as all_gather_into_tensor and
// reduce_scatter_tensor do), the group records the group-local ranks 0..size-1; otherwise its
// rank list stays empty. Sizes that disagree between two collectives of one group are an error.
#pragma once

#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::torch_export {

// True for the operator namespaces whose `group_name` argument names a process group.
bool is_functional_collective(const fb::OperatorT& op);

// Rewrites every graph of `program`; idempotent (arguments already rewritten are left alone).
Status collect_process_groups(fb::ProgramT* program);

}  // namespace nrt::torch_export
