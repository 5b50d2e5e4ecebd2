#!/usr/bin/env bash
# Submits a sharded partsim sweep to Slurm: a job array of SHARDS tasks (sweep-shard.sbatch), then a merge job
# (merge.sbatch) that runs once every task succeeded (--dependency=afterok). Prints the merge job's id; the merged
# sweep lands in $OUT/merged, the jobs' logs in $OUT/logs.
#
#   PARTSIM=/opt/partsim/bin/partsim SCENARIO=$PWD/scenarios/default.json VARY=/cluster/nodes=1,2,5,10 \
#   SHARDS=4 OUT=/shared/sweeps/nodes examples/slurm/submit.sh
#
# Environment: PARTSIM, SCENARIO, VARY, SET (optional), SHARDS, OUT as in sweep-shard.sbatch, and SBATCH_ARGS
# (optional): more sbatch options for both jobs, split at whitespace ("--partition=cpu --time=1:00:00").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${PARTSIM:=partsim}" "${SCENARIO:?set SCENARIO}" "${VARY:?set VARY}" "${SHARDS:?set SHARDS}" "${OUT:?set OUT}"
case "$SHARDS" in
  '' | *[!0-9]* | 0) echo "submit: SHARDS must be a positive integer, got '$SHARDS'" >&2; exit 2 ;;
esac
# The jobs may start in another folder: make the paths absolute here.
if [[ "$PARTSIM" != */* ]]; then
  PARTSIM=$(command -v "$PARTSIM") || { echo "submit: $PARTSIM is not on PATH" >&2; exit 2; }
fi
PARTSIM=$(realpath "$PARTSIM")
SCENARIO=$(realpath "$SCENARIO")
OUT=$(realpath -m "$OUT")
export PARTSIM SCENARIO VARY SET="${SET:-}" SHARDS OUT
mkdir -p "$OUT/logs"

read -r -a extra <<<"${SBATCH_ARGS:-}"
array_id=$(sbatch --parsable "${extra[@]}" --array="0-$((SHARDS - 1))" --output="$OUT/logs/shard-%a.out" \
  "$here/sweep-shard.sbatch")
array_id=${array_id%%;*} # "ID;CLUSTER" on a federation
merge_id=$(sbatch --parsable "${extra[@]}" --dependency="afterok:$array_id" --output="$OUT/logs/merge.out" \
  "$here/merge.sbatch")
merge_id=${merge_id%%;*}
echo "submit: array job $array_id ($SHARDS shards), merge job $merge_id; merged sweep in $OUT/merged" >&2
echo "$merge_id"
