"""Command-line scenarios about running jobs: the commands end to end, decks and their --set
overrides, `tessera check`, the provenance outputs record, and a job stopped by SIGTERM."""
import os
import re
import signal
import subprocess
import sys

import h5py
import numpy as np

import check_outputs
from cli_common import PIPELINE, TIMEOUT, check, expect, ranks_of


def end_to_end(r, rng):
    for dtype in ("f64", "f32", "c128", "c64"):
        rows, cols = rng.randint(1, 70), rng.randint(1, 70)
        seed = rng.randrange(2 ** 62)
        print(f"== {dtype} {rows}x{cols} seed {seed}")
        r.run(["generate", "A.h5:/group/A", "--rows", str(rows), "--cols", str(cols),
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
    rc, text = run_signalled(["run", PIPELINE, "--set", "output.file=pipe.h5"])
    expect(rc == 128 + signal.SIGTERM, f"a pipeline job with SIGTERM pending exited with {rc}")
    expect("tessera: stopped by SIGTERM" in text, "the pipeline job did not say it was stopped")
    expect(not [n for n in os.listdir(r.dir) if n.startswith("pipe.h5")],
           "the pipeline job stopped by SIGTERM left its output")
