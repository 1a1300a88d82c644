"""Command-line scenarios about files that grow: `transpose --mode append` adding datasets to
an existing netCDF-4 file (which stays complete, and unchanged when a run fails), several
datasets in one call for transpose and reduce, and the metadata kept on the way (global
attributes, a coordinate's units and stored type, packing attributes)."""
import glob
import hashlib
import json

import h5py
import netCDF4
import numpy as np

from cli_common import expect


def write_obs(path, rng, rows, cols):
    """A netCDF-4 file as netCDF users write one: global attributes, an unlimited int32 time
    axis with units, a compressed f32 variable with _FillValue, a float variable packed with
    scale_factor/add_offset, and a variable in a group."""
    with netCDF4.Dataset(path, "w") as nc:
        nc.title = "synthetic observations"
        nc.history = "made by the test"
        nc.createDimension("time", None)
        nc.createDimension("station", cols)
        t = nc.createVariable("time", "i4", ("time",))
        t.units = "hours since 2026-01-01"
        t[:] = np.arange(rows, dtype=np.int32) * 3
        s = nc.createVariable("station", "f4", ("station",))
        s.units = "km"
        s[:] = np.linspace(0, 10, cols).astype(np.float32)
        v = nc.createVariable("temp", "f4", ("time", "station"), zlib=True, fill_value=-999.0)
        v.units = "K"
        v[:] = np.ma.masked_array(rng.normal(280, 5, (rows, cols)).astype(np.float32),
                                  mask=rng.random((rows, cols)) < 0.2)
        p = nc.createVariable("pres", "f4", ("time", "station"))
        p.scale_factor = np.float32(0.5)
        p.add_offset = np.float32(1000.0)
        p[:] = rng.uniform(900, 1100, (rows, cols))
        g = nc.createGroup("obs")
        w = g.createVariable("wind", "f8", ("time", "station"), chunksizes=(2, cols))
        w[:] = rng.uniform(0, 20, (rows, cols))
    with netCDF4.Dataset(path) as nc:
        return {"/temp": nc["temp"][:], "/pres": nc["pres"][:], "/obs/wind": nc["obs/wind"][:]}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def check_out(r, name, expected, what):
    """NAME holds each transpose of `expected` (output path -> masked input), readable by
    netCDF4 with named dimensions, the globals and the coordinates' units and types."""
    with netCDF4.Dataset(r.path(name)) as nc:
        expect(nc.title == "synthetic observations", f"{what}: global title lost")
        for path, m in expected.items():
            v = nc[path.lstrip("/")]
            expect(np.ma.allequal(v[:], m.T) and np.array_equal(np.ma.getmaskarray(v[:]),
                                                                np.ma.getmaskarray(m).T),
                   f"{what}: {path} is not the transpose")
            expect(v.dimensions == ("station", "time"), f"{what}: {path} dims {v.dimensions}")
        expect(nc["time"].dtype == np.int32 and nc["time"].units == "hours since 2026-01-01",
               f"{what}: time coordinate {nc['time'].dtype} {nc['time'].__dict__}")
        expect(nc["station"].dtype == np.float32 and nc["station"].units == "km",
               f"{what}: station coordinate {nc['station'].dtype}")
    with h5py.File(r.path(name), "r") as f:
        expect(f.attrs["complete"] == 1, f"{what}: not complete")
    expect(not glob.glob(r.path(name) + ".*"), f"{what}: left {glob.glob(r.path(name) + '.*')}")


def files_that_grow(r, rng):
    rows, cols = rng.randint(5, 60), rng.randint(3, 30)
    seed = rng.randrange(2 ** 32)
    print(f"== {rows} x {cols}, data seed {seed}")
    data = write_obs(r.path("obs.nc"), np.random.default_rng(seed), rows, cols)
    for mode in ([], ["--in-memory"]):
        tag = "in memory" if mode else "streamed"
        # Built up one variable at a time, as with ncks -A.
        r.run(["transpose", "obs.nc:/temp", "out.nc:/tempT"] + mode)
        r.run(["transpose", "obs.nc:/obs/wind", "out.nc:/windT", "--mode", "append"] + mode)
        r.run(["transpose", "obs.nc:/pres", "out.nc:/presT", "--mode", "a"] + mode)
        check_out(r, "out.nc", {"/tempT": data["/temp"], "/windT": data["/obs/wind"],
                                "/presT": data["/pres"]}, f"append, {tag}")
        with h5py.File(r.path("out.nc"), "r") as f, h5py.File(r.path("obs.nc"), "r") as g:
            # Packed data stays packed: the stored numbers, transposed, and the attributes.
            expect(np.array_equal(f["presT"][...], g["pres"][...].T) and
                   f["presT"].attrs["scale_factor"] == 0.5, f"{tag}: packing not kept")
        # history: one line per run, newest first, above the input's own.
        with netCDF4.Dataset(r.path("out.nc")) as nc:
            lines = nc.history.splitlines()
            expect(len(lines) == 4 and lines[-1] == "made by the test" and
                   "out.nc:/presT" in lines[0] and "out.nc:/windT" in lines[1] and
                   "out.nc:/tempT" in lines[2] and nc.title == "synthetic observations",
                   f"{tag}: history after three runs: {lines}")
        # A failing append (a dataset the file has) leaves the file exactly as it was.
        before = digest(r.path("out.nc"))
        p = r.run(["transpose", "obs.nc:/temp", "out.nc:/tempT", "--mode", "append"] + mode,
                  expect_ok=False)
        expect(p.returncode != 0 and "/tempT exists already" in p.stderr,
               f"{tag}: appending an existing dataset: {p.returncode} {p.stderr}")
        expect(digest(r.path("out.nc")) == before, f"{tag}: a failed append changed the file")
        expect(not glob.glob(r.path("out.nc") + ".*"), f"{tag}: a failed append left files")
        # Several datasets in one call, at their input paths; a file that did not exist.
        r.run(["transpose", "obs.nc:/temp,/obs/wind", "new.h5", "--mode", "append"] + mode)
        check_out(r, "new.h5", {"/temp": data["/temp"], "/obs/wind": data["/obs/wind"]},
                  f"several, {tag}")
        # --mode create (the default) replaces the file.
        r.run(["transpose", "obs.nc:/pres", "new.h5:/p"] + mode)
        with h5py.File(r.path("new.h5"), "r") as f:
            expect(sorted(f) == ["p", "station", "time"], f"{tag}: replaced file holds {list(f)}")
    # Several datasets reduced in one call: one JSON object per line, numbers as numpy.ma's.
    p = r.run(["reduce", "obs.nc:/temp,/obs/wind", "obs.nc:/pres", "--op", "sum,count", "--json"])
    lines = p.stdout.strip().splitlines()
    expect(len(lines) == 3, f"reduce of 3 datasets printed {len(lines)} lines")
    with h5py.File(r.path("obs.nc"), "r") as f:  # unpacked in double, as tessera documents
        pres = f["pres"][...].astype(np.float64) * 0.5 + 1000.0
    for line, path in zip(lines, ["/temp", "/obs/wind", "/pres"]):
        o = json.loads(line)
        m = np.ma.asarray(pres if path == "/pres" else data[path], dtype=np.float64)
        expect(o["dataset"] == path and np.isclose(o["results"]["sum"], m.sum(), rtol=1e-12) and
               o["results"]["count"] == m.count(), f"reduce {path}: {o['results']}")
