# Shared by the sh_tests that launch mpirun (source it from the runfiles root):
#   skip_test NAME REASON   report NAME skipped (a <skipped/> case in Bazel's XML) and exit 0
#   require_mpirun NAME     skip_test unless mpirun is installed
#   mpi SECONDS ARGS...     mpirun as root, oversubscribed, cut after SECONDS, with Open MPI's
#                           session directory (sockets: short paths) outside Bazel's long TMPDIR

skip_test() {
  echo "SKIP: $2"
  if [ -n "${XML_OUTPUT_FILE:-}" ]; then
    cat > "$XML_OUTPUT_FILE" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="0" errors="0" skipped="1">
  <testsuite name="$1" tests="1" failures="0" errors="0" skipped="1">
    <testcase name="$1" status="notrun"><skipped message="$2"/></testcase>
  </testsuite>
</testsuites>
XML
  fi
  exit 0
}

require_mpirun() {
  command -v mpirun > /dev/null 2>&1 || skip_test "$1" "mpirun is not installed (Debian: openmpi-bin)"
}

mpi_session_dir=$(mktemp -d /tmp/nrt-mpi.XXXXXX)
trap 'rm -rf "$mpi_session_dir"' EXIT

mpi() {
  local seconds="$1"
  shift
  env TMPDIR="$mpi_session_dir" timeout "$seconds" mpirun --allow-run-as-root --oversubscribe "$@"
}
