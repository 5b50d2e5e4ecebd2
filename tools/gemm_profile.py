"""What the tools/gemm-points-from-*.py scripts share: a profile's dense peak, and writing its gemm_efficiency table
back in place (the rest of the file as written; gemm_efficiency is its last key, one point a line)."""
import json
import os
import re


def peak_flops(profile, data_type):
    """The profile's dense peak for `data_type` in FLOP/s, and its text ("312TFLOPs")."""
    text = profile["peak_flops"][data_type]["value"]
    number, unit = re.fullmatch(r"([0-9.]+)([TP])FLOPs", text).groups()
    return float(number) * {"T": 1e12, "P": 1e15}[unit], text


def write_table(path, original, table):
    """Rewrites the gemm_efficiency object of the profile at `path` (read as `original`) with `table`, atomically."""
    start = original.index('  "gemm_efficiency": {')
    lines = ['  "gemm_efficiency": {', '    "provenance": ' + json.dumps(table["provenance"]) + ","]
    if "layout" in table:
        lines.append('    "layout": ' + json.dumps(table["layout"]) + ",")
    lines += ['    "default_curve": ' + json.dumps(table["default_curve"]) + ",", '    "points": [']
    points = table["points"]
    lines += ["      " + json.dumps(p) + ("," if i + 1 < len(points) else "") for i, p in enumerate(points)]
    lines += ["    ]", "  }", "}", ""]
    with open(path + ".tmp", "w") as f:
        f.write(original[:start] + "\n".join(lines))
    os.replace(path + ".tmp", path)
