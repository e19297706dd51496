#!/usr/bin/env bash
# torch's per-rank DTensor archives (testdata/torch/dtensor_mlp: a 1-D tp mesh of 2;
# dtensor_mlp_2d: dp x tp = 2x2; made by scripts/dtensor_archives.py on a gloo group, each rank's
# DTensor parameters pickled with their shards). Per rank: `mpirun -np N nrt-run
# 'model_rank{rank}.pt2'` runs each rank's own archive and every rank gives torch's answer.
# Merged: `nrt-inspect convert` of all ranks' archives verifies, shows its mesh and placements,
# and under mpirun gives torch's answer on every rank. Refused, naming the archive: a missing rank,
# a duplicate coordinate, graphs that differ, shards that do not tile; and one rank's archive run
# on every rank. Skipped without mpirun.
set -u

source tests/executor/mpi_test_support.sh
require_mpirun torch_dtensor_archives_test

INSPECT="$PWD/cli/nrt-inspect"
RUN="$PWD/cli/nrt-run"
CORPUS="$PWD/testdata/torch"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dtensor_archives.XXXXXX")
cd "$work" || exit 1

for case in "dtensor_mlp 2" "dtensor_mlp_2d 4"; do
  set -- $case
  dir="$CORPUS/$1"
  mpi 90 -np "$2" "$RUN" "$dir/model_rank{rank}.pt2" --input "x=$dir/input_0.npy" --expect "$dir/expected" \
    > "$1.per_rank.out" 2>&1
  check "$1: each of $2 ranks runs its own archive and gives torch's answer" [ $? -eq 0 ]
  check "$1: per rank, the report shows the collective" contains "$1.per_rank.out" "all_reduce x1"

  archives=()
  for ((r = 0; r < $2; ++r)); do archives+=("$dir/model_rank$r.pt2"); done
  "$INSPECT" convert "${archives[@]}" -o "$1.nrt" 2> "$1.merge.err"
  check "$1: the $2 archives merge" [ $? -eq 0 ]
  "$INSPECT" verify "$1.nrt" > /dev/null
  check "$1: the merged program verifies" [ $? -eq 0 ]
  "$INSPECT" info "$1.nrt" > "$1.info"
  mpi 90 -np "$2" "$RUN" "$1.nrt" --input "x=$dir/input_0.npy" --expect "$dir/expected" > "$1.merged.out" 2>&1
  check "$1: merged, every one of $2 ranks gives torch's answer" [ $? -eq 0 ]

  # Back to torch's per-rank form: one archive per rank (scripts/torch_corpus.py --dtensor --check
  # loads these in torch on a gloo group); they run per rank and merge back to the same program.
  "$INSPECT" convert "$1.nrt" -o "${1}_back_rank{rank}.pt2" 2> "$1.split.err"
  check "$1: the merged program splits into per-rank archives" [ $? -eq 0 ]
  check "$1: ... the last rank's among them" [ -s "${1}_back_rank$(($2 - 1)).pt2" ]
  mpi 90 -np "$2" "$RUN" "${1}_back_rank{rank}.pt2" --input "x=$dir/input_0.npy" --expect "$dir/expected" \
    > "$1.back.out" 2>&1
  check "$1: the archives nrt wrote run per rank with torch's answer" [ $? -eq 0 ]
  back=()
  for ((r = 0; r < $2; ++r)); do back+=("${1}_back_rank$r.pt2"); done
  "$INSPECT" convert "${back[@]}" -o "$1.again.nrt" 2> /dev/null
  "$INSPECT" diff "$1.nrt" "$1.again.nrt" > "$1.diff"
  check "$1: split and merged again, the program is the same" contains "$1.diff" "same"
  # One rank's archive through nrt and back: the same program (the pickled DTensors rewritten).
  "$INSPECT" convert "$dir/model_rank1.pt2" -o "$1.rank1.pt2" 2> /dev/null
  "$INSPECT" diff "$dir/model_rank1.pt2" "$1.rank1.pt2" > "$1.rank1.diff" 2> /dev/null
  check "$1: rank 1's archive round-trips through nrt" contains "$1.rank1.diff" "same"
