#!/usr/bin/env bash
# The real nrt-inspect binary: `hash` gives the same digests in every process (ASLR differs per
# run; environment, locale and thread counts vary; two processes run at once), for .nrt and
# .nrt.json alike; `hash --json`/`diff --json` parse; `diff` exits 0 same, 1 different, 2 trouble.
set -u
source tests/check_support.sh
BIN="cli/nrt-inspect"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"

for program in testdata/*.nrt; do
  reference=$("$BIN" hash --json "$program" 2>/dev/null) || { fail "hash $program"; continue; }
  runs=()
  runs+=("$(env -i PATH=/usr/bin:/bin "$BIN" hash --json "$program" 2>/dev/null)")
  runs+=("$(LC_ALL=C.UTF-8 NRT_LOG_LEVEL=debug "$BIN" hash --json --threads 1 "$program" 2>/dev/null)")
  runs+=("$(MALLOC_PERTURB_=165 "$BIN" hash --json --threads 7 "$program" 2>/dev/null)")
  runs+=("$("$BIN" hash --json "${program}.json" 2>/dev/null)")
  # Two processes at once.
  "$BIN" hash --json --threads 2 "$program" > "$tmp/a.json" 2>/dev/null &
  "$BIN" hash --json --threads 3 "$program" > "$tmp/b.json" 2>/dev/null &
  wait
  runs+=("$(cat "$tmp/a.json")" "$(cat "$tmp/b.json")")
  same=1
  for run in "${runs[@]}"; do [ "$run" == "$reference" ] || same=0; done
  check "hash of $program equal in ${#runs[@]} more processes" [ "$same" -eq 1 ]
done

# --json carries the three digests with their prefixes.
check "hash --json parses and has structure/weights/full" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
assert all(d[k].startswith("nrt1-xxh3:") for k in ("structure", "weights", "full")), d
' < <("$BIN" hash --json testdata/mlp.nrt)
check "hash --algo sha256" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
assert d["full"].startswith("nrt1-sha256:") and len(d["full"]) == len("nrt1-sha256:") + 64, d
' < <("$BIN" hash --json --algo sha256 testdata/mlp.nrt)
check "hash --explain lists graphs, nodes and storages" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
kinds = {p["kind"] for p in d["parts"]}
assert {"graph", "signature", "node", "storage"} <= kinds, kinds
' < <("$BIN" hash --json --explain testdata/mlp.nrt)
check "hash warns about unstable reprs" grep -q "unstable repr" < <("$BIN" hash testdata/all_arguments.nrt 2>&1 >/dev/null)

# diff exit codes and JSON.
"$BIN" diff testdata/mlp.nrt testdata/mlp.nrt.json > /dev/null; check "diff same exits 0" [ $? -eq 0 ]
"$BIN" diff testdata/mlp.nrt testdata/subgraph.nrt > /dev/null; check "diff different exits 1" [ $? -eq 1 ]
"$BIN" diff testdata/mlp.nrt "$tmp/missing.nrt" > /dev/null 2>&1; check "diff unreadable exits 2" [ $? -eq 2 ]
"$BIN" hash "$tmp/missing.nrt" > /dev/null 2>&1; check "hash unreadable exits 2" [ $? -eq 2 ]
check "diff --json parses" python3 -c '
import json, sys
d = json.loads(sys.stdin.read())
assert d["same"] is False and d["graphs_added"] == ["false_graph_0", "true_graph_0"], d
' < <("$BIN" diff --json testdata/mlp.nrt testdata/subgraph.nrt)

finish
