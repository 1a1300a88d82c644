"""Command-line scenarios about data as users' tools write it: missing values (_FillValue,
missing_value, NaN) and packed data (scale_factor, add_offset) in files written by h5py and
netCDF4 (unlimited dimensions, groups, chunked and compressed), reduced with `tessera reduce`
and checked against numpy.ma; the bits do not change with the rank count or with streaming."""
import json

import h5py
import netCDF4
import numpy as np

from cli_common import Runner, expect

OPS = ["sum", "min", "max", "mean", "norm1", "norm2", "norminf", "count"]
NP_AXIS = {"all": None, "rows": 1, "cols": 0}


def expected(m, op, axis):
    """What `tessera reduce --op OP --axis AXIS` must give for the masked array m, with the
    documented values for rows, columns or matrices without a valid element."""
    ax = NP_AXIS[axis]
    m = np.ma.asarray(m, dtype=np.float64)
    count = np.ma.count(m, axis=ax)
    if op == "count":
        return np.asarray(count, dtype=np.float64)
    if op == "sum":
        v = m.sum(axis=ax)
    elif op == "mean":
        v = m.mean(axis=ax)
    elif op == "min":
        v = m.min(axis=ax)
    elif op == "max":
        v = m.max(axis=ax)
    elif op == "norm1":
        v = np.abs(m).sum(axis=ax)
    elif op == "norm2":
        v = np.sqrt((m * m).sum(axis=ax))
    else:
        v = np.abs(m).max(axis=ax)
    empty = 0.0 if op in ("sum", "norm1", "norm2", "norminf") else np.nan
    return np.ma.filled(np.ma.asarray(v, dtype=np.float64), empty)


def reduce_json(r, spec, axis, extra=()):
    return reduce_many(r, [spec], axis, extra)[spec]


def reduce_many(r, specs, axis, extra=()):
    """One `tessera reduce` over several datasets (FILE:/a,/b FILE2:/c): {spec: {op: values}}."""
    p = r.run(["reduce", *specs, "--op", ",".join(OPS), "--axis", axis, "--json", *extra])
    out = {}
    for line in p.stdout.splitlines():
        obj = json.loads(line)
        res = obj["results"]
        out[(obj["file"], obj["dataset"])] = {
            op: np.array(res[op] if axis != "all" else [res[op]], dtype=np.float64)
            for op in OPS}  # null (NaN) reads back as nan
    got = {}
    for spec in specs:
        file, paths = spec.split(":", 1)
        for path in paths.split(","):
            key = (r.path(file) if (r.path(file), path) in out else file, path)
            expect(key in out, f"no result for {file}:{path} in {p.stdout}")
            got[f"{file}:{path}"] = out[key]
    return got


def compare(got, m, axis, what, rtol=1e-12):
    for op in OPS:
        want = np.atleast_1d(expected(m, op, axis))
        expect(got[op].shape == want.shape, f"{what} {op} {axis}: shape {got[op].shape}")
        expect(np.allclose(got[op], want, rtol=rtol, atol=1e-300, equal_nan=True),
               f"{what}: {op} along {axis} is {got[op]}, numpy.ma gives {want}")


def same_bits(a, b, what):
    for op in OPS:
        expect(a[op].tobytes() == b[op].tobytes(), f"{what}: {op} differs: {a[op]} vs {b[op]}")


def write_h5py(path, rng, rows, cols):
    """f64 with NaN and a _FillValue attribute, chunked and gzip-compressed, as h5py users write
    it; an f32 dataset with a missing_value list in a group."""
    a = rng.standard_normal((rows, cols))
    a[rng.random((rows, cols)) < 0.15] = -999.0
    a[rng.random((rows, cols)) < 0.1] = np.nan
    a[0, :] = -999.0  # a row without a valid value
    b = rng.standard_normal((rows, cols)).astype(np.float32)
    b[rng.random((rows, cols)) < 0.2] = 1e20
    b[rng.random((rows, cols)) < 0.1] = -1.0
    b[:, 1] = 1e20  # a column without a valid value
    with h5py.File(path, "w") as f:
        d = f.create_dataset("A", data=a, chunks=(min(4, rows), min(5, cols)),
                             compression="gzip", shuffle=True, fillvalue=-999.0)
        d.attrs["_FillValue"] = -999.0
        g = f.create_group("grp").create_dataset("B", data=b)
        g.attrs["missing_value"] = np.array([1e20, -1.0], dtype=np.float32)
    ma = np.ma.masked_invalid(np.ma.masked_equal(a, -999.0))
    mb = np.ma.masked_where((b == np.float32(1e20)) | (b == np.float32(-1.0)), b)
    return a, ma, mb


def write_netcdf(path, rng, rows, cols):
    """A netCDF4 file as netCDF users write one: an unlimited time dimension, a float32 variable
    with _FillValue (masked elements written as the fill), compressed; a packed int16 variable
    (scale_factor, add_offset, _FillValue, valid_range) in a group, filled by netCDF4's automatic
    packing; valid_min and valid_max on the first."""
    temp = np.ma.masked_array(rng.normal(280, 10, (rows, cols)).astype(np.float32),
                              mask=rng.random((rows, cols)) < 0.2)
    rain = np.ma.masked_array(rng.uniform(0, 50, (rows, cols)),
                              mask=rng.random((rows, cols)) < 0.25)
    rain.mask[:, 0] = True
    with netCDF4.Dataset(path, "w") as nc:
        nc.title = "synthetic observations"
        nc.createDimension("time", None)
        nc.createDimension("station", cols)
        t = nc.createVariable("time", "i4", ("time",))
        t.units = "hours since 2026-01-01"
        t[:] = np.arange(rows, dtype=np.int32)
        v = nc.createVariable("temp", "f4", ("time", "station"), zlib=True, fill_value=-999.0)
        v.units = "K"
        v.valid_min = np.float32(265.0)  # CF: elements outside are missing as well
        v.valid_max = np.float32(300.0)
        v[:] = temp
        g = nc.createGroup("obs")
        p = g.createVariable("rain", "i2", ("time", "station"), fill_value=np.int16(-32767))
        p.scale_factor = np.float64(0.002)
        p.add_offset = np.float64(25.0)
        p.valid_range = np.array([-10000, 10000], dtype=np.int16)  # of the stored values
        p[:] = rain
    with netCDF4.Dataset(path) as nc:  # what netCDF4 users see: masked, unpacked
        return nc["temp"][:], nc["obs"]["rain"][:]


