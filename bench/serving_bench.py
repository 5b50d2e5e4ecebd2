#!/usr/bin/env python3
"""Serving speed (issue 20's goal: one million requests through a four-stage pipeline in under 30 s on one core).

Runs two pipelines of 1,000,000 Poisson requests through four stages with `partsim run --no-files`:
  seed-5     scenarios/seed-5-stage-pipeline.json as shipped (batches of up to 32 and 16 in the two GPU stages, bytes
             between every pair of pools, Ray actor calls per hop), --set /workload/requests=1000000;
  unbatched  the same pools and rates with every batch of one item, so every item is one service sleep in each of the
             four stages and one SimGrid message on each of the three hops (the most events per request).
Prints, for each: requests, messages and sleeps simulated, wall seconds, user CPU seconds (the child's own, which
stays meaningful on a machine shared with other work) and peak RSS.

Usage: bench/serving_bench.py [--partsim BUILD/sim/partsim] [--requests 1000000]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(ROOT, "scenarios", "seed-5-stage-pipeline.json")


def unbatched(document):
    document = json.loads(json.dumps(document))
    for stage in document["workload"]["stages"]:
        stage.pop("batching", None)
    # Without batching, a batch's time per item: features 0.7 ms (8 replicas, with the 0.14 ms per-item overhead of
    # the Ray preset 9,500 items/s), inference 1.5 ms (16 replicas, 9,800 items/s); neither saturates at 8,000/s.
    document["workload"]["stages"][1]["service"] = {"distribution": "fixed", "mean": "0.7ms"}
    document["workload"]["stages"][2]["service"] = {"distribution": "gamma", "mean": "1.5ms", "cv": 0.3}
    document["expect"] = {}
    return document


def run(partsim, path, requests, cwd):
    args = [partsim, "run", path, "--no-files", "--no-progress", "--no-expect", "--json", "--set",
            f"/workload/requests={requests}"]
    with open(os.path.join(cwd, "out.json"), "w") as out, open(os.path.join(cwd, "err.txt"), "w") as err:
        begin = time.perf_counter()
        proc = subprocess.Popen(args, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - begin
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"serving_bench.py: {' '.join(args)} failed:\n{open(os.path.join(cwd, 'err.txt')).read()}")
    with open(os.path.join(cwd, "out.json")) as f:
        report = json.load(f)
    return wall, usage.ru_utime, usage.ru_maxrss / 1024.0, report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    parser.add_argument("--requests", type=int, default=1_000_000)
    options = parser.parse_args()
    partsim = os.path.abspath(options.partsim)
    if not os.access(partsim, os.X_OK):
        sys.exit(f"serving_bench.py: no partsim binary at {partsim}; build it first or pass --partsim")
    os.environ["PARTSIM_DATA_DIR"] = ROOT
    with open(SCENARIO) as f:
        seed5 = json.load(f)
    print("| pipeline | requests | messages | sleeps | wall s | user CPU s | peak RSS MiB | items/s | p99 ms | bottleneck |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, document in (("seed-5", seed5), ("unbatched", unbatched(seed5))):
            path = os.path.join(tmp, f"{name}.json")
            with open(path, "w") as f:
                json.dump(document, f)
            wall, user, rss, report = run(partsim, path, options.requests, tmp)
            s = report["serving"]
            print(f"| {name} | {s['sent']:,} | {report['engine']['messages']:,} | "
                  f"{report['engine']['executions_as_sleeps']:,} | {wall:.1f} | {user:.1f} | {rss:.0f} | "
                  f"{s['throughput_items_per_s']:.0f} | {s['latency']['p99_s'] * 1e3:.1f} | {s['bottleneck']} |")


if __name__ == "__main__":
    main()
