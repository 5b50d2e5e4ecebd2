#!/usr/bin/env bash
# Runs partsim-calibrate on a lent GPU machine and leaves everything under $OUT: the measured profile, raw samples,
# summary, logs, the board's SM clock, power and limiters every half second (nvidia-smi-clocks.csv), and a Kineto trace of a
# GPT-2 small step with its import. Build here first (the binary travels in the
# carried build folder), then, from the repository root on the device:
#   calibrate/run-on-device.sh [BINARY]          (default build/device/partsim-calibrate)
# MODE=quick (about a minute), MODE=full (under ten), MODE=both (default: quick first, so a profile comes back even
# if the full run is cut short). FULL_TIMEOUT (s, default 420) bounds the full run; KINETO=0 skips the trace.
set -u
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
BIN="${1:-build/device/partsim-calibrate}"
MODE="${MODE:-both}"
FULL_TIMEOUT="${FULL_TIMEOUT:-420}"
KINETO="${KINETO:-1}"
LOG="$OUT/run-on-device.log"
exec > >(tee -a "$LOG") 2>&1

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) partsim-calibrate on $(hostname)"
nvidia-smi --query-gpu=index,name,uuid,driver_version,memory.total,power.limit,clocks.max.sm --format=csv || true
nvidia-smi topo -m > "$OUT/nvidia-smi-topo.txt" 2>&1 || true

# CUDA libraries: the toolkit's, else those of the Python wheels (nvidia-cublas, nvidia-cuda-cupti, nvidia-nccl-cu13).
LIBS=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
for d in $(python3 -c 'import nvidia, os; b = nvidia.__path__[0]; print(" ".join(os.path.join(b, p, "lib") for p in os.listdir(b)))' 2>/dev/null); do
  [ -d "$d" ] && LIBS="$LIBS:$d"
done
export LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PARTSIM_DATA_DIR="${PARTSIM_DATA_DIR:-$PWD}"  # models/ of this checkout (the base datasheet profiles)

if ! "$BIN" --check; then
  echo "== the carried binary does not run here (missing library, or no GPU): ldd says"
  ldd "$BIN" | grep -E "not found|cuda|cupti|cublas|nccl" || true
  if [ ! -x "$BIN" ] || ldd "$BIN" | grep -q "not found"; then
    echo "== building on the device (needs SimGrid, nlohmann-json, fmt, CLI11 there; may fail)"
    cmake -S . -B /tmp/partsim-build -DPARTSIM_BUILD_GUI=OFF -DPARTSIM_BUILD_TESTS=OFF -DPARTSIM_BUILD_BENCH=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/device-build.log" 2>&1 &&
      cmake --build /tmp/partsim-build -j"$(nproc)" --target partsim-calibrate >> "$OUT/device-build.log" 2>&1 &&
      BIN=/tmp/partsim-build/calibrate/partsim-calibrate
    "$BIN" --check || { echo "== no usable partsim-calibrate: see $OUT/device-build.log"; exit 1; }
  else
    exit 1
  fi
fi

# The board's clock, power and limiters every half second through the whole run (what a sustained load does to the
# clock: the GEMM loop's readings are also in the summary); stopped at the end.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks_event_reasons.sw_thermal_slowdown \
  --format=csv -lms 500 > "$OUT/nvidia-smi-clocks.csv" 2>&1 &
SMI_PID=$!
trap 'kill "$SMI_PID" 2>/dev/null || true' EXIT

status=0
if [ "$MODE" = quick ] || [ "$MODE" = both ]; then
  echo "== quick calibration"
  mkdir -p "$OUT/quick"
  "$BIN" --quick --out "$OUT/quick/h200-measured.json" 2> >(tee "$OUT/quick/stderr.log" >&2) ||
    status=$?
fi
if [ "$MODE" = full ] || [ "$MODE" = both ]; then
  echo "== full calibration (timeout ${FULL_TIMEOUT}s)"
  timeout "$FULL_TIMEOUT" "$BIN" --out "$OUT/h200-measured.json" 2> >(tee "$OUT/full-stderr.log" >&2) || status=$?
fi
if [ "$KINETO" = 1 ] && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "== Kineto trace of a GPT-2 small step, and its import"
  timeout 180 python3 calibrate/tools/kineto_gpt2_step.py "$OUT/kineto-gpt2-small.json" &&
    "$BIN" import-kineto "$OUT/kineto-gpt2-small.json" --workload gpt2-small --base h200-sxm-141gb \
      --report "$OUT/kineto-gpt2-small.report.json" --out "$OUT/h200-from-trace.json" | tee "$OUT/kineto-import.txt"
  gzip -9 "$OUT/kineto-gpt2-small.json" 2>/dev/null || true
fi
echo "== done (status $status); files:"
ls -la "$OUT" "$OUT/quick" 2>/dev/null
exit "$status"
