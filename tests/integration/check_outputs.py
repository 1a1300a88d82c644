#!/usr/bin/python3
"""Reads tessera's output files back with h5py + numpy and checks them.

  check_outputs.py generated FILE.h5:/A --rows M --cols N --dtype f64 --seed S
      the dataset equals the documented generator (docs/output.md) exactly
  check_outputs.py transpose IN.h5:/A OUT.h5:/AT
      OUT == numpy.transpose(IN) exactly (shape, dtype and every bit)
  check_outputs.py reduce IN.h5:/A RESULT.json
      the JSON of `tessera reduce --json` matches numpy's reductions within tolerance
  check_outputs.py pipeline FILE.h5 [--input IN.h5:/A] [--ops sum,norm2,max] [--axis all]
      /input, /transpose == /input.T, /reductions/<op> against numpy, the deck attribute

Every file must be complete: root attribute complete == 1, no FILE.XXXXXX.partial or FILE.lock
beside it, and the provenance attributes of docs/output.md. Exit status 1 with one line per problem.
"""
import argparse
import glob
import json
import os
import sys

import h5py
import numpy as np

PROVENANCE = ["software", "version", "git_hash", "date", "command_line", "deck", "ranks",
              "threads", "backend", "gpus", "mpi_library", "hdf5_version", "complete"]


class Problems(list):
    def add(self, text):
        self.append(text)



def same_dataset(recorded, given, base):
    """`recorded` (FILE:/path as the user typed it, relative to where tessera ran) names the
    same dataset as `given`."""
    rf, _, rp = recorded.rpartition(":/")
    gf, _, gp = given.rpartition(":/")
    rf = rf if os.path.isabs(rf) else os.path.join(base, rf)
    return rp == gp and os.path.realpath(rf) == os.path.realpath(gf)

def split_ref(ref):
    i = ref.rfind(":/")
    if i < 0:
        raise SystemExit(f"check_outputs: '{ref}' is not FILE.h5:/dataset")
    return ref[:i], ref[i + 1:]


def attr(obj, name):
    v = obj.attrs.get(name)
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.ravel()[0]
    return v


def check_complete(path, problems, ranks=None):
    """The file exists, is complete and carries provenance."""
    if not os.path.isfile(path):
        problems.add(f"{path}: no such file")
        return False
    for left in (glob.glob(glob.escape(path) + ".*.partial") +
                 glob.glob(glob.escape(path) + ".lock")):
        problems.add(f"{left} was left behind")
    with h5py.File(path, "r") as f:
        for name in PROVENANCE:
            if name not in f.attrs:
                problems.add(f"{path}: root attribute '{name}' missing")
        if attr(f, "complete") != 1:
            problems.add(f"{path}: complete = {attr(f, 'complete')!r}, expected 1")
        if attr(f, "software") != "tessera":
            problems.add(f"{path}: software = {attr(f, 'software')!r}")
        if ranks is not None and attr(f, "ranks") != ranks:
            problems.add(f"{path}: ranks = {attr(f, 'ranks')!r}, expected {ranks}")
        if attr(f, "backend") not in ("cpu", "cuda"):
            problems.add(f"{path}: backend = {attr(f, 'backend')!r}")
    return True


# --- the generator of docs/output.md -------------------------------------------------------

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x):
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & M64
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & M64
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & M64
        return x ^ (x >> np.uint64(31))


