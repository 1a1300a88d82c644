#!/usr/bin/python3
"""End-to-end tests of the `tessera` command line (registered by CMakeLists.txt here).

  cli_test.py --tessera BIN --np N SCENARIO [CASE]

N = 0 runs tessera without a launcher (single-node test mode); N >= 1 runs `mpirun -np N`.
Every scenario works in a fresh temporary directory and uses fresh random shapes and seeds
(printed, so a failure can be reproduced). Scenarios:

  end_to_end      generate -> transpose -> reduce --json, read back with h5py/numpy and h5dump
  transpose_1000  a 1000 x 999 f64 transpose compared with numpy exactly
  run_default     `tessera run` with the embedded default deck
  run_deck        a deck file with --set overrides (rows axis, chunked + deflated output)
  pipeline_memory_limit  a deck whose matrix fits staging.memory_limit runs in memory
  provenance      heat2d, pipeline, generate and transpose outputs record the same provenance
  check           `tessera check` prints an effective deck that parses back to the same text
  info            `tessera info` names the MPI library, thread level, HDF5 and GPUs
  selftest        `tessera selftest` passes and prints its table
  stop_early      SIGTERM before the set-up: heat2d stops before step 1 with a checkpoint
  paraview        a heat2d output opened by ParaView (pvbatch) through its XDMF sidecar
  transpose_metadata  attributes, fill value, dimension scales, --like-input, --shuffle
  quiet_timing    -q prints nothing; --timing=off|json
  oversubscribed  the warning when ranks x threads exceed a node's cores
  bad CASE        bad input: a clear message, non-zero exit, no hang, no output file left
"""
import argparse
import contextlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_outputs  # noqa: E402

# The pipeline example deck (the embedded default is a heat2d job).
PIPELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "inputs",
                        "pipeline.toml")
TIMEOUT = 150  # seconds per tessera invocation: a hang fails the test with a clear message


class Failure(Exception):
    pass


class Runner:
    def __init__(self, tessera, np_, mpirun, workdir):
        self.tessera, self.np, self.mpirun, self.dir = tessera, np_, mpirun, workdir

    def argv(self, args):
        if self.np == 0:
            return [self.tessera] + args
        return [self.mpirun, "-np", str(self.np), self.tessera] + args

    def run(self, args, expect_ok=True, env=None):
        cmd = self.argv(args)
        print("$ " + " ".join(cmd) + (f"   (with {env})" if env else ""), flush=True)
        try:
            p = subprocess.run(cmd, cwd=self.dir, capture_output=True, text=True,
                               timeout=TIMEOUT, env=dict(os.environ, **env) if env else None)
        except subprocess.TimeoutExpired as e:
            raise Failure(f"tessera did not finish within {TIMEOUT} s (hang?): {' '.join(cmd)}\n"
                          f"stdout: {e.stdout}\nstderr: {e.stderr}")
        sys.stdout.write(p.stdout)
        sys.stdout.write(p.stderr)
        if expect_ok and p.returncode != 0:
            raise Failure(f"exit status {p.returncode}: {' '.join(cmd)}")
        return p

    def path(self, name):
        return os.path.join(self.dir, name)


def check(args):
    """Runs check_outputs.py's checks in-process; raises on problems."""
    print("check_outputs " + " ".join(args), flush=True)
    if check_outputs.main(args) != 0:
        raise Failure("check_outputs " + " ".join(args))


def expect(cond, text):
    if not cond:
        raise Failure(text)


def ranks_of(r):
    return max(r.np, 1)


# --- scenarios -------------------------------------------------------------------------------

def end_to_end(r, rng):
    for dtype in ("f64", "f32", "c128", "c64"):
        rows, cols = rng.randint(1, 70), rng.randint(1, 70)
        seed = rng.randrange(2 ** 62)
        print(f"== {dtype} {rows}x{cols} seed {seed}")
        r.run(["generate", f"A.h5:/group/A", "--rows", str(rows), "--cols", str(cols),
               "--dtype", dtype, "--seed", str(seed)])
        check(["generated", r.path("A.h5") + ":/group/A", "--rows", str(rows), "--cols",
               str(cols), "--dtype", dtype, "--seed", str(seed), "--ranks", str(ranks_of(r))])
        exchange = rng.choice(["auto", "alltoallv", "pairwise", "pipelined"])
        r.run(["transpose", "A.h5:/group/A", "AT.h5:/AT", "--backend", "cpu", "--exchange",
               exchange])
        check(["transpose", r.path("A.h5") + ":/group/A", r.path("AT.h5") + ":/AT",
               "--ranks", str(ranks_of(r))])
        # The file is also readable by HDF5's own tools.
        dump = subprocess.run(["h5dump", "-H", r.path("AT.h5")], capture_output=True, text=True)
        expect(dump.returncode == 0, f"h5dump -H failed: {dump.stderr}")
        expect(f"( {cols}, {rows} )" in dump.stdout,
               f"h5dump -H does not show a {cols}x{rows} dataset:\n{dump.stdout}")
        expect('ATTRIBUTE "complete"' in dump.stdout, "h5dump: no complete attribute")
        if dtype in ("f32", "f64"):
            axis = rng.choice(["all", "rows", "cols"])
            ops = "sum,min,max,mean,norm1,norm2,norminf"
            p = r.run(["reduce", "AT.h5:/AT", "--op", ops, "--axis", axis, "--json"])
            with open(r.path("result.json"), "w") as fh:
                fh.write(p.stdout)
            expect(p.stdout.count("\n") == 1, f"--json stdout is not one line:\n{p.stdout}")
            check(["reduce", r.path("AT.h5") + ":/AT", r.path("result.json"), "--ops", ops,
                   "--ranks", str(ranks_of(r))])
            p = r.run(["reduce", "AT.h5:/AT", "--op", "sum,max"])
            expect(re.search(r"^\s+sum\s+-?[0-9.e+-]+", p.stdout, re.M),
                   "reduce prints no sum line")
            expect("max time" in p.stdout, "reduce prints no timing table")


def transpose_1000(r, rng):
    seed = rng.randrange(2 ** 62)
    print(f"== seed {seed}")
    a = np.random.default_rng(seed).standard_normal((1000, 999))
    with h5py.File(r.path("A.h5"), "w") as f:
        f["A"] = a
    p = r.run(["transpose", "A.h5:/A", "AT.h5:/AT"])
    expect("max time" in p.stdout, "no timing table")
    check(["transpose", r.path("A.h5") + ":/A", r.path("AT.h5") + ":/AT", "--ranks",
           str(ranks_of(r))])
    with h5py.File(r.path("AT.h5"), "r") as f:
        expect(np.array_equal(f["AT"][...], a.T), "AT != numpy transpose")


