#!/usr/bin/env bash
# Runs the scenario fuzz target for SECONDS from the seed corpus (scenarios/ and the kept regression inputs).
# Usage: tools/fuzz.sh FUZZ_BINARY SECONDS WORK_DIR
# A crash stops the run with exit 1 and leaves the input in WORK_DIR/crash-*: copy it into tests/fuzz/regressions/.
set -euo pipefail
binary="$(realpath "$1")"
seconds=$2
work=$3
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$work/corpus"
# Every shipped scenario but the 1,024-GPU one, whose plan (0.2 s in a release build) takes 14 s under the
# sanitizers and coverage, and the 16,384-GPU one (6.5 s in a release build): each mutation would cost as much.
cp "$root"/scenarios/*.json "$root"/tests/fuzz/regressions/* "$work/corpus/" 2>/dev/null || true
rm -f "$work/corpus/gpt3-175b-3d-1024gpus.json" "$work/corpus/llama3-405b-16384xh100.json"
cd "$work"
# 300 s per input at most (a plan slower than that under the sanitizers is a finding; a short run must not fail on a
# merely slow one); 6 GiB of memory (label generation may take 4 GiB).
exec "$binary" -max_total_time="$seconds" -timeout=300 -rss_limit_mb=6144 -max_len=65536 -print_final_stats=1 \
  -dict="$root/tests/fuzz/scenario.dict" corpus