def generated(rows, cols, seed, dtype):
    n = np.arange(rows * cols, dtype=np.uint64)
    key = splitmix64(np.uint64(seed))

    def u(counter):
        with np.errstate(over="ignore"):
            z = splitmix64(key + counter)
        if dtype in ("f32", "c64"):
            return (np.float32(2.0) * ((z >> np.uint64(40)).astype(np.float32)
                                       * np.float32(2.0 ** -24)) - np.float32(1.0))
        return 2.0 * ((z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53) - 1.0

    if dtype in ("f32", "f64"):
        return u(n).reshape(rows, cols)
    ctype = np.complex64 if dtype == "c64" else np.complex128
    out = np.empty(rows * cols, dtype=ctype)
    out.real = u(2 * n)
    out.imag = u(2 * n + np.uint64(1))
    return out.reshape(rows, cols)


NUMPY_DTYPE = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def reference(a, op, axis):
    """numpy's value of a tessera reduction, keepdims-shaped, in float64."""
    x = a.astype(np.float64)
    ax = {"all": None, "rows": 1, "cols": 0}[axis]
    fns = {
        "sum": lambda: np.sum(x, axis=ax, keepdims=True),
        "min": lambda: np.min(x, axis=ax, keepdims=True),
        "max": lambda: np.max(x, axis=ax, keepdims=True),
        "mean": lambda: np.mean(x, axis=ax, keepdims=True),
        "norm1": lambda: np.sum(np.abs(x), axis=ax, keepdims=True),
        "norm2": lambda: np.sqrt(np.sum(x * x, axis=ax, keepdims=True)),
        "norminf": lambda: np.max(np.abs(x), axis=ax, keepdims=True),
    }
    return fns[op]()


def close(got, want, a, op):
    """Sums may differ from numpy's (pairwise) order by rounding; min/max must be exact."""
    got = np.asarray(got, dtype=np.float64)
    if op in ("min", "max", "norminf"):
        return np.array_equal(got, want)
    scale = np.sum(np.abs(a.astype(np.float64))) if op != "norm2" else np.sqrt(np.sum(
        a.astype(np.float64) ** 2))
    tol = 1e-12 * max(scale, 1.0) + 1e-300
    if a.dtype == np.float32:
        tol = max(tol, 1e-12)
    return np.allclose(got, want, rtol=1e-10, atol=tol)


# --- commands --------------------------------------------------------------------------------

def cmd_generated(args, problems):
    path, dset = split_ref(args.ref)
    if not check_complete(path, problems, args.ranks):
        return
    with h5py.File(path, "r") as f:
        if dset not in f:
            problems.add(f"{args.ref}: dataset missing")
            return
        a = f[dset][...]
    want = generated(args.rows, args.cols, args.seed, args.dtype)
    if a.dtype != want.dtype or a.shape != want.shape:
        problems.add(f"{args.ref}: {a.dtype} {a.shape}, expected {want.dtype} {want.shape}")
    elif not np.array_equal(a, want):
        bad = np.argwhere(a != want)
        problems.add(f"{args.ref}: {len(bad)} elements differ from the documented generator, "
                     f"first at {tuple(bad[0])}: {a[tuple(bad[0])]!r} vs {want[tuple(bad[0])]!r}")


def cmd_transpose(args, problems):
    ipath, idset = split_ref(args.input)
    opath, odset = split_ref(args.output)
    if not check_complete(opath, problems, args.ranks):
        return
    with h5py.File(ipath, "r") as f:
        a = f[idset][...]
    with h5py.File(opath, "r") as f:
        if odset not in f:
            problems.add(f"{args.output}: dataset missing")
            return
        at = f[odset][...]
        src = attr(f[odset], "transpose_of")
        if not same_dataset(src, args.input, os.path.dirname(opath)):
            problems.add(f"{args.output}: transpose_of = {src!r}, expected {args.input!r}")
    if at.dtype != a.dtype:
        problems.add(f"{args.output}: dtype {at.dtype}, input {a.dtype}")
    if at.shape != a.T.shape:
        problems.add(f"{args.output}: shape {at.shape}, expected {a.T.shape}")
    elif not np.array_equal(at.view(np.uint8), np.ascontiguousarray(a.T).view(np.uint8)):
        bad = np.argwhere(at != a.T)
        problems.add(f"{args.output}: differs from numpy.transpose at {len(bad)} elements"
                     + (f", first at {tuple(bad[0])}" if len(bad) else " (bitwise)"))


def cmd_reduce(args, problems):
    path, dset = split_ref(args.input)
    with open(args.json) as fh:
        text = fh.read()
    try:
        r = json.loads(text)
    except json.JSONDecodeError as e:
        problems.add(f"{args.json}: not one JSON object ({e}): {text[:200]!r}")
        return
    with h5py.File(path, "r") as f:
        a = f[dset][...]
    for key in ("file", "dataset", "shape", "dtype", "axis", "results", "timings", "ranks",
                "backend"):
        if key not in r:
            problems.add(f"{args.json}: key '{key}' missing")
    if problems:
        return
    if not same_dataset(f"{r['file']}:{r['dataset']}", args.input, os.path.dirname(args.json)):
        problems.add(f"file/dataset {r['file']}:{r['dataset']}, expected {args.input}")
    if list(r["shape"]) != list(a.shape):
        problems.add(f"shape {r['shape']}, expected {list(a.shape)}")
    if args.ranks is not None and r["ranks"] != args.ranks:
        problems.add(f"ranks {r['ranks']}, expected {args.ranks}")
    if "total" not in r["timings"]:
        problems.add("timings has no total")
    axis = r["axis"]
    for op in args.ops.split(","):
        if op not in r["results"]:
            problems.add(f"result '{op}' missing")
            continue
        want = reference(a, op, axis).ravel()
        got = np.asarray(r["results"][op], dtype=np.float64).ravel()
        if got.shape != want.shape:
            problems.add(f"{op}: {got.size} values, expected {want.size}")
        elif not close(got, want, a, op):
            i = int(np.argmax(np.abs(got - want)))
            problems.add(f"{op} over {axis}: {got[i]!r} vs numpy {want[i]!r} at {i}")


def cmd_pipeline(args, problems):
    if not check_complete(args.file, problems, args.ranks):
        return
    with h5py.File(args.file, "r") as f:
        deck = attr(f, "deck")
        if not deck or "[job]" not in deck or 'kind = "pipeline"' not in deck:
            problems.add(f"{args.file}: deck attribute is not the effective deck: {deck!r:.80}")
        for name in ("input", "transpose"):
            if name not in f:
                problems.add(f"{args.file}: /{name} missing (have {sorted(f.keys())})")
        if problems:
            return
        a = f["input"][...]
        at = f["transpose"][...]
        if at.shape != a.T.shape or not np.array_equal(at, a.T):
            problems.add(f"{args.file}: /transpose != numpy.transpose(/input)")
        if args.input:
            path, dset = split_ref(args.input)
            with h5py.File(path, "r") as g:
                if not np.array_equal(g[dset][...], a):
                    problems.add(f"{args.file}: /input differs from {args.input}")
        if args.rows is not None and a.shape != (args.rows, args.cols):
            problems.add(f"{args.file}: /input shape {a.shape}, expected {(args.rows, args.cols)}")
        for op in args.ops.split(",") if args.ops else []:
            name = f"reductions/{op}"
            if name not in f:
                problems.add(f"{args.file}: /{name} missing")
                continue
            got = f[name][...]
            want = reference(a, op, args.axis)
            if got.shape != want.shape:
                problems.add(f"/{name}: shape {got.shape}, expected {want.shape}")
            elif not close(got, want, a, op):
                problems.add(f"/{name}: differs from numpy")
            if attr(f[name], "axis") != args.axis or attr(f[name], "op") != op:
                problems.add(f"/{name}: attributes op/axis are "
                             f"{attr(f[name], 'op')!r}/{attr(f[name], 'axis')!r}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generated")
    g.add_argument("ref")
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--cols", type=int, required=True)
    g.add_argument("--dtype", default="f64")
    g.add_argument("--seed", type=int, required=True)
    t = sub.add_parser("transpose")
    t.add_argument("input")
    t.add_argument("output")
    r = sub.add_parser("reduce")
    r.add_argument("input")
    r.add_argument("json")
    r.add_argument("--ops", default="sum,norm2,max")
    p = sub.add_parser("pipeline")
    p.add_argument("file")
    p.add_argument("--input")
    p.add_argument("--rows", type=int)
    p.add_argument("--cols", type=int)
    p.add_argument("--ops", default="sum,norm2,max")
    p.add_argument("--axis", default="all")
    for s in (g, t, r, p):
        s.add_argument("--ranks", type=int)
    args = ap.parse_args(argv)
    problems = Problems()
    {"generated": cmd_generated, "transpose": cmd_transpose, "reduce": cmd_reduce,
     "pipeline": cmd_pipeline}[args.cmd](args, problems)
    for p_ in problems:
        print(f"check_outputs {args.cmd}: {p_}", file=sys.stderr)
    if not problems:
        print(f"check_outputs {args.cmd}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