def run_default(r, rng):
    # The embedded default deck (inputs/default.toml): heat2d, 256 x 256 interior unknowns,
    # Dirichlet 0, u(0) = sin(pi x) sin(pi y), 200 steps of 1e-4; the exact solution is
    # exp(-2 pi^2 t) sin(pi x) sin(pi y).
    p = r.run(["run"])
    out = r.path("tessera-default.h5")
    expect("max time" in p.stdout, "no timing table on stdout")
    m = re.search(r"error against the exact solution\s+l2 (\S+)\s+linf (\S+)", p.stdout)
    expect(m, f"no error against the exact solution on stdout:\n{p.stdout}")
    l2, linf = float(m.group(1)), float(m.group(2))
    expect(0 < l2 < 1e-5 and 0 < linf < 1e-5, f"error too large: {m.group(0)}")
    expect(re.search(r"time per step\s+[0-9.e+-]+ ms", p.stdout), "no time per step on stdout")
    expect(re.search(r"output\s+tessera-default\.h5", p.stdout), "no output path on stdout")
    with h5py.File(out, "r") as f:
        expect(int(check_outputs.attr(f, "complete")) == 1, "the output is not complete")
        u = f["fields/u"]
        expect(u.shape == (3, 256, 256), f"/fields/u has shape {u.shape}, expected (3, 256, 256)")
        t = f["fields/time"][...]
        expect(np.allclose(t, [0.0, 0.01, 0.02], rtol=0, atol=1e-15), f"/fields/time = {t}")
        x, y = f["grid/x"][...], f["grid/y"][...]
        expect(np.allclose(x, np.arange(1, 257) / 257, rtol=0, atol=1e-15), "/grid/x")
        exact = np.exp(-2 * np.pi ** 2 * t[-1]) * np.outer(np.sin(np.pi * y), np.sin(np.pi * x))
        err = np.abs(u[-1] - exact).max()
        stored = f["diagnostics/linf_error"][-1]
        expect(abs(err - stored) <= 1e-9 * stored, f"max |u - exact| = {err}, stored {stored}")
        expect(abs(linf - stored) <= 1e-6 * stored, f"printed linf {linf}, stored {stored}")
        expect(f["diagnostics/step"][-1] == 200, "the diagnostics do not end at step 200")
        deck = check_outputs.attr(f, "deck")
        # Named dimensions: the grid and the times are dimension scales of /fields/u.
        dims = f["fields/u"].dims
        expect([d.label for d in dims] == ["time", "y", "x"],
               f"/fields/u dimension labels {[d.label for d in dims]}")
        for k, name in ((0, "fields/time"), (1, "grid/y"), (2, "grid/x")):
            expect(len(dims[k]) == 1 and dims[k][0] == f[name],
                   f"dimension {k} of /fields/u has scales {[s.name for s in dims[k].values()]}")
        # The coordinates have second names beside /fields/u, where netCDF-4 looks for them.
        expect(f["fields/x"] == f["grid/x"] and f["fields/y"] == f["grid/y"],
               "/fields/x, /fields/y are not /grid/x, /grid/y")
    try:
        import netCDF4
    except ImportError:
        netCDF4 = None
    if netCDF4 is not None:
        with netCDF4.Dataset(out) as nc:
            got = nc["fields"].variables["u"].dimensions
            expect(got == ("time", "y", "x"), f"netCDF4 sees the dimensions {got}")
    expect(os.path.isfile(r.path("tessera-default.h5.xmf")), "no XDMF sidecar")
    # `tessera deck` gives the stored deck back, and it runs.
    d = r.run(["deck", "tessera-default.h5"])
    expect(d.stdout == deck if deck.endswith("\n") else d.stdout == deck + "\n",
           "`tessera deck` does not print the file's deck attribute")
    expect(d.stdout.count('kind = "heat2d"') == 1, "`tessera deck` printed more than once")
    # The stored deck is the effective deck `tessera check` prints.
    c = r.run(["check"])
    expect('kind = "heat2d"' in c.stdout, "the embedded default deck is not a heat2d job")
    expect(c.stdout.splitlines()[1:] == deck.splitlines()[1:],
           "the file's deck attribute differs from `tessera check`'s effective deck")


def run_deck(r, rng):
    seed = rng.randrange(2 ** 40)
    rows, cols = rng.randint(2, 90), rng.randint(2, 90)
    with open(r.path("job.toml"), "w") as fh:
        fh.write(f"""# test deck
[job]
kind = "pipeline"
[matrix]
rows = 3
cols = 4
seed = {seed}
[reduce]
ops = ["sum", "min", "norm1"]
[output]
file = "job.h5"
chunk_rows = 7
deflate = 3
""")
    r.run(["run", "job.toml", "--set", f"matrix.rows={rows}", "--set", f"matrix.cols={cols}",
           "--set", "reduce.axis=rows", "--set", "transpose.exchange=pairwise",
           "--backend", "cpu"])
    check(["pipeline", r.path("job.h5"), "--rows", str(rows), "--cols", str(cols), "--ops",
           "sum,min,norm1", "--axis", "rows", "--ranks", str(ranks_of(r))])
    with h5py.File(r.path("job.h5"), "r") as f:
        expect(np.array_equal(f["input"][...],
                              check_outputs.generated(rows, cols, seed, "f64")),
               "/input differs from the documented generator")
        expect(f["input"].compression == "gzip", "output.deflate did not compress /input")
        expect(f["input"].chunks[0] == min(7, rows), f"chunks {f['input'].chunks}")
        deck = check_outputs.attr(f, "deck")
        expect(f"rows = {rows}" in deck and 'axis = "rows"' in deck,
               f"the stored deck lacks the --set values:\n{deck}")
    # A deck that reads the generated matrix back.
    with open(r.path("read.toml"), "w") as fh:
        fh.write('[matrix]\ninput = "job.h5:/input"\n[output]\nfile = "read.h5"\n')
    r.run(["run", "read.toml"])
    check(["pipeline", r.path("read.h5"), "--input", r.path("job.h5") + ":/input",
           "--ranks", str(ranks_of(r))])


