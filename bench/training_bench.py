#!/usr/bin/env python3
"""Simulator-speed benchmark: one Llama-3 8B data-parallel iteration (bench/llama3-8b-dp.json) on N GPUs at each
collective fidelity level. Prints a markdown table: planned messages, wall time (median of REPEATS), peak RSS,
simulated makespan and the collective algorithm that ran. Points whose planned message count is above --max-messages
(default 30 million, about 100 s at 3 us per message) are skipped and marked so.

Usage: bench/training_bench.py [--partsim BUILD/sim/partsim] [--gpus 64 512 4096 16384] [--repeats 3]
"""
import argparse
import json
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partsim_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(HERE, "llama3-8b-dp.json")
GPUS_PER_NODE = 8


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    parser.add_argument("--gpus", type=int, nargs="+", default=[64, 512, 4096, 16384])
    parser.add_argument("--fidelity", nargs="+", default=["steps", "flows", "analytic"])
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("REPEATS", "3")))
    parser.add_argument("--max-messages", type=float, default=30e6)
    args = parser.parse_args()
    partsim = partsim_run.binary(args.partsim, ROOT)
    print(f"| GPUs | fidelity | algorithm | messages | wall (s) | peak RSS (MiB) | makespan (s) |")
    print(f"|---:|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as work:
        for n in args.gpus:
            if n % GPUS_PER_NODE:
                sys.exit(f"training_bench.py: N={n} is not a multiple of {GPUS_PER_NODE}")
            for fidelity in args.fidelity:
                sets = ["--set", f"/cluster/nodes={n // GPUS_PER_NODE}", "--set", f"/workload/global_batch={n}",
                        "--set", f"/strategy/gradient_sync/fidelity={fidelity}"]
                # Validation lifts the scenario's event limit: the count decides whether the point runs.
                _, _, text = partsim_run.run(
                    partsim, ["validate", SCENARIO, "--set", "/run/max_events=1000000000000"] + sets, work)
                planned = re.search(r"(\d+) messages and (\d+) executions planned", text)
                messages = int(planned.group(1)) if planned else -1
                if messages > args.max_messages:
                    print(f"| {n} | {fidelity} | | {messages:,} | skipped (over {args.max_messages:.0e} messages) | | |")
                    continue
                walls, rss, makespan, algorithm = [], 0.0, 0.0, ""
                for _ in range(args.repeats):
                    wall, peak, out = partsim_run.run(
                        partsim, ["run", SCENARIO, "--json", "--no-files", "--no-progress"] + sets, work)
                    report = json.loads(out)
                    walls.append(wall)
                    rss = max(rss, peak)
                    makespan = report["summary"]["makespan_s"]
                    algorithm = ", ".join(sorted({c["algorithm"] for c in report.get("collectives", [])}))
                print(f"| {n} | {fidelity} | {algorithm} | {messages:,} | {statistics.median(walls):.3f} | "
                      f"{rss:.0f} | {makespan:.6g} |", flush=True)


if __name__ == "__main__":
    main()
