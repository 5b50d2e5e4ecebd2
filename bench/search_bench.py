#!/usr/bin/env python3
"""Search speed (issue 19's goal: at least 1,000 configurations of a 70B model on 64 to 1,024 GPUs in under 2 minutes on
2 cores): `partsim search` of Llama 3 70B (scenarios/llama3-70b-3d-64xh100.json: H100 nodes of 8 GPUs, NDR InfiniBand,
interleaved 1F1B over 5 virtual stages, sequence parallelism, ZeRO-1) over 8 to 128 nodes x tensor 1, 2, 4, 8 x pipeline
1, 2, 4, 8, 16 x micro-batch 1, 2, 4 x recomputation selective, full x ZeRO 0, 1 (1,200 points), tensor at most the
GPUs of a node; the global batch one sequence of 8,192 tokens per GPU (derived: /cluster/nodes x /cluster/gpus_per_node,
weak scaling as bench/scaling_bench.py), or --global-batch N sequences for every point; the data degree derived from the
GPU count. Prints the search's counts (invalid by reason, pruned, simulated, refined), its winner, and the wall time and
peak RSS of the whole search.

Usage: bench/search_bench.py [--partsim BUILD/sim/partsim] [--jobs 2] [--refine 5] [--small] [--global-batch N]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partsim_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCENARIO = os.path.join(ROOT, "scenarios", "llama3-70b-3d-64xh100.json")

SPACE = {
    "description": "Llama 3 70B on 64 to 1,024 H100s: the split, the micro-batch, recomputation and ZeRO",
    "axes": {
        "/cluster/nodes": [8, 16, 32, 64, 128],
        "/strategy/tensor": [1, 2, 4, 8],
        "/strategy/pipeline": [1, 2, 4, 8, 16],
        "/workload/micro_batch": [1, 2, 4],
        "/workload/recomputation": ["selective", "full"],
        "/strategy/zero": [0, 1],
    },
    "derived": {"/workload/global_batch": "/cluster/nodes * /cluster/gpus_per_node"},
    "constraints": ["/strategy/tensor <= /cluster/gpus_per_node"],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--refine", type=int, default=5)
    parser.add_argument("--small", action="store_true", help="64 and 128 GPUs only (a quick check)")
    parser.add_argument("--global-batch", type=int, help="sequences per iteration for every point (default: one per GPU)")
    args = parser.parse_args()
    partsim = partsim_run.binary(args.partsim, ROOT)
    space = json.loads(json.dumps(SPACE))
    if args.small:
        space["axes"]["/cluster/nodes"] = [8, 16]
    if args.global_batch:
        del space["derived"]
        space["set"] = {"/workload/global_batch": args.global_batch}
    with tempfile.TemporaryDirectory() as tmp:
        space_path = os.path.join(tmp, "space.json")
        with open(space_path, "w") as f:
            json.dump(space, f)
        result_path = os.path.join(tmp, "search.json")
        wall, rss, out = partsim_run.run(partsim, ["search", SCENARIO, "--space", space_path, "--jobs",
                                                   str(args.jobs), "--refine", str(args.refine), "--json",
                                                   result_path], tmp)
        with open(result_path) as f:
            result = json.load(f)
    counts = result["counts"]
    print(f"| configurations | excluded | invalid | pruned (memory) | simulated fast | refined | failed | "
          f"wall s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    print(f"| {counts['points']} | {counts['excluded']} | {counts['invalid']} | {counts['pruned_out_of_memory']} | "
          f"{counts['simulated_fast']} | {counts['refined_faithful']} | {counts['failed']} | {wall:.1f} | {rss:.0f} |")
    print()
    for reason in result["invalid_reasons"]:
        print(f"  {reason['count']:5d} invalid: {reason['reason']}")
    winner = result["winner"]
    if winner is not None:
        point = result["points"][winner]
        figures = point.get("faithful") or point["fast"]
        print(f"\n  winner: point {winner} {point['values']}: {figures['rank_value']:.6g} "
              f"{result['rank_by']['unit']} ({figures['fidelity']})")
    print(f"\n  {counts['points']} configurations in {wall:.1f} s with --jobs {args.jobs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