def missing_values(r, rng):
    """Reductions skip _FillValue, missing_value, out-of-range and NaN elements and unpack packed
    data, as
    numpy.ma does with what netCDF4 reads; --keep-nan keeps IEEE NaN; the same bits in memory,
    streamed in small chunks and at another rank count."""
    seed = rng.randrange(2 ** 32)
    g = np.random.default_rng(seed)
    rows, cols = rng.randint(70, 140), rng.randint(3, 40)
    print(f"== {rows} x {cols}, data seed {seed}")
    a, ma, mb = write_h5py(r.path("h5py.h5"), g, rows, cols)
    temp, rain = write_netcdf(r.path("obs.nc"), g, rows, cols)
    other = Runner(r.tessera, 2 if r.np != 2 else 1, r.mpirun, r.dir)
    # All four datasets in one call per axis and path (several datasets per call, as users
    # pass them), each compared with numpy.ma.
    want = {"h5py.h5:/A": ma, "h5py.h5:/grp/B": mb, "obs.nc:/temp": temp, "obs.nc:/obs/rain": rain}
    specs = ["h5py.h5:/A,/grp/B", "obs.nc:/temp,/obs/rain"]
    for axis in ("all", "rows", "cols"):
        streamed = reduce_many(r, specs, axis, ["--chunk-size", "512"])
        in_memory = reduce_many(r, specs, axis, ["--in-memory"])
        for spec, m in want.items():
            compare(streamed[spec], m, axis, spec)
            same_bits(streamed[spec], in_memory[spec],
                      f"{spec} along {axis}, streamed vs in memory")
        # One input is enough for the rank count.
        same_bits(streamed["h5py.h5:/A"], reduce_json(other, "h5py.h5:/A", axis),
                  f"h5py.h5:/A along {axis}, {r.np} vs {other.np} ranks")
    # --keep-nan: NaN propagates (IEEE), fill values are still missing, as numpy.ma computes.
    keep = np.ma.masked_equal(a, -999.0)
    got = reduce_json(r, "h5py.h5:/A", "rows", ["--keep-nan"])
    for op in ("sum", "max", "mean", "count"):
        want = expected(keep, op, "rows")
        expect(np.allclose(got[op], want, rtol=1e-12, equal_nan=True),
               f"--keep-nan: {op} is {got[op]}, numpy.ma gives {want}")
    expect(np.isnan(got["sum"]).any(), "--keep-nan: no NaN row sum although rows have NaN")
    # The default text output names count.
    p = r.run(["reduce", "obs.nc:/temp", "--op", "count"])
    expect(f"count    {int(np.ma.count(temp))}" in p.stdout, f"count line: {p.stdout}")
    pipeline_missing_values(r, temp)


def pipeline_missing_values(r, temp):
    """A pipeline deck reading obs.nc:/temp reduces it as `tessera reduce` does (fill values and
    out-of-range elements skipped), in memory and streamed, and its /input and /transpose keep
    the variable's attributes, its coordinate and the file's title; /reductions say what they
    reduce."""
    ops = ["sum", "max", "count"]
    for stream in ("false", "true"):
        with open(r.path("pipe.toml"), "w") as fh:
            fh.write(f"""[job]
kind = "pipeline"
[matrix]
input = "obs.nc:/temp"
[reduce]
ops = {json.dumps(ops)}
axis = "rows"
[staging]
out_of_core = {stream}
[output]
file = "pipe.h5"
write_input = {"false" if stream == "true" else "true"}
""")
        r.run(["run", "pipe.toml"])
        what = f"pipeline (out_of_core = {stream})"
        with netCDF4.Dataset(r.path("pipe.h5")) as nc:
            for op in ops:
                got = nc["reductions"][op][:].filled(np.nan).ravel()
                want = expected(temp, op, "rows")
                expect(np.allclose(got, want, rtol=1e-12, equal_nan=True),
                       f"{what}: {op} is {got}, numpy.ma gives {want}")
            expect(nc.title == "synthetic observations", f"{what}: title {nc.ncattrs()}")
            t = nc["transpose"]
            expect(t.dimensions == ("station", "time") and t.units == "K",
                   f"{what}: /transpose has {t.dimensions}, {t.ncattrs()}")
            expect(np.ma.allequal(t[:], temp.T) and (t[:].mask == temp.mask.T).all(),
                   f"{what}: /transpose differs from the input's transpose")
            expect(nc["time"].units == "hours since 2026-01-01", f"{what}: time coordinate")
            if stream == "false":
                expect(nc["input"].dimensions == ("time", "station"),
                       f"{what}: /input has {nc['input'].dimensions}")
        with h5py.File(r.path("pipe.h5")) as f:
            of = f["reductions/sum"].attrs["of"]
            of = of.decode() if isinstance(of, bytes) else of
            want_of = "/input" if stream == "false" else f"{r.path('obs.nc')}:/temp"
            expect(of in (want_of, "obs.nc:/temp"), f"{what}: of = {of!r}")