def pipeline_memory_limit(r, rng):
    """A pipeline deck whose matrix fits staging.memory_limit runs in memory (the matrix is
    stored as /input), generated or read from a file; only a file that does not fit streams."""
    seed = rng.randrange(2 ** 40)
    # At most 250 x 250 f64 and its transpose: 1 MiB, far within 1GiB; far above 16KiB, in
    # which chunks of one row or column still fit.
    rows, cols = rng.randint(150, 250), rng.randint(150, 250)
    base = ["run", PIPELINE, "--set", f"matrix.rows={rows}", "--set", f"matrix.cols={cols}",
            "--set", f"matrix.seed={seed}", "--set", "staging.memory_limit=1GiB"]
    p = r.run(base + ["--set", "output.file=gen.h5"])
    expect("out of core" not in p.stderr, "a generated matrix that fits streamed out of core")
    check(["pipeline", r.path("gen.h5"), "--rows", str(rows), "--cols", str(cols),
           "--ranks", str(ranks_of(r))])
    with h5py.File(r.path("gen.h5"), "r") as f:
        expect(np.array_equal(f["input"][...], check_outputs.generated(rows, cols, seed, "f64")),
               "/input differs from the documented generator")
    p = r.run(base + ["--set", "matrix.input=gen.h5:/input", "--set", "output.file=read.h5"])
    expect("out of core" not in p.stderr, "a matrix.input that fits streamed out of core")
    check(["pipeline", r.path("read.h5"), "--input", r.path("gen.h5") + ":/input",
           "--ranks", str(ranks_of(r))])
    with h5py.File(r.path("read.h5"), "r") as f:
        expect("input" in f, "a matrix.input that fits was not stored as /input")
    p = r.run(base[:-1] + ["staging.memory_limit=16KiB", "--set", "matrix.input=gen.h5:/input",
                           "--set", "output.file=ooc.h5"])
    expect("streaming it out of core" in p.stderr, "a matrix.input too big did not stream")
    with h5py.File(r.path("gen.h5"), "r") as g, h5py.File(r.path("ooc.h5"), "r") as f:
        expect(np.array_equal(f["transpose"][...], g["input"][...].T),
               "out of core: /transpose != numpy.transpose(/input)")


def provenance(r, rng):
    """A heat2d output records the same provenance as the commands' and pipeline's outputs:
    the same root attributes, and the same ranks, threads, backend and GPUs for the same
    backend."""
    r.run(["generate", "a.h5:/A", "--rows", "7", "--cols", "5"])
    backends = ["cpu"]
    if not re.search(r"^\s+GPUs\s+none", r.run(["info"]).stdout, re.M):
        backends.append("cuda")  # where there are GPUs, their names too
    for backend in backends:
        print(f"== backend {backend}")
        r.run(["transpose", "a.h5:/A", f"at-{backend}.h5:/AT", "--backend", backend])
        r.run(["run", "--backend", backend, "--set", "grid.nx=8", "--set", "grid.ny=8", "--set",
               "time.steps=2", "--set", f"output.file=heat-{backend}.h5"])
        r.run(["run", PIPELINE, "--backend", backend, "--set", "matrix.rows=6", "--set",
               "matrix.cols=4", "--set", f"output.file=pipe-{backend}.h5"])
        names = [f"{kind}-{backend}.h5" for kind in ("at", "heat", "pipe")]
        if backend == "cpu":
            names.append("a.h5")
        provenance_agrees(r, names)


def provenance_agrees(r, names):
    files = {}
    for name in names:
        with h5py.File(r.path(name), "r") as f:
            files[name] = {k: check_outputs.attr(f, k) for k in f.attrs}
    want = files[names[0]]
    for k in check_outputs.PROVENANCE + ["cuda_runtime", "hdf5_io", "hdf5_parallel"]:
        expect(k in want, f"{names[0]} lacks the provenance attribute '{k}'")
    for name, got in files.items():
        missing = sorted(set(want) - set(got))
        expect(not missing, f"{name} lacks the provenance attributes {missing}")
        for k in ("ranks", "threads", "backend", "gpus", "cuda_runtime", "software",
                  "version", "git_hash", "mpi_library", "hdf5_version"):
            expect(str(got[k]) == str(want[k]),
                   f"{name}: {k} = {got[k]!r}, the transpose's is {want[k]!r}")


def check_scenario(r, rng):
    p = r.run(["check", PIPELINE])
    eff = p.stdout
    for key in ("[job]", 'kind = "pipeline"', "[matrix]", "rows = 1000", "[transpose]",
                "[reduce]", "[output]", 'file = "tessera-pipeline.h5"', "deflate = 0"):
        expect(key in eff, f"effective deck lacks '{key}':\n{eff}")
    with open(r.path("eff.toml"), "w") as fh:
        fh.write(eff)
    p2 = r.run(["check", "eff.toml"])
    expect(p2.stdout.splitlines()[1:] == eff.splitlines()[1:],
           "the effective deck does not parse back to itself")
    n = rng.randint(1, 10 ** 6)
    p3 = r.run(["check", "eff.toml", "--set", f"matrix.cols={n}", "--set", "reduce.ops=min,max"])
    expect(f"cols = {n}" in p3.stdout and 'ops = ["min", "max"]' in p3.stdout,
           f"--set not applied:\n{p3.stdout}")
    # Every exchange the command line takes, decks take too (`shared` among them).
    for deck_args in ([], [PIPELINE]):
        p4 = r.run(["check", *deck_args, "--set", "transpose.exchange=shared"])
        expect('exchange = "shared"' in p4.stdout, f"transpose.exchange=shared:\n{p4.stdout}")
    expect(not os.path.exists(r.path("tessera-pipeline.h5")), "check wrote an output file")


def info(r, rng):
    p = r.run(["info"])
    for pat in (r"tessera \d+\.\d+\.\d+ \(git ", r"MPI\s+\S+", r"MPI_THREAD_\w+ provided",
                rf"ranks\s+{ranks_of(r)}\b", r"OpenMP\s+\d+ thread", r"HDF5\s+1\.\d+",
                r"GPUs\s+", r"parallel HDF5: (yes|no)"):
        expect(re.search(pat, p.stdout), f"info output lacks /{pat}/:\n{p.stdout}")
    expect(len(re.findall(r"^tessera \d", p.stdout, re.M)) == 1,
           "info printed by more than one rank")


def selftest(r, rng):
    seed = rng.randrange(2 ** 40)
    p = r.run(["selftest", "--seed", str(seed)])
    expect("selftest: all cases passed" in p.stdout, "selftest did not pass")
    expect(re.search(r"^cpu\s+transpose\s+c128\s+\d+\s+0\s", p.stdout, re.M), "no c128 row")
    expect(re.search(r"^cpu\s+reduce\s+f32\s+\d+\s+0\s", p.stdout, re.M), "no reduce row")


