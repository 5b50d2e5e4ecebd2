#!/usr/bin/env python3
"""Sweep-speed benchmark (issue 17: a 1,000-point sweep of a 64-GPU 3D scenario in under 5 minutes on 2 cores):
`partsim sweep` of Llama 3 70B on 64 H100s (scenarios/llama3-70b-3d-64xh100.json: TP 8 x PP 4 interleaved x DP 2)
over 960 points: global batch 8 to 80 (10) x NICs per node 1, 2, 4, 8 x recomputation selective, full x ZeRO 0, 1 x
sequence parallelism on, off x network profile ib-ndr, ib-hdr, roce-400g. Prints the points, the wall time, the
parent's peak RSS and the time per point. Points with 1 or 2 NICs per node do not fold (the two replicas share a
NIC's uplink, so their contention is simulated: all 64 ranks), the others simulate 4.

Usage: bench/sweep_bench.py [--partsim BUILD/sim/partsim] [--jobs 2]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import partsim_run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AXES = [
    "/workload/global_batch=" + ",".join(str(8 * k) for k in range(1, 11)),
    "/cluster/network/nics_per_node=1,2,4,8",
    "/workload/recomputation=selective,full",
    "/strategy/zero=0,1",
    "/strategy/sequence_parallel=true,false",
    "/cluster/network/profile=ib-ndr,ib-hdr,roce-400g",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partsim", default=os.path.join(ROOT, "build", "sim", "partsim"))
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    partsim = partsim_run.binary(args.partsim, ROOT)
    points = 1
    for axis in AXES:
        points *= len(axis.split("=", 1)[1].split(","))
    command = ["sweep", os.path.join(ROOT, "scenarios", "llama3-70b-3d-64xh100.json"), "--jobs", str(args.jobs)]
    for axis in AXES:
        command += ["--vary", axis]
    with tempfile.TemporaryDirectory() as cwd:
        wall, rss, _ = partsim_run.run(partsim, command, cwd)
    print(f"{points} points with --jobs {args.jobs}: {wall:.1f} s ({wall / points * 1000:.0f} ms per point), "
          f"parent peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
