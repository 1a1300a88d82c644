#!/usr/bin/python3
"""Checks a tessera pipeline output file written by a job script (tests/slurm).

  check_output.py FILE.h5 --rows M --cols N [--input IN.h5:/A] [--ranks R] [--threads T]

The file must be complete (no FILE.XXXXXX.partial or FILE.lock left, root attribute complete == 1),
hold /input (M x N) and /transpose (N x M) with /transpose == numpy.transpose(/input) exactly, every /reductions/<op> equal to
numpy's reduction of /input along its axis (to rounding: tessera sums in its own fixed order),
and, with --input, /input equal to that dataset. --ranks/--threads are compared with the provenance
attributes of the same names. Exit status 1 with one line per problem.
"""
import argparse
import glob
import os
import sys

import h5py
import numpy as np


NUMPY_OPS = {
    "sum": lambda a, ax: np.sum(a, axis=ax, keepdims=True),
    "min": lambda a, ax: np.min(a, axis=ax, keepdims=True),
    "max": lambda a, ax: np.max(a, axis=ax, keepdims=True),
    "mean": lambda a, ax: np.mean(a, axis=ax, keepdims=True),
    "norm1": lambda a, ax: np.sum(np.abs(a), axis=ax, keepdims=True),
    "norm2": lambda a, ax: np.sqrt(np.sum(np.abs(a) ** 2, axis=ax, keepdims=True)),
    "norminf": lambda a, ax: np.max(np.abs(a), axis=ax, keepdims=True),
}
AXES = {"all": None, "rows": 1, "cols": 0}


def check_reductions(f, a):
    """/reductions/<op> against numpy; at least one must be there."""
    if "reductions" not in f or len(f["reductions"]) == 0:
        return ["no datasets in /reductions"]
    problems = []
    for name, d in f["reductions"].items():
        op, axis = d.attrs.get("op"), d.attrs.get("axis")
        if op not in NUMPY_OPS or axis not in AXES:
            problems.append(f"/reductions/{name}: unknown op {op!r} or axis {axis!r}")
            continue
        want = NUMPY_OPS[op](a.astype(np.float64), AXES[axis])
        got = d[...]
        if got.shape != want.shape:
            problems.append(f"/reductions/{name} has shape {got.shape}, expected {want.shape}")
        elif not np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(a).max(initial=0)):
            problems.append(f"/reductions/{name} ({op} over {axis}) differs from numpy: "
                            f"max |diff| {np.abs(got - want).max():.3g}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--cols", type=int, required=True)
    ap.add_argument("--input", help="FILE.h5:/dataset the job read")
    ap.add_argument("--ranks", type=int)
    ap.add_argument("--threads", type=int)
    args = ap.parse_args()

    problems = []
    if not os.path.isfile(args.file):
        print(f"check_output: {args.file}: no such file", file=sys.stderr)
        return 1
    for left in (glob.glob(glob.escape(args.file) + ".*.partial") +
                 glob.glob(glob.escape(args.file) + ".lock")):
        problems.append(f"{left} was left behind")

    n_reductions = 0
    with h5py.File(args.file, "r") as f:
        n_reductions = len(f["reductions"]) if "reductions" in f else 0
        complete = f.attrs.get("complete")
        if complete is None or int(np.asarray(complete).ravel()[0]) != 1:
            problems.append(f"root attribute complete is {complete!r}, expected 1")
        for name, want in (("ranks", args.ranks), ("threads", args.threads)):
            if want is None:
                continue
            got = f.attrs.get(name)
            if got is None or int(np.asarray(got).ravel()[0]) != want:
                problems.append(f"root attribute {name} is {got!r}, expected {want}")
        for name, shape in (("input", (args.rows, args.cols)),
                            ("transpose", (args.cols, args.rows))):
            if name not in f:
                problems.append(f"dataset /{name} missing (have: {sorted(f.keys())})")
            elif f[name].shape != shape:
                problems.append(f"/{name} has shape {f[name].shape}, expected {shape}")
        if not problems:
            a = f["input"][...]
            at = f["transpose"][...]
            if not np.array_equal(at, a.T):
                bad = np.argwhere(at != a.T)
                problems.append(f"/transpose differs from numpy.transpose(/input) at "
                                f"{len(bad)} elements, first at {tuple(bad[0])}")
            problems += check_reductions(f, a)
            if args.input:
                path, _, dset = args.input.rpartition(":")
                with h5py.File(path, "r") as g:
                    ref = g[dset][...]
                if ref.shape != a.shape or not np.array_equal(ref, a):
                    problems.append(f"/input differs from {args.input}")

    for p in problems:
        print(f"check_output: {args.file}: {p}", file=sys.stderr)
    if not problems:
        print(f"check_output: {args.file}: complete, /input {args.rows}x{args.cols}, "
              f"/transpose {args.cols}x{args.rows} == numpy transpose, "
              f"{n_reductions} reductions == numpy")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