def unwritten_chunks(r, rng):
    """Chunked datasets of which h5py wrote only some chunks (as netCDF4 and h5py leave them:
    the rest read as the fill value), transposed and reduced in memory and out of core at every
    rank count; --json must not repeat a key."""
    import json

    def unique_keys(pairs):
        keys = [k for k, _ in pairs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        expect(not twice, f"--json repeats the keys {twice}")
        return dict(pairs)

    rows, cols = 301, 257
    seed = rng.randrange(2 ** 62)
    print(f"== seed {seed}")
    data = np.random.default_rng(seed).standard_normal((rows, cols))
    r0, r1 = sorted(rng.sample(range(1, rows), 2))
    c0, c1 = sorted(rng.sample(range(1, cols), 2))
    expected = {}
    with h5py.File(r.path("part.h5"), "w") as f:
        # Rows < 200 written; the chunks of rows 200.. never were.
        a = f.create_dataset("A", (rows, cols), "f8", chunks=(32, 32), fillvalue=-999.0)
        a[:200] = data[:200]
        expected["A"] = np.where(np.arange(rows)[:, None] < 200, data, -999.0)
        # Compressed, as netCDF4 writes its variables, with one random block written.
        z = f.create_dataset("Z", (rows, cols), "f8", chunks=(24, 40), fillvalue=-5.0,
                             compression="gzip")
        z[r0:r1, c0:c1] = data[r0:r1, c0:c1]
        e = np.full((rows, cols), -5.0)
        e[r0:r1, c0:c1] = data[r0:r1, c0:c1]
        expected["Z"] = e
    for name, want in expected.items():
        for extra in ([], ["--memory-limit", "64KiB"]):
            label = f"{name} {' '.join(extra) or 'in memory'}"
            out = r.path("out.h5")
            if os.path.exists(out):
                os.remove(out)
            p = r.run(["transpose", f"part.h5:/{name}", "out.h5:/T"] + extra)
            expect(not extra or "out of core" in p.stderr, f"{label}: did not stream")
            with h5py.File(out, "r") as f:
                expect(np.array_equal(f["T"][...], want.T), f"{label}: transpose != numpy")
            p = r.run(["reduce", f"part.h5:/{name}", "--op", "sum,min,max", "--axis", "cols",
                       "--json"] + extra)
            got = json.loads(p.stdout, object_pairs_hook=unique_keys)
            res = got["results"]
            expect(np.array_equal(res["min"], want.min(axis=0)), f"{label}: column min")
            expect(np.array_equal(res["max"], want.max(axis=0)), f"{label}: column max")
            expect(np.allclose(res["sum"], want.sum(axis=0), rtol=1e-12, atol=1e-9),
                   f"{label}: column sums")


# --- bad input -------------------------------------------------------------------------------

def make_h5(r):
    """Input files for the bad-input cases, written with h5py."""
    with h5py.File(r.path("in.h5"), "w") as f:
        f["A"] = np.arange(12.0).reshape(3, 4)
        f["v"] = np.arange(5.0)                       # 1-D
        f["cube"] = np.zeros((2, 3, 4))               # 3-D
        f["ints"] = np.arange(12, dtype=np.int32).reshape(3, 4)
        f["text"] = np.array([[b"ab", b"cd"]])
        f["empty"] = np.zeros((0, 5))
        f["C"] = np.ones((3, 4), dtype=np.complex128)


def deck(r, text):
    with open(r.path("bad.toml"), "w") as fh:
        fh.write(text)
    return "bad.toml"


BAD = {
    # name: (setup(r) -> argv, regex on stderr[, regex stderr must not match])
    "bench_chunk_without_host_staging": (
        lambda r: ["bench", "transpose", "--backend", "cpu", "--chunk-size", "16MiB"],
        r"bench: --chunk-size takes a positive size and applies to the host-staged transpose only"),
    "bench_bad_shape": (lambda r: ["bench", "transpose", "--shapes", "64x64,16x"],
                        r"bench: --shapes takes ROWSxCOLS entries with positive sizes, got '16x'"),
    "bench_reduce_complex_in_list": (lambda r: ["bench", "reduce", "--dtype", "f32,c64"],
                                     r"bench reduce: --dtype must be f32 or f64, got c64"),
    "missing_deck": (lambda r: ["run", "no-such-deck.toml"],
                     r"deck file 'no-such-deck\.toml' not found"),
    "malformed_toml": (lambda r: ["run", deck(r, '[output]\nfile = "out.h5"\n[matrix\nrows = 3\n')],
                       r"bad\.toml:3:\d+: malformed TOML"),
    "unknown_key": (lambda r: ["run", deck(r, '[output]\nfile = "out.h5"\n[matrix]\nrowz = 3\n')],
                    r"bad\.toml:4: matrix\.rowz: unknown key"),
    "unknown_table": (lambda r: ["check", deck(r, '[matrix]\nrows = 3\n[mesh]\nx = 1\n')],
                      r"bad\.toml:3: mesh: unknown table \[mesh\]"),
    "wrong_type": (lambda r: ["run", deck(r, '[output]\nfile = "out.h5"\n[matrix]\nrows = "many"\n')],
                   r"bad\.toml:4: matrix\.rows: expected an integer, got a string"),
    "wrong_type_set": (lambda r: ["run", PIPELINE, "--set", "output.file=out.h5",
                                  "--set", "transpose.enabled=3"],
                       r"--set: transpose\.enabled: expected a boolean"),
    "bad_choice": (lambda r: ["run", PIPELINE, "--set", "output.file=out.h5", "--set",
                            "reduce.axis=diag"],
                   r"--set: reduce\.axis: 'diag' is not one of all, rows, cols"),
    "heat2d_bad_line_solve": (lambda r: ["run", "--set", "solver.line_solve=thomas"],
                              r"--set: solver\.line_solve: 'thomas' is not one of transpose, "
                              r"distributed"),
    "unknown_kind": (lambda r: ["run", deck(r, '[job]\nkind = "nothing"\n')],
                     r"bad\.toml:2: job\.kind: unknown job kind 'nothing'"),
    "deck_not_tessera": (lambda r: (make_h5(r), ["deck", "in.h5"])[1],
                         r"'in\.h5' has no deck attribute: it was not written by tessera"),
    "deck_no_deck": (lambda r: (make_h5(r), subprocess.run(
        Runner(r.tessera, 0, r.mpirun, r.dir).argv(["transpose", "in.h5:/A", "t.h5:/T"]),
        cwd=r.dir, capture_output=True, check=True), ["deck", "t.h5"])[2],
                     r"'t\.h5' was written by a command that takes no deck \(`.*transpose"),
    "deck_missing_file": (lambda r: ["deck", "no-such.h5"], r"cannot open 'no-such\.h5'"),
    "missing_input_file": (lambda r: ["transpose", "no-such.h5:/A", "out.h5:/AT"],
                           r"no-such\.h5"),
    "missing_input_deck": (lambda r: ["run", PIPELINE, "--set", 'matrix.input=no-such.h5:/A',
                                      "--set", "output.file=out.h5"], r"no-such\.h5"),
    "missing_dataset": (lambda r: (make_h5(r), ["transpose", "in.h5:/B", "out.h5:/BT"])[1],
                        r"/B\b"),
    "wrong_rank_1d": (lambda r: (make_h5(r), ["transpose", "in.h5:/v", "out.h5:/vt"])[1],
                      r"/v\b.*(2-D|1-D|dimension|rank)"),
    "wrong_rank_3d": (lambda r: (make_h5(r), ["reduce", "in.h5:/cube"])[1],
                      r"/cube\b.*(2-D|3-D|dimension|rank)"),
    "unsupported_type": (lambda r: (make_h5(r), ["transpose", "in.h5:/ints", "out.h5:/o"])[1],
                         r"/ints\b.*(type|integer|int)"),
    "unsupported_string": (lambda r: (make_h5(r), ["reduce", "in.h5:/text", "--json"])[1],
                           r"/text\b.*(type|string)"),
    "complex_reduce": (lambda r: (make_h5(r), ["reduce", "in.h5:/C"])[1],
                       r"f32 or f64.*c128"),
    "empty_dataset": (lambda r: (make_h5(r), ["transpose", "in.h5:/empty", "out.h5:/E"])[1],
                      r"in\.h5:/empty is empty \(0x5\)"),
    "unwritable_dir": (lambda r: ["generate", "no-such-dir/out.h5:/A", "--rows", "3", "--cols",
                                  "4"], r"no-such-dir/out\.h5"),
    "output_parent_is_file": (lambda r: (open(r.path("plainfile"), "w").close(),
                                         ["run", PIPELINE, "--set",
                                          "output.file=plainfile/out.h5"])[1],
                              r"plainfile/out\.h5"),
    "zero_rows": (lambda r: ["generate", "out.h5:/A", "--rows", "0", "--cols", "5"],
                  r"zero-size matrix: --rows 0 --cols 5"),
    "zero_cols_deck": (lambda r: ["run", PIPELINE, "--set", "matrix.cols=0", "--set",
                                     "output.file=out.h5"],
                       r"--set: matrix\.cols: must be at least 1, got 0"),
    "same_file": (lambda r: (make_h5(r), ["transpose", "in.h5:/A", "./in.h5:/AT"])[1],
                  r"also the input file"),
    "memory_limit": (lambda r: (make_h5(r), ["transpose", "in.h5:/A", "out.h5:/AT",
                                             "--memory-limit", "64B"])[1],
                     r"memory limit of 64 B per rank is too small to transpose .* chunks of "
                     r"one (row|column) already need"),
    "bad_size": (lambda r: (make_h5(r), ["transpose", "in.h5:/A", "out.h5:/AT",
                                         "--memory-limit", "lots"])[1],
                 r"--memory-limit: 'lots' is not a size"),
    "bad_ref": (lambda r: ["generate", "out.h5", "--rows", "3", "--cols", "4"],
                r"FILE\.h5:/dataset"),
    "bad_op": (lambda r: (make_h5(r), ["reduce", "in.h5:/A", "--op", "sum,median"])[1],
               r"median"),
    # Decks: `check` refuses what `run` refuses, every problem at once, each naming its key.
    "deck_empty": (lambda r: ["run", deck(r, "")], r"bad\.toml: the deck is empty"),
    "deck_truncated": (lambda r: ["run", deck(r, open(HEAT2D_DECK).read().split("[job]")[0])],
                       r"bad\.toml: the deck is empty"),
    "deck_deep_header": (lambda r: ["check", deck(r, '[job]\nkind = "heat2d"\n[' +
                                                  ".".join(["a"] * 40000) + "]\n")],
                         r"bad\.toml:3: keys, tables and arrays nest more than 64 levels"),
    "heat2d_many_check": (
        lambda r: ["check"] + [a for kv in ("time.dt=0", "grid.nx=0", "time.steps=-5",
                                            "physics.alpha=nan", "grid.lx=-1",
                                            "boundary.value=inf", "output.checkpoint_every=-1",
                                            "output.snapshot_queue=0", "physics.alpah=2")
                               for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"9 problems:", r"time\.dt: must be greater than 0, got 0",
            r"grid\.nx: must be at least 1", r"time\.steps: must be at least 0",
            r"physics\.alpha: must be a finite number, got nan", r"grid\.lx: must be greater",
            r"boundary\.value: must be a finite number, got inf", r"output\.checkpoint_every:",
            r"output\.snapshot_queue: must be at least 1",
            r"physics\.alpah: unknown key; did you mean physics\.alpha\?"))),
    "heat2d_many_run": (
        lambda r: ["run"] + [a for kv in ("time.dt=-1", "physics.alpha=0", "grid.lx=1e-300",
                                          "grid.ny=0", "boundary.value=inf",
                                          "output.file=out.h5")
                             for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"5 problems:", r"time\.dt: must be greater than 0, got -1",
            r"physics\.alpha: must be greater than 0, got 0",
            r"grid\.lx: 1e-300 over grid\.nx = 256 unknowns .* underflows",
            r"grid\.ny: must be at least 1", r"boundary\.value: must be a finite"))),
    "pipeline_many_check": (
        lambda r: ["check", PIPELINE] + [a for kv in ("reduce.ops=[]", "staging.memory_limit=lots",
                                                      "staging.chunk_shape=diag", "matrix.rowz=3")
                                         for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"4 problems:", r"reduce\.ops: is empty", r"staging\.memory_limit: 'lots' is not",
            r"staging\.chunk_shape: 'diag' is not one of rows, columns",
            r"matrix\.rowz: unknown key; did you mean matrix\.rows\?"))),
    "pipeline_many_run": (
        lambda r: ["run", PIPELINE] + [a for kv in ('reduce.ops=["sum","sum"]',
                                                    "staging.memory_limit=lots",
                                                    "staging.chunk_shape=diag",
                                                    "output.file=out.h5")
                                       for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"3 problems:", r"reduce\.ops: lists 'sum' twice",
            r"staging\.memory_limit: 'lots' is not", r"staging\.chunk_shape: 'diag'"))),
    "heat2d_nan_initial": (lambda r: ["run", "--set", f"initial.kind={nan_field(r)}:/u",
                                      "--set", "grid.nx=4", "--set", "grid.ny=3",
                                      "--set", "output.file=out.h5"],
                           r"numerical error: heat2d: the initial field \(step 0, initial\.kind = "
                           r"nan\.h5:/u\) is not finite"),
    "pipeline_generated_too_big": (lambda r: ["run", PIPELINE, "--set", "output.file=out.h5",
                                              "--set", "staging.memory_limit=1KiB"],
                                   r"resource error: the generated 1000x999 f64 matrix needs "
                                   r".* per rank, more than staging\.memory_limit 1\.00 KiB; "
                                   r"only a matrix read from a file streams out of core"),
    # Who owns an output: devices, FIFOs and links to them are refused, names too long for the
    # file system fail before MPI-IO sees them, a second writer fails at once (the lock held
    # here as another job would hold it), a checkpoint may not be the output.
    "output_dev_null": (lambda r: ["generate", "/dev/null:/A", "--rows", "3", "--cols", "4"],
                        r"'/dev/null' is a character device, not a regular file"),
    "output_fifo": (lambda r: (os.mkfifo(r.path("pipe.h5")),
                               ["generate", "pipe.h5:/A", "--rows", "3", "--cols", "4"])[1],
                    r"'pipe\.h5' is a FIFO"),
    "output_link_to_device": (lambda r: (os.symlink("/dev/null", r.path("null.h5")),
                                         ["run", PIPELINE, "--set", "output.file=null.h5"])[1],
                              r"'/dev/null' \(where the link 'null\.h5' points\) is a "
                              r"character device"),
    "output_name_too_long": (lambda r: ["generate", "n" * 250 + ".h5:/A", "--rows", "3",
                                        "--cols", "4"],
                             r"its file name has 253 characters; at most 240 fit"),
    # A heat2d output's sidecar NAME.xmf is written at the end of the run; a name it cannot
    # take must fail before the run (no step after the initial state reported), not after it.
    "sidecar_is_directory": (lambda r: (os.mkdir(r.path("heat.h5.xmf")),
                                        ["run", "--set", "output.file=heat.h5", "--set",
                                         "output.diagnostics_every=1"])[1],
                             r"'heat\.h5\.xmf' is a directory, not a regular file",
                             r"step [1-9]\d*/"),
    "output_path_too_long": (lambda r: ["generate", "d" * 5000 + "/out.h5:/A", "--rows", "3",
                                        "--cols", "4"],
                             r"the directory name 'd+\.\.\.' has 5000 characters"),
    "output_written_elsewhere": (lambda r: (
        (fd := os.open(r.path("out.h5.lock"), os.O_RDWR | os.O_CREAT)),
        __import__("fcntl").flock(fd, __import__("fcntl").LOCK_EX),
        os.write(fd, b"4242 elsewhere\n"),
        ["generate", "out.h5:/A", "--rows", "3", "--cols", "4"])[3],
        r"another job \(process 4242 on host elsewhere\) is writing it"),
    "checkpoint_is_output": (lambda r: ["check", "--set", "output.file=run.h5", "--set",
                                        "output.checkpoint_file=./run.h5"],
                             r"--set: output\.checkpoint_file: the checkpoint '\./run\.h5' and "
                             r"the output 'run\.h5' are the same file"),
    "checkpoint_is_output_run": (lambda r: ["run", "--set", "output.file=run.h5", "--set",
                                            "output.checkpoint_file=run.h5", "--set",
                                            "output.checkpoint_every=1", "--set",
                                            "time.steps=2"],
                                 r"output\.checkpoint_file: the checkpoint 'run\.h5' and the "
                                 r"output 'run\.h5' are the same file"),
}
HEAT2D_DECK = os.path.join(os.path.dirname(PIPELINE), "heat2d.toml")


