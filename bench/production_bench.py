#!/usr/bin/env python3
"""Simulator-speed benchmark at production scale (issue 17): one iteration of each 3D-parallel run of
bench/production/ (Megatron-LM 1T on 3072 A100s and 530B on 2520 A100s on two-level fat-trees, Llama 3 405B on
16,384 H100s on a three-level fat-tree), each also on a star network (the same run with `/cluster/network/topology`
star), at the fidelity `auto` picks and default settings, as a new user would run them. Prints a markdown table: wall
time (median of REPEATS), peak RSS, the ranks simulated after folding, messages and the simulated iteration time.

Usage: bench/production_bench.py [--partsim BUILD/sim/partsim] [--repeats 1] [--only NAME_FRAGMENT]
"""
import argparse
import glob
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partsim_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("REPEATS", "1")))
    parser.add_argument("--only", default="", help="run only scenarios whose file name contains this")
    args = parser.parse_args()
    partsim = partsim_run.binary(args.partsim, ROOT)
    print("| scenario | network | GPUs | simulated ranks | messages | wall (s) | peak RSS (MiB) | iteration (s) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for path in sorted(glob.glob(os.path.join(HERE, "production", "*.json"))):
        name = os.path.basename(path)[:-5]
        if args.only not in name:
            continue
        with open(path) as f:
            scenario = json.load(f)
        star = json.loads(json.dumps(scenario))
        star["cluster"]["network"]["topology"] = "star"
        star["cluster"]["network"].pop("fat_tree", None)
        for variant in (scenario, star):
            walls, rss, report = [], 0.0, None
            with tempfile.TemporaryDirectory() as cwd:
                scenario_path = os.path.join(cwd, "scenario.json")
                with open(scenario_path, "w") as f:
                    json.dump(variant, f)
                for _ in range(args.repeats):
                    wall, peak, out = partsim_run.run(
                        partsim, ["run", scenario_path, "--json", "--no-files", "--no-progress"], cwd)
                    walls.append(wall)
                    rss = max(rss, peak)
                    report = json.loads(out)
            engine, summary = report["engine"], report["summary"]
            topology = variant["cluster"]["network"]["topology"]
            print(f"| {name} | {topology} | {summary['gpus']} | {engine['simulated_ranks']} | {engine['messages']:,} "
                  f"| {statistics.median(walls):.2f} | {rss:.0f} | {summary['makespan_s']:.3f} |", flush=True)


if __name__ == "__main__":
    main()
