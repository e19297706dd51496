# Shared by the sh_tests that launch mpirun (source it from the runfiles root); brings
# tests/check_support.sh (check, finish, skip_test, ...) with it:
#   require_mpirun NAME     skip_test unless mpirun is installed
#   mpi SECONDS ARGS...     mpirun as root, oversubscribed, cut after SECONDS, with Open MPI's
#                           session directory (sockets: short paths) outside Bazel's long TMPDIR
#   gtest_on_ranks BIN N... runs the gtest binary BIN under mpirun with N ranks for each N (120 s
#                           each); one check per run: every rank passes

source tests/check_support.sh

require_mpirun() {
  command -v mpirun > /dev/null 2>&1 || skip_test "$1" "mpirun is not installed (Debian: openmpi-bin)"
}

mpi_session_dir=$(mktemp -d /tmp/nrt-mpi.XXXXXX)
at_exit 'rm -rf "$mpi_session_dir"'

mpi() {
  local seconds="$1"
  shift
  env TMPDIR="$mpi_session_dir" timeout "$seconds" mpirun --allow-run-as-root --oversubscribe "$@"
}

# Each rank's gtest XML would race for Bazel's one XML file, so the ranks write none; the checks
# here are the test's record.
gtest_on_ranks() {
  local bin="$1" ranks status reason
  shift
  for ranks in "$@"; do
    echo "=== mpirun -np $ranks $bin"
    (unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE; mpi 120 -np "$ranks" "$bin" --gtest_color=no)
    status=$?
    reason="exit status $status"
    [ "$status" -ne 124 ] || reason="timed out after 120 s"
    check "every rank of $ranks passes ($reason)" [ "$status" -eq 0 ]
  done
}