def nan_field(r):
    """A 3 x 4 initial field with one NaN."""
    u = np.ones((3, 4))
    u[1, 2] = np.nan
    with h5py.File(r.path("nan.h5"), "w") as f:
        f["u"] = u
    return "nan.h5"


def bad(r, rng, case):
    # (setup, regex stderr must match[, regex it must not: work that should not have begun])
    argv_of, pattern, *never = BAD[case]
    argv = argv_of(r)
    before = set(os.listdir(r.dir))
    p = r.run(argv, expect_ok=False)
    after = set(os.listdir(r.dir))
    expect(p.returncode != 0, f"exit status 0 for bad input '{case}'")
    expect(re.search(pattern, p.stderr),
           f"stderr does not match /{pattern}/:\n{p.stderr}")
    for unwanted in never:
        expect(not re.search(unwanted, p.stderr),
               f"stderr matches /{unwanted}/: the work began before the input was refused:\n"
               f"{p.stderr}")
    lines = [l for l in p.stderr.splitlines() if l.startswith("tessera: ")]
    expect(len(lines) == 1, f"expected one 'tessera: <kind>: <message>' line, got {lines}")
    expect("MPI_ABORT" not in p.stderr,
           "the job was aborted instead of failing collectively:\n" + p.stderr)
    new = sorted(after - before)
    expect(not new, f"files left behind: {new}")


