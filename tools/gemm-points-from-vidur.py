#!/usr/bin/env python3
"""Turn Vidur's measured per-layer GEMM times into a partsim GPU profile's scattered gemm_efficiency points.

Vidur (Agrawal et al., MLSys 2024, github.com/microsoft/vidur) ships, per GPU and model, the times of the linear
layers of one transformer block as its profiler measured them (data/profiling/compute/GPU/ORG/MODEL/mlp.csv, fp16,
CUDA-event timing, median of 20 runs), for token counts up to 32768 and tensor-parallel degrees 1 to 8. Each row
names the model's shape, so each time is one GEMM of a known (m, n, k) (vidur/profiling/mlp/mlp_impl.py):

  attn_pre_proj   m = tokens, n = (heads + 2 kv_heads) head_dim / tp, k = hidden
  attn_post_proj  m = tokens, n = hidden,                            k = heads head_dim / tp
  mlp_up_proj     m = tokens, n = ffn / tp (2 ffn / tp when gated),  k = hidden
  mlp_down_proj   m = tokens, n = hidden,                            k = ffn / tp

This script reads those CSV files (give it local copies), keeps the token counts that are powers of two (the file
holds every multiple of 32: the powers are a fair sample and keep the profile small), takes the median of every
measurement of one shape (models share shapes), divides 2 m n k / time by the profile's dense peak, and writes the
points into the profile's gemm_efficiency, in place, as a scattered layout with the provenance given on the command
line. It copies no code, only the measured figures, each with its (m, n, k).

  tools/gemm-points-from-vidur.py a100/*/*/mlp.csv --data-type fp16 --also bf16 \\
      --profile models/hardware/a100-sxm4-80gb.json --provenance '{...}'
"""
import argparse
import csv
import json
import statistics
import sys

from gemm_profile import peak_flops, write_table

OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")


def shapes(row):
    h = int(row["n_embd"])
    heads = int(row["n_head"])
    kv = int(row["n_kv_head"])
    ffn = int(row["n_expanded_embd"])
    tp = int(row["num_tensor_parallel_workers"])
    m = int(row["num_tokens"])
    d = h // heads
    up = (2 if row["use_gated_mlp"] == "True" else 1) * ffn
    return {"attn_pre_proj": (m, (heads + 2 * kv) * d // tp, h), "attn_post_proj": (m, h, heads * d // tp),
            "mlp_up_proj": (m, up // tp, h), "mlp_down_proj": (m, h, ffn // tp)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--data-type", required=True, help="the data type the times were measured in")
    parser.add_argument("--also", action="append", default=[],
                        help="another data type given the same points (same tensor-core peak), said in the provenance")
    parser.add_argument("--profile", required=True)
    parser.add_argument("--provenance", required=True, help="the provenance object, as JSON")
    args = parser.parse_args()

    with open(args.profile) as f:
        original = f.read()
    profile = json.loads(original)
    peak, peak_text = peak_flops(profile, args.data_type)
    for other in args.also:
        if profile["peak_flops"][other]["value"] != peak_text:
            sys.exit(f"{other} has another peak than {args.data_type}")

    times = {}
    for path in args.csv:
        with open(path) as f:
            for row in csv.DictReader(f):
                m = int(row["num_tokens"])
                if m & (m - 1):
                    continue
                for op, shape in shapes(row).items():
                    times.setdefault(shape, []).append(float(row[f"time_stats.{op}.median"]) * 1e-3)
    if not times:
        sys.exit("no rows")
    points = {}
    for (m, n, k), samples in times.items():
        efficiency = 2.0 * m * n * k / statistics.median(samples) / peak
        if not 0 < efficiency <= 1:
            sys.exit(f"m={m} n={n} k={k}: {efficiency:.3f} of the peak {peak_text}")
        points[(m, n, k)] = round(efficiency, 4)

    table = profile["gemm_efficiency"]
    types = [args.data_type] + args.also
    kept = [p for p in table["points"] if p["data_type"] not in types]
    new = [{"m": m, "n": n, "k": k, "data_type": t, "efficiency": e}
           for t in types for (m, n, k), e in sorted(points.items())]
    table["points"] = kept + new
    # The default curve (other data types) keeps the provenance it had from the table.
    table["default_curve"].setdefault("provenance", table["provenance"])
    table["provenance"] = json.loads(args.provenance)
    table["layout"] = "scattered"
    write_table(args.profile, original, table)
    values = sorted(points.values())
    print(f"{args.profile}: {len(points)} shapes x {len(types)} data types from {sum(len(s) for s in times.values())} "
          f"measurements, efficiency {values[0]} to {values[-1]} (median {values[len(values) // 2]})")


if __name__ == "__main__":
    main()
