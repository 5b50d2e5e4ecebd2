#!/usr/bin/env python3
"""Split a callgrind profile of partsim between partsim's own code, SimGrid and start-up.

Usage: bench/callgrind_split.py callgrind.out.PID

Inclusive costs are useless for partsim: SimGrid's raw context switches make every actor's code appear inside
every other's. So this works from exclusive costs and direct call edges: each function is classed by its ELF
object (the partsim executable, libsimgrid, libc/libstdc++/ld.so, the rest), and libc/libstdc++ code (malloc, free,
operator new, __dynamic_cast, ...) is charged to the partsim or SimGrid function that called into it. std:: template
code that lives in the partsim executable is treated like libstdc++: libsimgrid binds to it too (symbol
interposition). Whatever libc code is not reached from either (dynamic loading, exit) counts as start-up.
"""
import collections
import re
import signal
import sys

SUPPORT_OBJECTS = ("libc.so", "libstdc++", "ld-linux", "libgcc_s", "libm.so")
ENTRY_POINTS = ("__libc_start_main", "(below main)", "_dl_start", "_dl_init", "call_init", "__libc_start_call_main")


def parse(path):
    names = {"ob": {}, "fl": {}, "fn": {}}
    kind_of = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl", "fn": "fn",
               "cfn": "fn"}

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        table = names[kind_of[kind]]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table[m.group(1)]

    exclusive, edges, object_of = collections.Counter(), collections.Counter(), {}
    ob = fn = cob = cfn = None
    in_call, positions = False, 1
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line[0].isdigit() or line[0] in "+-*":
                parts = line.split()
                if len(parts) <= positions:
                    continue
                cost = int(parts[positions])
                if in_call:
                    edges[(fn, cfn)] += cost
                    in_call, cob = False, None
                else:
                    exclusive[fn] += cost
                continue
            if line.startswith("positions:"):
                positions = len(line.split()) - 1
                continue
            m = re.match(r"(\w+)=(.*)$", line)
            if not m:
                continue
            key, value = m.groups()
            if key == "ob":
                ob = name("ob", value)
            elif key == "fn":
                fn = name("fn", value)
                object_of.setdefault(fn, ob)
            elif key == "cob":
                cob = name("ob", value)
            elif key == "cfn":
                cfn = name("fn", value)
                object_of.setdefault(cfn, cob or ob)
            elif key in kind_of:
                name(key, value)
            elif key == "calls":
                in_call = True
    return exclusive, edges, object_of


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    exclusive, edges, object_of = parse(sys.argv[1])
    total = sum(exclusive.values())

    def category(fn):
        obj = object_of.get(fn, "?")
        if "/libsimgrid" in obj:
            return "simgrid"
        if obj.split("/")[-1].startswith("partsim"):
            if re.match(r"(boost::intrusive_ptr<simgrid|simgrid::)", fn):
                return "simgrid"
            if fn == "(below main)":
                return "startup"
            if re.search(r"partsim::|nlohmann::|CLI::|fmt::|^main$", fn):
                return "partsim"
            return "support"
        if any(s in obj for s in SUPPORT_OBJECTS):
            return "support"
        return "startup"  # libraries libsimgrid pulls in (ns-3, boost, ...): static initialisers

    own = collections.Counter()
    for fn, cost in exclusive.items():
        own[category(fn)] += cost
    charged, calls = collections.Counter(), collections.Counter()
    for (caller, callee), cost in edges.items():
        if category(callee) == "support" and category(caller) != "support" and not callee.startswith(ENTRY_POINTS):
            charged[category(caller)] += cost
            calls[(category(caller), caller, callee)] += cost
    uncharged = own["support"] - sum(charged.values())

    print(f"total instructions {total:,}")
    for cat in ("simgrid", "partsim", "startup"):
        cost = own[cat] + charged[cat] + (uncharged if cat == "startup" else 0)
        detail = (f"exclusive {own[cat]:,}, libc/libstdc++ it called {charged[cat]:,}" if cat != "startup" else
                  "ld.so, static initialisers, exit")
        print(f"  {cat:8s} {cost:>15,} {100 * cost / total:6.2f}%  ({detail})")
    for cat in ("partsim", "simgrid"):
        print(f"\ntop {cat} functions (exclusive):")
        top = sorted((c, f) for f, c in exclusive.items() if category(f) == cat)[-10:]
        for cost, fn in reversed(top):
            print(f"  {cost:>13,} {100 * cost / total:5.2f}%  {fn[:150]}")
        print(f"top libc/libstdc++ calls from {cat}:")
        for (c, caller, callee), cost in calls.most_common():
            if c == cat:
                print(f"  {cost:>13,} {100 * cost / total:5.2f}%  {caller[:80]} -> {callee[:50]}")
                if cost < 0.002 * total:
                    break


if __name__ == "__main__":
    main()