SCENARIOS = {"end_to_end": end_to_end, "transpose_1000": transpose_1000,
             "run_default": run_default, "run_deck": run_deck, "check": check_scenario,
             "info": info, "selftest": selftest, "unwritten_chunks": unwritten_chunks,
             "pipeline_memory_limit": pipeline_memory_limit, "provenance": provenance}


def stop_early(r, rng):
    """A SIGTERM that reaches tessera before it has set anything up (here it is pending from the
    start: blocked when tessera starts) ends a heat2d run cleanly before its first step, with a
    checkpoint the run continues from; a pipeline job ends at it. Without a launcher only."""
    expect(r.np == 0, "stop_early runs tessera without mpirun")

    def run_signalled(args):
        cmd = r.argv(args)
        print("$ " + " ".join(cmd) + "   (with SIGTERM pending)", flush=True)
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        try:
            p = subprocess.Popen(cmd, cwd=r.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
            os.kill(p.pid, signal.SIGTERM)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        out, err = p.communicate(timeout=TIMEOUT)
        sys.stdout.write(out + err)
        return p.returncode, out + err

    heat = ["run", "--set", "output.file=early.h5", "--set", "time.steps=20", "--set",
            "grid.nx=32", "--set", "grid.ny=32"]
    rc, text = run_signalled(heat)
    expect(rc == 0, f"exit status {rc} for a run stopped before its first step")
    expect("stopped by SIGTERM before the first step, at step 0 of 20" in text,
           "no message about the stop before the first step")
    with h5py.File(r.path("early.ckpt.h5"), "r") as f:
        expect(int(f.attrs["step"]) == 0, f"checkpoint at step {f.attrs['step']}, expected 0")
    with h5py.File(r.path("early.h5"), "r") as f:
        expect(int(f.attrs["finished"]) == 0, "the stopped run's output says finished")
    r.run(heat + ["--set", "restart.file=early.ckpt.h5"])
    with h5py.File(r.path("early.h5"), "r") as f:
        expect(int(f.attrs["finished"]) == 1 and f["diagnostics/step"][-1] == 20,
               "the continued run did not finish at step 20")
    rc, _ = run_signalled(["run", PIPELINE, "--set", "output.file=pipe.h5"])
    expect(rc == -signal.SIGTERM, f"a pipeline job with SIGTERM pending exited with {rc}")
    expect(not [n for n in os.listdir(r.dir) if n.startswith("pipe.h5")],
           "the pipeline job killed by SIGTERM left its output")


SCENARIOS["stop_early"] = stop_early


def heat2d_small(r, rng, name, extra=()):
    """A heat2d run of a few steps on a random small grid; returns (nx, ny)."""
    nx, ny = rng.randint(max(ranks_of(r), 3), 40), rng.randint(max(ranks_of(r), 3), 40)
    print(f"== heat2d {nx} x {ny}")
    r.run(["run", "--set", f"output.file={name}", "--set", f"grid.nx={nx}", "--set",
           f"grid.ny={ny}", "--set", "time.steps=6", "--set", "output.snapshot_every=3",
           "--set", "output.diagnostics_every=3", *extra])
    return nx, ny


@contextlib.contextmanager
def virtual_display(env):
    """Debian's ParaView renders through X: where there is no display, a private Xvfb. It picks
    a free display number itself and reports it once it accepts clients (-displayfd), so two
    started at once cannot race for one number as `xvfb-run -a` does."""
    xvfb = shutil.which("Xvfb")
    if env.get("DISPLAY") or not xvfb:
        yield
        return
    rfd, wfd = os.pipe()
    # -noreset: by default the server resets when its last client leaves, and pvbatch may
    # connect more than once (a probe, then its window); a connection during a reset can be
    # refused, the likelier the more loaded the machine.
    server = subprocess.Popen([xvfb, "-displayfd", str(wfd), "-nolisten", "tcp", "-noreset",
                               "-screen", "0", "640x480x24"], pass_fds=(wfd,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(wfd)
    try:
        with os.fdopen(rfd) as fh:
            number = fh.readline().strip()  # empty if Xvfb exits before it is ready
        expect(number.isdigit(), f"Xvfb did not start (exit status {server.poll()})")
        env["DISPLAY"] = ":" + number
        yield
    finally:
        server.terminate()
        server.wait(timeout=TIMEOUT)


def paraview(r, rng):
    """A heat2d output opened through its XDMF sidecar by ParaView (pvbatch, offscreen): the
    time steps, the grid and the field's range at the first and the last snapshot are the
    file's (h5py); the last snapshot renders to a PNG. Registered where pvbatch is found."""
    import json
    pvbatch = shutil.which("pvbatch")
    expect(pvbatch, "pvbatch is not on PATH")
    heat2d_small(r, rng, "heat.h5")
    xmf = r.path("heat.h5.xmf")
    expect(os.path.isfile(xmf), "no XDMF sidecar heat.h5.xmf next to heat.h5")
    expect(not [n for n in os.listdir(r.dir) if n.endswith(".partial")],
           f"temporaries left behind: {os.listdir(r.dir)}")
    with open(xmf) as fh:
        expect('Format="HDF">heat.h5:/fields/u<' in fh.read(),
               "the sidecar does not name heat.h5 by a relative path")
    with h5py.File(r.path("heat.h5"), "r") as f:
        u, t = f["fields/u"][...], f["fields/time"][...]
        x, y = f["grid/x"][...], f["grid/y"][...]
    png = r.path("heat.png")
    cmd = [pvbatch, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "paraview_view.py"), xmf, "u", png]
    cmd.insert(1, "--force-offscreen-rendering")
    # On a loaded machine pvbatch now and then cannot connect to a freshly started Xvfb ("bad X
    # server connection"): that is the virtual display, not the file, so it gets a new one.
    for attempt in range(3):
        env = dict(os.environ)
        with virtual_display(env):
            print(f"$ DISPLAY={env.get('DISPLAY', '')} " + " ".join(cmd), flush=True)
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                               cwd=r.dir, env=env)
        sys.stdout.write(p.stdout[-4000:] + p.stderr[-4000:])
        if "bad X server connection" not in p.stdout + p.stderr:
            break
        print(f"(attempt {attempt + 1}: no connection to the X display)", flush=True)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    expect(p.returncode == 0 and lines, f"pvbatch failed (exit status {p.returncode})")
    res = json.loads(lines[-1][len("RESULT "):])
    expect(np.allclose(res["times"], t, rtol=0, atol=1e-15), f"times {res['times']} != {t}")
    for label, k in (("first", 0), ("last", -1)):
        got = res[label]
        expect(got["type"] == "vtkRectilinearGrid", f"{label}: a {got['type']}, not rectilinear")
        expect(got["points"] == x.size * y.size, f"{label}: {got['points']} points")
        expect(np.allclose(got["bounds"][:4], [x[0], x[-1], y[0], y[-1]], rtol=0, atol=1e-12),
               f"{label}: bounds {got['bounds']}")
        want = [u[k].min(), u[k].max()]
        expect(got["range"] is not None and np.allclose(got["range"], want, rtol=1e-12,
                                                        atol=0),
               f"{label} snapshot: ParaView's range of u is {got['range']}, h5py's {want}")
    expect(not np.allclose(u[0].max(), u[-1].max()), "the snapshots do not differ")
    with open(png, "rb") as fh:
        head = fh.read(24)
    expect(head[:8] == b"\x89PNG\r\n\x1a\n", "the rendering is not a PNG")
    expect(int.from_bytes(head[16:20], "big") == 320, "the PNG is not 320 pixels wide")


SCENARIOS["paraview"] = paraview


def transpose_metadata(r, rng):
    """A transpose keeps the input dataset's attributes, fill value and dimension scales (swapped);
    --like-input keeps its chunk shape (transposed), gzip level and shuffle; --shuffle adds the
    shuffle filter. In memory and out of core."""
    rows, cols = rng.randint(3, 60), rng.randint(3, 60)
    print(f"== {rows} x {cols}")
    a = np.random.default_rng(rng.randrange(2 ** 32)).standard_normal((rows, cols))
    with h5py.File(r.path("in.h5"), "w") as f:
        f["coords/lat"] = np.linspace(-80, 80, rows)
        f["coords/lon"] = np.arange(cols, dtype=np.int32)
        d = f.create_dataset("A", data=a, chunks=(min(2, rows), min(5, cols)), compression="gzip",
                             compression_opts=3, shuffle=True, fillvalue=-999.0)
        f["coords/lat"].make_scale("lat")
        f["coords/lon"].make_scale("lon")
        d.dims[0].attach_scale(f["coords/lat"])
        d.dims[1].attach_scale(f["coords/lon"])
        d.attrs["units"] = "K"
        d.attrs["_FillValue"] = -999.0
        d.attrs["valid_range"] = np.array([-10.0, 10.0])
        d.attrs["flags"] = np.array([1, 2, 3], dtype=np.int16)
        d.attrs["names"] = np.array(["a", "bc"], dtype=h5py.string_dtype())
    for mode in ([], ["--memory-limit", "64KiB", "--out-of-core"]):
        r.run(["transpose", "in.h5:/A", "like.h5:/AT", "--like-input"] + mode)
        r.run(["transpose", "in.h5:/A", "plain.h5:/AT", "--deflate", "2", "--shuffle"] + mode)
        with h5py.File(r.path("like.h5"), "r") as f, h5py.File(r.path("plain.h5"), "r") as g:
            for h in (f, g):
                t = h["AT"]
                expect(np.array_equal(t[...], a.T), f"{mode}: the transpose is wrong")
                expect(t.attrs["units"] == "K" and t.attrs["_FillValue"] == -999.0,
                       f"{mode}: attributes lost: {dict(t.attrs)}")
                expect(np.array_equal(t.attrs["valid_range"], [-10.0, 10.0]) and
                       t.attrs["flags"].dtype == np.int16 and
                       list(t.attrs["flags"]) == [1, 2, 3], f"{mode}: array attributes")
                expect([x.decode() if isinstance(x, bytes) else x for x in t.attrs["names"]]
                       == ["a", "bc"], f"{mode}: string array attribute {t.attrs['names']}")
                expect(t.fillvalue == -999.0, f"{mode}: fill value {t.fillvalue}")
                expect([d.label for d in t.dims] == ["lon", "lat"],
                       f"{mode}: dimension labels {[d.label for d in t.dims]}")
                expect(np.array_equal(t.dims[0][0][...], np.arange(cols)) and
                       np.array_equal(t.dims[1][0][...], np.linspace(-80, 80, rows)),
                       f"{mode}: the dimension scales are not the input's, swapped")
                expect(t.attrs["transpose_of"] == "in.h5:/A", "transpose_of")
            lt, pt = f["AT"], g["AT"]
            expect(lt.chunks == (min(5, cols), min(2, rows)),
                   f"{mode}: --like-input chunks {lt.chunks}")
            expect(lt.compression == "gzip" and lt.compression_opts == 3 and lt.shuffle,
                   f"{mode}: --like-input filters {lt.compression} {lt.compression_opts}")
            expect(pt.compression == "gzip" and pt.compression_opts == 2 and pt.shuffle,
                   f"{mode}: --deflate 2 --shuffle gave {pt.compression} {pt.shuffle}")


SCENARIOS["transpose_metadata"] = transpose_metadata


def quiet_timing(r, rng):
    """-q leaves stdout and stderr empty (no log lines, warnings, progress, timing table or
    heat2d summary) for a transpose and a heat2d run; --timing=off drops the table, --timing=json
    prints it as one JSON line."""
    import json
    a = np.random.default_rng(rng.randrange(2 ** 32)).standard_normal((rng.randint(2, 50), 7))
    with h5py.File(r.path("A.h5"), "w") as f:
        f["A"] = a
    for args in (["-q", "transpose", "A.h5:/A", "q.h5:/AT"],
                 ["-q", "run", "--set", "output.file=q-heat.h5", "--set", "time.steps=4",
                  "--set", "grid.nx=16", "--set", "grid.ny=12"]):
        p = r.run(args)
        expect(p.stdout == "" and p.stderr == "",
               f"-q printed something:\nstdout: {p.stdout!r}\nstderr: {p.stderr!r}")
    with h5py.File(r.path("q.h5"), "r") as f:
        expect(np.array_equal(f["AT"][...], a.T), "the quiet transpose is wrong")
    p = r.run(["--timing=off", "transpose", "A.h5:/A", "off.h5:/AT"])
    expect("Timing" not in p.stdout and "max time" not in p.stdout,
           f"--timing=off printed a table:\n{p.stdout}")
    for args in (["--timing=json", "transpose", "A.h5:/A", "json.h5:/AT"],
                 ["--timing=json", "run", "--set", "output.file=j-heat.h5", "--set",
                  "time.steps=4", "--set", "grid.nx=16", "--set", "grid.ny=12"]):
        p = r.run(args)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith('{"timing"')]
        expect(len(lines) == 1, f"--timing=json: {len(lines)} timing lines:\n{p.stdout}")
        t = json.loads(lines[0])["timing"]
        expect(t["ranks"] == ranks_of(r) and t["threads"] >= 1, f"--timing=json: {t}")
        phases = {ph["phase"]: ph for ph in t["phases"]}
        want = {"read", "write", "transpose"} if args[1] == "transpose" else set()
        expect(phases and want <= set(phases),
               f"--timing=json phases {sorted(phases)} lack {sorted(want)}")
        for ph in phases.values():
            expect(ph["calls"] >= 1 and ph["max_s"] >= ph["min_s"] >= 0, f"phase {ph}")


