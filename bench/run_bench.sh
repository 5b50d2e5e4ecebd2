#!/usr/bin/env bash
# Simulator-speed benchmark: one data-parallel iteration with a flat step-by-step ring all-reduce of 1 GB
# (bench/ring-allreduce.json) for several GPU counts N. For each N it runs partsim REPEATS times (default 3) under
# /usr/bin/time and prints a markdown table: messages simulated, median wall time, peak RSS, messages per wall second,
# the simulated makespan and the closed-form alpha-beta time it should equal (CM02, no contention).
#
# Usage: bench/run_bench.sh [PARTSIM_BINARY] [N...]
#   PARTSIM_BINARY  default: <repo>/build/sim/partsim (relative paths are taken from the current directory)
#   N...            GPU counts, default: 8 64 256 1024; a multiple of 8 (8 GPUs per node) or below 8 (one node)
# Environment: REPEATS (default 3) runs per point; the table reports the median wall time and the largest peak RSS.
# Needs GNU time at /usr/bin/time (Debian/Ubuntu: apt-get install -y time) and python3. The ring makes 2(N-1)N
# messages, so the time grows quadratically with N: N=1024 is 2.1M messages, several seconds per run on one core.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$script_dir/.." && pwd)
scenario="$script_dir/ring-allreduce.json"
gpus_per_node=8
repeats=${REPEATS:-3}

usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "run_bench.sh: error: $*" >&2; exit 1; }

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi

