#!/usr/bin/env python3
"""Turn OpenXLA's measured GEMM throughput table into a partsim GPU profile's gemm_efficiency points.

OpenXLA keeps measured matmul throughput per GPU architecture in
xla/service/gpu/model/matmul_interpolator_data.h (text-format protobuf: entries keyed by architecture, each with
b, m, n, k and FLOP/s per data-type combination). This script reads that file (give it a local copy), takes the
b = 1 entries of one architecture and one data-type key, divides each by the profile's dense peak and writes the
points into the profile's gemm_efficiency, in place, with the provenance given on the command line. It copies no
code, only the measured figures, each of which keeps its (m, n, k).

  tools/gemm-points-from-xla.py TABLE.h --arch sm_90 --xla-type 'bf16xbf16->bf16' --data-type bf16 \
      --profile models/hardware/h100-sxm5-80gb.json
"""
import argparse
import json
import re
import sys

from gemm_profile import peak_flops, write_table


def read_entries(text, arch):
    parts = text.split(f'key: "{arch}"')
    if len(parts) != 2:
        sys.exit(f"architecture {arch} found {len(parts) - 1} times, expected once")
    section = parts[1].split('key: "sm_')[0]
    pattern = re.compile(r"entries \{\s*b: (\d+)\s*m: (\d+)\s*n: (\d+)\s*k: (\d+)\s*((?:flops \{[^}]*\}\s*)+)\}")
    for match in pattern.finditer(section):
        b, m, n, k = (int(match.group(i)) for i in range(1, 5))
        rates = dict(re.findall(r'key: "([^"]+)" value: (\d+)', match.group(5)))
        yield b, m, n, k, {key: float(value) for key, value in rates.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table")
    parser.add_argument("--arch", required=True)
    parser.add_argument("--xla-type", required=True)
    parser.add_argument("--data-type", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--provenance", required=True, help="the provenance object, as JSON")
    args = parser.parse_args()

    with open(args.profile) as f:
        original = f.read()
    profile = json.loads(original)
    peak, peak_text = peak_flops(profile, args.data_type)

    points = {}
    for b, m, n, k, rates in read_entries(open(args.table).read(), args.arch):
        if b != 1 or args.xla_type not in rates:
            continue
        if (m, n, k) in points:
            sys.exit(f"m={m} n={n} k={k} appears twice")
        efficiency = rates[args.xla_type] / peak
        if not 0 < efficiency <= 1:
            sys.exit(f"m={m} n={n} k={k}: {rates[args.xla_type]} FLOP/s is {efficiency:.3f} of the peak {peak_text}")
        points[(m, n, k)] = round(efficiency, 4)
    if not points:
        sys.exit("no points")

    table = profile["gemm_efficiency"]
    kept = [p for p in table["points"] if p["data_type"] != args.data_type]
    new = [{"m": m, "n": n, "k": k, "data_type": args.data_type, "efficiency": e} for (m, n, k), e in sorted(points.items())]
    table["points"] = kept + new
    table["provenance"] = json.loads(args.provenance)
    write_table(args.profile, original, table)
    print(f"{args.profile}: {len(new)} {args.data_type} points, efficiency {min(points.values())} to {max(points.values())}")


if __name__ == "__main__":
    main()
