#!/usr/bin/env bash
# Runs a sharded partsim sweep on Kubernetes: the Indexed Job of SHARDS pods (sweep-shards.yaml), a wait for it to
# complete, then the merge Job (merge.yaml). The merged sweep lands in $OUT/merged on the shared volume.
#
#   IMAGE=registry.example/partsim:0.1.0 PVC=sweeps PARTSIM=/usr/local/bin/partsim \
#   SCENARIO=/shared/scenarios/default.json VARY=/cluster/nodes=1,2,5,10 SHARDS=4 OUT=/shared/sweeps/nodes \
#   examples/kubernetes/submit.sh
#
# Environment: NAME (default partsim-sweep; Job names NAME-shards and NAME-merge), IMAGE (holding partsim, bash and
# the data folder), PVC (a ReadWriteMany claim mounted at /shared), PARTSIM (default partsim), SCENARIO, VARY, SET
# (optional) as in examples/slurm/sweep-shard.sbatch, SHARDS, OUT (under /shared), TIMEOUT (default 24h).
# RENDER_ONLY=1 prints the two manifests instead of applying them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${NAME:=partsim-sweep}" "${IMAGE:?set IMAGE}" "${PVC:?set PVC}" "${PARTSIM:=partsim}"
: "${SCENARIO:?set SCENARIO}" "${VARY:?set VARY}" "${SHARDS:?set SHARDS}" "${OUT:?set OUT}" "${TIMEOUT:=24h}"
case "$SHARDS" in
  '' | *[!0-9]* | 0) echo "submit: SHARDS must be a positive integer, got '$SHARDS'" >&2; exit 2 ;;
esac
export NAME IMAGE PVC PARTSIM SCENARIO VARY SET="${SET:-}" SHARDS OUT
# shellcheck disable=SC2016 # the list of variables envsubst replaces, not an expansion
variables='${NAME} ${IMAGE} ${PVC} ${PARTSIM} ${SCENARIO} ${VARY} ${SET} ${SHARDS} ${OUT}'
render() { envsubst "$variables" <"$here/$1"; }

if [ "${RENDER_ONLY:-0}" = 1 ]; then
  render sweep-shards.yaml
  echo ---
  render merge.yaml
  exit 0
fi
render sweep-shards.yaml | kubectl apply -f -
kubectl wait --for=condition=complete --timeout="$TIMEOUT" "job/$NAME-shards"
render merge.yaml | kubectl apply -f -
kubectl wait --for=condition=complete --timeout="$TIMEOUT" "job/$NAME-merge"
echo "submit: merged sweep in $OUT/merged" >&2
