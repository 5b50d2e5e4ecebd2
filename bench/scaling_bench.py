#!/usr/bin/env python3
"""Simulator cost against GPU count for a fixed per-replica job (issue 17): Llama 3 70B with TP 8 x PP 4 (interleaved,
sequence parallel, ZeRO-1, 32 micro-batches per replica; scenarios/llama3-70b-3d-64xh100.json) on H100 nodes under a
non-blocking two-level fat-tree (16 nodes per leaf, 8 NDR NICs per node), replicated over 64 to 16,384 GPUs (data
parallel 2 to 512, derived from the GPU count). Prints a markdown table (wall time, peak RSS, simulated ranks,
iteration time) and writes the curve as an SVG plot (log-log: wall seconds and peak RSS GiB against GPUs).

Usage: bench/scaling_bench.py [--partsim BUILD/sim/partsim] [--gpus 64 256 ...] [--svg docs/scaling.svg]
"""
import argparse
import json
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partsim_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(ROOT, "scenarios", "llama3-70b-3d-64xh100.json")


def scenario_for(gpus):
    with open(SCENARIO) as f:
        s = json.load(f)
    s.pop("expect", None)
    s["cluster"]["nodes"] = gpus // 8
    s["cluster"]["network"] = {"topology": "fat_tree", "profile": "ib-ndr", "nics_per_node": 8,
                               "fat_tree": {"levels": 2, "nodes_per_leaf": 16}}
    s["strategy"].pop("data", None)  # derived: GPUs / (tensor x pipeline)
    s["workload"]["global_batch"] = gpus  # 32 micro-batches of 1 per replica of 32 GPUs
    return s


def svg(points, path):
    """A log-log plot of wall seconds and peak RSS (GiB) against GPUs, with its axes labelled."""
    w, h, left, right, top, bottom = 640, 400, 70, 70, 30, 50
    xs = [p[0] for p in points]
    lo_x, hi_x = math.log10(min(xs)), math.log10(max(xs))
    values = [v for p in points for v in (p[1], p[2])]
    lo_y, hi_y = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))

    def px(x):
        return left + (math.log10(x) - lo_x) / (hi_x - lo_x) * (w - left - right)

    def py(y):
        return h - bottom - (math.log10(y) - lo_y) / (hi_y - lo_y) * (h - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="12"><rect width="{w}" height="{h}" fill="white"/>']
    for e in range(lo_y, hi_y + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g}</text>')
    for x in xs:
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{h - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{h - bottom + 18}" text-anchor="middle">{x:,}</text>')
    out.append(f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">GPUs (log scale)</text>')
    for index, (name, colour) in enumerate((("wall time, s", "#1f77b4"), ("peak RSS, GiB", "#d62728"))):
        line = " ".join(f"{px(p[0]):.1f},{py(p[1 + index]):.1f}" for p in points)
        out.append(f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for p in points:
            out.append(f'<circle cx="{px(p[0]):.1f}" cy="{py(p[1 + index]):.1f}" r="3" fill="{colour}"/>')
        out.append(f'<text x="{left + 10}" y="{top + 15 + 16 * index}" fill="{colour}">{name}</text>')
    out.append(f'<text x="{w / 2}" y="{top - 10}" text-anchor="middle">partsim run: Llama 3 70B, TP 8 x PP 4 x '
               f'DP N/32, fat-tree (log-log)</text></svg>')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    # 16,384 GPUs is refused today: its plan would hold 1.28e8 steps (every rank's program is built), past the limit.
    parser.add_argument("--gpus", type=int, nargs="+", default=[64, 256, 1024, 4096])
    parser.add_argument("--svg", default="", help="also write the plot to this file")
    args = parser.parse_args()
    partsim = partsim_run.binary(args.partsim, ROOT)
    print("| GPUs | data parallel | simulated ranks | wall (s) | peak RSS (MiB) | iteration (s) |")
    print("|---:|---:|---:|---:|---:|---:|")
    points = []
    for gpus in args.gpus:
        with tempfile.TemporaryDirectory() as cwd:
            path = os.path.join(cwd, "scenario.json")
            with open(path, "w") as f:
                json.dump(scenario_for(gpus), f)
            wall, rss, out = partsim_run.run(partsim, ["run", path, "--json", "--no-files", "--no-progress"], cwd)
        report = json.loads(out)
        print(f"| {gpus:,} | {gpus // 32} | {report['engine']['simulated_ranks']} | {wall:.2f} | {rss:.0f} "
              f"| {report['summary']['makespan_s']:.4f} |", flush=True)
        points.append((gpus, wall, rss / 1024.0))
    if args.svg:
        svg(points, args.svg)


if __name__ == "__main__":
    main()
