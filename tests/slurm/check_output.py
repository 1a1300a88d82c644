#!/usr/bin/python3
"""Checks a tessera pipeline output file written by a job script (tests/slurm).

  check_output.py FILE.h5 --rows M --cols N [--input IN.h5:/A] [--ranks R] [--threads T]

The file must be complete (no FILE.partial left, root attribute complete == 1), hold /input
(M x N) and /transpose (N x M) with /transpose == numpy.transpose(/input) exactly, and, with
--input, /input equal to that dataset. --ranks/--threads are compared with the provenance
attributes of the same names. Exit status 1 with one line per problem.
"""
import argparse
import os
import sys

import h5py
import numpy as np


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
    if os.path.exists(args.file + ".partial"):
        problems.append(f"{args.file}.partial was left behind")

    with h5py.File(args.file, "r") as f:
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
              f"/transpose {args.cols}x{args.rows} == numpy transpose")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
