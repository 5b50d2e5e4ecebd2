"""Shared by the benchmark scripts: run the partsim binary once and measure it."""
import os
import subprocess
import sys
import time


def binary(path, root):
    """The partsim binary at `path` as an absolute path, with PARTSIM_DATA_DIR set to the source tree `root`. Exits
    when there is none, naming the calling script."""
    partsim = os.path.abspath(path)
    if not os.access(partsim, os.X_OK):
        sys.exit(f"{os.path.basename(sys.argv[0])}: no partsim binary at {partsim}; build it first or pass --partsim")
    os.environ["PARTSIM_DATA_DIR"] = root
    return partsim


def run(partsim, args, cwd):
    """Runs partsim with `args` in `cwd`; returns (wall seconds, peak RSS in MiB, stdout). Exits on failure, naming
    the calling script in the message."""
    # Output goes to files, not pipes: a report bigger than a pipe's buffer would block the child before wait4.
    out_path, err_path = os.path.join(cwd, "stdout"), os.path.join(cwd, "stderr")
    with open(out_path, "w") as out_file, open(err_path, "w") as err_file:
        begin = time.perf_counter()
        proc = subprocess.Popen([partsim] + args, cwd=cwd, stdout=out_file, stderr=err_file)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - begin
    with open(out_path) as f:
        out = f.read()
    with open(err_path) as f:
        err = f.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: partsim {' '.join(args)} failed (exit {code}):\n{err}")
    return wall, usage.ru_maxrss / 1024.0, out
