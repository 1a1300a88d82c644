"""Command-line scenarios about what outputs and the console show: dataset metadata and
unwritten chunks carried through, a heat2d output in ParaView, `info` and `selftest`, -q and
--timing, and the oversubscription warning."""
import contextlib
import os
import re
import shutil
import subprocess
import sys

import h5py
import numpy as np

from cli_common import TIMEOUT, expect, heat2d_small, ranks_of


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
    """A heat2d output opened through its XDMF sidecar by ParaView (pvbatch, offscreen), with
    every XDMF reader it offers (the default one for .xmf, the legacy XDMF Reader, the Xdmf3
    readers): the time steps, the grid and the field's range at the first and the last snapshot
    are the file's (h5py); the last snapshot renders to a PNG. Registered where pvbatch is
    found."""
    import json
    pvbatch = shutil.which("pvbatch")
    expect(pvbatch, "pvbatch is not on PATH")
    heat2d_small(r, rng, "heat.h5")
    xmf = r.path("heat.h5.xmf")
    expect(os.path.isfile(xmf), "no XDMF sidecar heat.h5.xmf next to heat.h5")
    expect(not [n for n in os.listdir(r.dir) if n.endswith(".partial")],
           f"temporaries left behind: {os.listdir(r.dir)}")
    with open(xmf) as fh:
        expect('Format="HDF">heat.h5:/xdmf/u/0<' in fh.read(),
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
    print(f"ParaView's default reader for the sidecar: {res['default_reader']}")
    for reader in ("default", "XDMFReader", "Xdmf3ReaderS", "Xdmf3ReaderT"):
        got_reader = res[reader]
        expect(np.allclose(got_reader["times"], t, rtol=0, atol=1e-15),
               f"{reader}: times {got_reader['times']} != {t}")
        for label, k in (("first", 0), ("last", -1)):
            got = got_reader[label]
            expect(got["type"] == "vtkRectilinearGrid",
                   f"{reader}, {label}: a {got['type']}, not rectilinear")
            expect(got["points"] == x.size * y.size, f"{reader}, {label}: {got['points']} points")
            expect(np.allclose(got["bounds"][:4], [x[0], x[-1], y[0], y[-1]], rtol=0, atol=1e-12),
                   f"{reader}, {label}: bounds {got['bounds']}")
            want = [u[k].min(), u[k].max()]
            expect(got["range"] is not None and np.allclose(got["range"], want, rtol=1e-12,
                                                            atol=0),
                   f"{reader}, {label} snapshot: ParaView's range of u is {got['range']}, "
                   f"h5py's {want}")
    expect(not np.allclose(u[0].max(), u[-1].max()), "the snapshots do not differ")
    with open(png, "rb") as fh:
        head = fh.read(24)
    expect(head[:8] == b"\x89PNG\r\n\x1a\n", "the rendering is not a PNG")
    expect(int.from_bytes(head[16:20], "big") == 320, "the PNG is not 320 pixels wide")


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
        # The transpose streams (read, compute and write chunks) by default.
        want = {"read", "write", "compute"} if args[1] == "transpose" else set()
        expect(phases and want <= set(phases),
               f"--timing=json phases {sorted(phases)} lack {sorted(want)}")
        for ph in phases.values():
            expect(ph["calls"] >= 1 and ph["max_s"] >= ph["min_s"] >= 0, f"phase {ph}")


def oversubscribed(r, rng):
    """Ranks x OpenMP threads beyond a node's cores: one warning, from rank 0, naming the node;
    within the cores, none."""
    cores = os.cpu_count()
    p = r.run(["info"], env={"OMP_NUM_THREADS": str(cores + 1)})
    hits = [ln for ln in p.stderr.splitlines() if "oversubscribed" in ln]
    expect(len(hits) == 1, f"expected one oversubscription warning, got {hits}")
    expect(not hits[0].startswith("[rank"), f"the warning is not rank 0's: {hits[0]}")
    if ranks_of(r) > cores:  # no thread count helps: the advice is fewer ranks
        expect(f"runs {ranks_of(r)} ranks on {cores} cores" in hits[0]
               and f"at most {cores} ranks per node" in hits[0],
               f"the warning does not say there are more ranks than cores: {hits[0]}")
    else:
        expect(f"with {(cores + 1) * ranks_of(r)} OpenMP threads in all on {cores} cores"
               in hits[0], f"the warning does not count ranks x threads: {hits[0]}")
    if ranks_of(r) <= cores:
        p = r.run(["info"], env={"OMP_NUM_THREADS": "1"})
        expect("oversubscribed" not in p.stderr, f"a warning within the cores:\n{p.stderr}")