partsim="$repo_root/build/sim/partsim"
if [[ $# -gt 0 && ! $1 =~ ^[0-9]+$ ]]; then
  partsim=$1
  shift
fi
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(8 64 256 1024)

# Absolute path: the runs below start from a scratch directory.
[[ $partsim == /* ]] || partsim="$PWD/$partsim"
[[ -x $partsim && -f $partsim ]] ||
  die "no partsim binary at $partsim; build it first (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target partsim) or pass its path as the first argument"
[[ $repeats =~ ^[1-9][0-9]*$ ]] || die "REPEATS must be a positive integer, got '$repeats'"
for n in "${counts[@]}"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "expected GPU counts as positive integers, got '$n'"
  ((n < gpus_per_node || n % gpus_per_node == 0)) ||
    die "N=$n: expected a multiple of $gpus_per_node (GPUs per node) or fewer than $gpus_per_node GPUs"
done

# GNU time prints peak RSS (%M); a missing /usr/bin/time is common on minimal images and not a shell builtin.
if [[ ! -x /usr/bin/time ]]; then
  die "/usr/bin/time is missing: it measures peak memory. Install GNU time (Debian/Ubuntu: apt-get install -y time; Fedora: dnf install time) and rerun"
fi
if ! /usr/bin/time -f '%e %M' -o /dev/null true 2>/dev/null; then
  die "/usr/bin/time is not GNU time (it does not take -f '%e %M' -o FILE); install GNU time (apt-get install -y time)"
fi
command -v python3 >/dev/null || die "python3 is needed to read report.json and format the table"

export PARTSIM_DATA_DIR="$repo_root"
work=$(mktemp -d "${TMPDIR:-/tmp}/partsim-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

now_ns() { date +%s%N; }

# One run: writes report.json and a line "wall_s elapsed_s peak_kib engine_wall_s" to $work/N.rep.time.
run_once() {
  local n=$1 rep=$2 nodes gpn sets begin end rc
  if ((n < gpus_per_node)); then nodes=1 gpn=$n; else nodes=$((n / gpus_per_node)) gpn=$gpus_per_node; fi
  sets=(--set "/cluster/nodes=$nodes" --set "/cluster/gpus_per_node=$gpn" --set "/strategy/partitions=$n")
  begin=$(now_ns)
  rc=0
  (cd "$work" && /usr/bin/time -f '%e %M' -o "$work/$n.$rep.gnutime" \
    "$partsim" run "$scenario" "${sets[@]}" --json --no-files --no-progress \
    >"$work/$n.$rep.json" 2>"$work/$n.$rep.err") || rc=$?
  end=$(now_ns)
  if ((rc != 0)); then
    echo "run_bench.sh: partsim failed for N=$n (exit $rc):" >&2
    cat "$work/$n.$rep.err" >&2
    exit 1
  fi
  local engine
  engine=$(sed -n 's/.* in \([0-9.]*\) s of wall time$/\1/p' "$work/$n.$rep.err" | tail -n 1)
  echo "$(((end - begin) / 1000000)) $(tail -n 1 "$work/$n.$rep.gnutime") ${engine:-nan}" >"$work/$n.$rep.time"
}

echo "run_bench.sh: $("$partsim" --version) at $partsim, $repeats run(s) per point" >&2
for n in "${counts[@]}"; do
  for ((rep = 1; rep <= repeats; rep++)); do
    printf 'run_bench.sh: N=%-5s run %d of %d ... ' "$n" "$rep" "$repeats" >&2
    run_once "$n" "$rep"
    read -r ms _ _ _ <"$work/$n.$rep.time"
    printf '%s ms\n' "$ms" >&2
  done
done

# Build type from the CMake cache above the binary, when the binary sits in a CMake build tree.
build_type=unknown
dir=$(dirname "$partsim")
for _ in 1 2 3; do
  if [[ -f $dir/CMakeCache.txt ]]; then
    build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$dir/CMakeCache.txt")
    build_type=${build_type:-"(none)"}
    break
  fi
  dir=$(dirname "$dir")
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1 || true)

python3 - "$work" "$repeats" "$build_type" "$(nproc 2>/dev/null || echo '?')" "${cpu:-unknown CPU}" "${counts[@]}" <<'PY'
import json, math, re, statistics, sys, datetime

work, repeats, build_type, nproc, cpu = sys.argv[1:6]
repeats = int(repeats)
counts = [int(n) for n in sys.argv[6:]]

PREFIX = {"": 1, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
          "P": 1e15, "E": 1e18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
UNIT = {"s": 1, "B": 1, "Bps": 1, "B/s": 1, "bps": 1 / 8, "b/s": 1 / 8, "FLOP": 1, "flop": 1}

def quantity(value):
    """The subset of partsim's unit syntax that scenarios use: a number, an optional prefix, a unit."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(Ki|Mi|Gi|Ti|[nuµmkKMGTPE]?)(Bps|B/s|bps|b/s|FLOP|flop|B|s)\s*", value)
    if not m:
        raise ValueError(f"cannot read quantity {value!r}")
    return float(m.group(1)) * PREFIX[m.group(2)] * UNIT[m.group(3)]

def closed_form(report):
    """Compute of the busiest rank plus 2(N-1) ring steps, each bounded by its slowest hop: latency + chunk / bw."""
    sc = report["scenario"]["input"]
    cl, wl = sc["cluster"], sc["workload"]
    nodes, gpn = int(cl["nodes"]), int(cl["gpus_per_node"])
    n = nodes * gpn
    if n < 2:
        return None
    peak = report["gpu_profile"]["peak_flops"][wl.get("data_type", "bf16")]["value"]
    samples = math.ceil(int(wl["samples"]) / n)
    compute = samples * quantity(wl["flop_per_sample"]) / peak
    if "bytes_read_per_sample" in wl:
        compute = max(compute, samples * quantity(wl["bytes_read_per_sample"]) / report["gpu_profile"]["memory_bandwidth"]["value"])
    chunk = quantity(wl["gradient_bytes"]) / n
    hops = []
    if gpn > 1:
        hops.append(cl["intra_node_link"])
    if nodes > 1:
        hops.append(cl["network"])
    step = max(quantity(h["latency"]) + chunk / quantity(h["bandwidth"]) for h in hops)
    return compute + 2 * (n - 1) * step

print(f"Machine: {nproc} CPU(s), {cpu}; build type: {build_type}; "
      f"date: {datetime.date.today().isoformat()}; median of {repeats} run(s) per point.")
print()
print("| N GPUs | messages | wall s (median) | engine s (median) | peak RSS MiB | messages / wall s "
      "| simulated makespan s | closed form s | difference |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in counts:
    walls, engines, rss = [], [], []
    for rep in range(1, repeats + 1):
        ms, _elapsed, kib, engine = open(f"{work}/{n}.{rep}.time").read().split()
        walls.append(int(ms) / 1000)
        engines.append(float(engine))
        rss.append(int(kib) / 1024)
    report = json.load(open(f"{work}/{n}.1.json"))
    messages = int(report["engine"]["messages"])
    expected = 2 * (n - 1) * n
    if messages != expected:
        print(f"run_bench.sh: warning: N={n} simulated {messages} messages, expected 2(N-1)N = {expected}",
              file=sys.stderr)
    wall = statistics.median(walls)
    engine = statistics.median(engines)
    makespan = report["summary"]["makespan_s"]
    closed = closed_form(report)
    diff = "n/a" if closed is None else f"{(makespan - closed) / closed:+.1e}"
    closed_text = "n/a" if closed is None else f"{closed:.6f}"
    print(f"| {n} | {messages:,} | {wall:.3f} | {engine:.3f} | {max(rss):.0f} | {messages / wall:,.0f} "
          f"| {makespan:.6f} | {closed_text} | {diff} |")
print()
print("wall: whole process (start, platform, simulation, report), median; engine: simulate() alone as partsim "
      "reports it; peak RSS: largest of the runs; closed form: compute of the busiest rank + "
      "2(N-1) x (latency + S/N / bandwidth) of the slowest hop.")
PY
