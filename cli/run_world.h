// The ranks one nrt-run belongs to. Started by a launcher (mpirun; detected from the
// environment by executor/mpi_process_group.h), every rank initialises MPI and holds a world
// ProcessGroup of its own through which the ranks agree before running (so that one rank's bad
// input cannot leave the others waiting inside a collective) and gather their reports. Started
// without one, it is a world of one with no group, and nothing here communicates.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "executor/process_group.h"
#include "serializer/error.h"

namespace nrt::cli {

struct RunWorld {
  int rank = 0;
  int size = 1;
  std::string launcher;                       // the environment variable that revealed it
  std::shared_ptr<exec::ProcessGroup> group;  // null without a launcher

  bool launched() const { return group != nullptr; }

  // Collective: the ranks whose `ok` is false, the same list on every rank.
  Result<std::vector<int>> failed_ranks(bool ok) const;
  // Collective: every rank's text, in rank order, on every rank.
  Result<std::vector<std::string>> gather_texts(const std::string& text) const;
};

// Initialises MPI when a launcher started this process.
Result<RunWorld> join_run_world();

// `text` with every "{rank}" replaced by `rank`.
std::string with_rank(std::string text, int rank);

}  // namespace nrt::cli
