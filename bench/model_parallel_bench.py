#!/usr/bin/env python3
"""Simulator-speed benchmark for model parallelism: one iteration of GPT-3 175B on 1024 GPUs (TP 8, PP 16, DP 8, 1F1B,
scenarios/gpt3-175b-3d-1024gpus.json) with the data-parallel gradient sync and the tensor-parallel collectives at each
fidelity level. Prints a markdown table: wall time (median of REPEATS), peak RSS, the ranks simulated after folding
identical replicas (docs/engine.md), messages simulated and the simulated iteration time.

Usage: bench/model_parallel_bench.py [--partsim BUILD/sim/partsim] [--repeats 3] [--no-fold]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partsim_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(ROOT, "scenarios", "gpt3-175b-3d-1024gpus.json")

# (tensor collectives, data-parallel sync): analytic everywhere, then message level for the data-parallel sync, then
# message level for both.
POINTS = [("analytic", "analytic"), ("analytic", "flows"), ("analytic", "steps"), ("steps", "analytic"),
          ("steps", "flows")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("REPEATS", "3")))
    parser.add_argument("--no-fold", action="store_true", help="also time every point with run.fold_replicas = false")
    args = parser.parse_args()
    partsim = partsim_run.binary(args.partsim, ROOT)
    print("| tensor collectives | data-parallel sync | folding | simulated ranks | messages | wall (s) "
          "| peak RSS (MiB) | iteration (s) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    folds = ["true", "false"] if args.no_fold else ["true"]
    with tempfile.TemporaryDirectory() as work:
        for tensor, data in POINTS:
            for fold in folds:
                sets = ["--set", f'/strategy/tensor_collectives={{"algorithm":"ring","fidelity":"{tensor}",'
                                 f'"granularity":"pass"}}',
                        "--set", f"/strategy/gradient_sync/fidelity={data}", "--set", f"/run/fold_replicas={fold}"]
                walls, rss, report = [], 0.0, None
                for _ in range(args.repeats):
                    wall, peak, out = partsim_run.run(
                        partsim, ["run", SCENARIO, "--json", "--no-files", "--no-progress"] + sets, work)
                    walls.append(wall)
                    rss = max(rss, peak)
                    report = json.loads(out)
                engine = report["engine"]
                print(f"| {tensor} | {data} | {'on' if fold == 'true' else 'off'} | {engine['simulated_ranks']} "
                      f"| {engine['messages']:,} | {statistics.median(walls):.2f} | {rss:.0f} "
                      f"| {report['summary']['makespan_s']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
