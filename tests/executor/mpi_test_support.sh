# Shared by the sh_tests that launch mpirun (source it from the runfiles root); brings
# tests/check_support.sh (check, finish, skip_test, ...) with it:
#   require_mpirun NAME     skip_test unless mpirun is installed
#   mpi SECONDS ARGS...     mpirun as root, oversubscribed, cut after SECONDS, with Open MPI's
#                           session directory (sockets: short paths) outside Bazel's long TMPDIR;
#                           run once more if the launcher's PID-0 race alone failed it (below)
#   gtest_on_ranks BIN N... runs the gtest binary BIN under mpirun with N ranks for each N (120 s
#                           each); one check per run: every rank passes

source tests/check_support.sh

require_mpirun() {
  command -v mpirun > /dev/null 2>&1 || skip_test "$1" "mpirun is not installed (Debian: openmpi-bin)"
}

mpi_session_dir=$(mktemp -d /tmp/nrt-mpi.XXXXXX)
at_exit 'rm -rf "$mpi_session_dir"'

# Open MPI 4.1's launcher now and then reports a rank that finalized and exited normally as
# "exiting improperly", naming PID 0 (its race between the exit and the finalize notice:
# open-mpi/ompi#7833, #12607; here a 4-rank job on 2 loaded cores, every rank's report printed).
# A job failing with that message and no other runs once more, saying so; any other failure stands.
mpi() {
  local seconds="$1" status attempt err
  shift
  err=$(mktemp "$mpi_session_dir/stderr.XXXXXX")
  for attempt in 1 2; do
    env TMPDIR="$mpi_session_dir" timeout "$seconds" mpirun --allow-run-as-root --oversubscribe "$@" 2> "$err"
    status=$?
    cat "$err" >&2
    if [ "$status" -ne 0 ] && [ "$attempt" -eq 1 ] && grep -q "with PID 0 on" "$err" && grep -q "exiting improperly" "$err" &&
      ! grep -q "error:" "$err"; then
      echo "mpi: the launcher reported a rank with PID 0 exiting improperly (Open MPI's race); once more" >&2
      continue
    fi
    break
  done
  rm -f "$err"
  return "$status"
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