SCENARIOS["quiet_timing"] = quiet_timing


def oversubscribed(r, rng):
    """Ranks x OpenMP threads beyond a node's cores: one warning, from rank 0, naming the node;
    within the cores, none."""
    cores = os.cpu_count()
    p = r.run(["info"], env={"OMP_NUM_THREADS": str(cores + 1)})
    hits = [ln for ln in p.stderr.splitlines() if "oversubscribed" in ln]
    expect(len(hits) == 1, f"expected one oversubscription warning, got {hits}")
    expect(not hits[0].startswith("[rank"), f"the warning is not rank 0's: {hits[0]}")
    expect(f"with {(cores + 1) * ranks_of(r)} OpenMP threads in all on {cores} cores" in hits[0],
           f"the warning does not count ranks x threads: {hits[0]}")
    if ranks_of(r) <= cores:
        p = r.run(["info"], env={"OMP_NUM_THREADS": "1"})
        expect("oversubscribed" not in p.stderr, f"a warning within the cores:\n{p.stderr}")


SCENARIOS["oversubscribed"] = oversubscribed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--seed", type=int)
    ap.add_argument("scenario", choices=sorted(SCENARIOS) + ["bad", "list-bad"])
    ap.add_argument("case", nargs="?")
    args = ap.parse_args()
    if args.scenario == "list-bad":
        print(";".join(sorted(BAD)))
        return 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    print(f"cli_test: {args.scenario} {args.case or ''} at np={args.np}, seed {seed} "
          f"(rerun with --seed {seed})", flush=True)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix=f"tessera-cli-{args.scenario}-")
    r = Runner(os.path.abspath(args.tessera), args.np, args.mpirun, work)
    try:
        if args.scenario == "bad":
            bad(r, rng, args.case)
        else:
            SCENARIOS[args.scenario](r, rng)
    except Failure as e:
        print(f"FAILED ({args.scenario} {args.case or ''}, np={args.np}, seed {seed}, "
              f"files kept in {work}): {e}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("cli_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