done
check "info: the 1-D merged program's global Shard(0) weight" contains dtensor_mlp.info \
  "%p_w1  dtensor<f32[3,5] global [6,5], mesh 0 [Shard(0)]>"
check "info: the 2-D mesh with its dim names" contains dtensor_mlp_2d.info "shape [2,2]  dims [dp, tp]  ranks [0, 1, 2, 3]"
check "info: placements on the 2-D mesh" contains dtensor_mlp_2d.info \
  "%p_w2  dtensor<f32[3,3] global [3,6], mesh 0 [Replicate(), Shard(1)]>"
check "info: the tp group is tied to its mesh dim" contains dtensor_mlp_2d.info "mesh.tp  ranks [0, 1]  mesh 0 dim 1"
check "info: merged weights are global (57 parameters)" contains dtensor_mlp_2d.info "parameters      57"

two="$CORPUS/dtensor_mlp_2d"
"$INSPECT" convert "$two/model_rank0.pt2" "$two/model_rank1.pt2" -o missing.nrt 2> missing.err
check "a missing rank: exit 2" [ $? -eq 2 ]
check "a missing rank is named" contains missing.err "no archive holds rank 2 (mesh coordinate (1, 0))"
"$INSPECT" convert "$two/model_rank0.pt2" "$two/model_rank1.pt2" "$two/model_rank1.pt2" "$two/model_rank3.pt2" \
  -o duplicate.nrt 2> duplicate.err
check "a duplicate coordinate: exit 2" [ $? -eq 2 ]
check "a duplicate coordinate names both archives" contains duplicate.err "both hold the shards of mesh coordinate (0, 1)"
"$INSPECT" convert "$CORPUS/dtensor_mlp/model_rank0.pt2" "$two/model_rank1.pt2" -o differ.nrt 2> differ.err
check "graphs that differ: exit 2" [ $? -eq 2 ]
check "graphs that differ: the first difference is named" contains differ.err \
  "differs from $CORPUS/dtensor_mlp/model_rank0.pt2 apart from weights: graph 'model': input 0 type"
for refused in missing duplicate differ; do check "no output is left by the refused merge ($refused)" [ ! -e "$refused.nrt" ]; done

# Shards that do not tile: rank 1's w1 cut to 2 of its 3 rows (through its .nrt.json form).
one="$CORPUS/dtensor_mlp"
"$INSPECT" convert "$one/model_rank1.pt2" -o r1.nrt.json 2> /dev/null
python3 - <<'PY'
import json
d = json.load(open("r1.nrt.json"))
w = next(w for w in d["weights"] if w["fqn"] == "w1")
w["meta"]["sizes"][0]["literal"] = 2
json.dump(d, open("r1_cut.nrt.json", "w"))
PY
"$INSPECT" convert "$one/model_rank0.pt2" r1_cut.nrt.json -o cut.nrt 2> cut.err
check "shards that do not tile: exit 1 (an invalid program)" [ $? -eq 1 ]
check "shards that do not tile name the archive and both sizes" contains cut.err \
  "r1_cut.nrt.json: weight 'w1' holds a shard of sizes [2, 5] but mesh coordinate (1) holds [3, 5] of the global [6, 5]"

mpi 60 -np 2 "$RUN" "$one/model_rank0.pt2" --input "x=$one/input_0.npy" > wrong_rank.out 2>&1
check "one rank's archive on every rank: exit 2" [ $? -eq 2 ]
check "one rank's archive on every rank: the coordinate is named" contains wrong_rank.out \
  "weight 'w1' holds the shard of mesh coordinate (0), but rank 1 sits at (1)"

finish torch_dtensor_archives_test
