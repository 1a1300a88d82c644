"""`tessera reduce --dims` with every op (the 2-D reduce's, count, var, std, argmin, argmax) on
netCDF-4 variables with missing values of every kind (_FillValue, missing_value, valid_max,
NaN), ties and rows without a valid element, over awkward shapes (a dimension of length 1,
primes, fewer rows than ranks): against numpy.ma, the same bits at one rank and in pieces of a
tiny memory limit, --json against the file, several datasets per call, chunked and compressed
outputs, and what netCDF4 (as xarray reads through it) sees of the outputs' dimensions,
coordinates and attributes."""
import json

import h5py
import numpy as np

from cli_common import Runner, expect, ranks_of

ALL_OPS = ["sum", "mean", "min", "max", "norm1", "norm2", "norminf", "count", "var", "std",
           "argmin", "argmax"]
FILL = -999.0


def make_input(path, shape, rng):
    """/v(time, lev, lat, lon) f64 of small integers (ties), with a _FillValue, missing_value,
    valid_max and NaN elements and one (lat, lon) field wholly missing at time 0, lev 0; /w f32
    over (lat, lon) with NaN; coordinates lat and lon. Returns /v and /w as netCDF4's masked
    arrays, NaN masked too."""
    import netCDF4
    nt, nlev, nlat, nlon = shape
    g = np.random.default_rng(rng.randrange(2 ** 32))
    v = g.integers(-3, 4, shape).astype(np.float64) * 1.5 + 280
    hide = g.random(shape)
    v[hide < 0.08] = FILL
    v[(hide >= 0.08) & (hide < 0.12)] = np.nan
    v[(hide >= 0.12) & (hide < 0.15)] = -1.0     # missing_value
    v[(hide >= 0.15) & (hide < 0.17)] = 5000.0   # above valid_max
    if nt > 1:
        v[0, 0] = FILL                            # a (lat, lon) field with no valid element
    w = g.standard_normal((nlat, nlon)).astype(np.float32)
    w[g.random((nlat, nlon)) < 0.1] = np.nan
    with netCDF4.Dataset(path, "w") as nc:
        nc.createDimension("time", None)
        nc.createDimension("lev", nlev)
        nc.createDimension("lat", nlat)
        nc.createDimension("lon", nlon)
        lat = nc.createVariable("lat", "f4", ("lat",))
        lat.units = "degrees_north"
        lat[:] = np.linspace(-80, 80, nlat)
        nc.createVariable("lon", "f8", ("lon",))[:] = np.linspace(0, 350, nlon)
        x = nc.createVariable("v", "f8", ("time", "lev", "lat", "lon"), fill_value=FILL,
                              zlib=True)
        x.units = "K"
        x.long_name = "temperature"
        x.missing_value = -1.0
        x.valid_max = 1000.0
        x.set_auto_maskandscale(False)
        x[:] = v
        y = nc.createVariable("w", "f4", ("lat", "lon"))
        y.units = "m"
        y[:] = w
    with netCDF4.Dataset(path) as nc:
        out = []
        for name in ("v", "w"):
            a = nc[name][:]
            a = np.ma.masked_invalid(np.ma.asarray(a, dtype=np.float64))
            out.append(a)
    return out


def reference(data, axes, op, ddof=0):
    """numpy.ma's value of op over `axes` (a tuple), as tessera defines it where numpy.ma
    masks: 0 for the sums and norms of nothing, NaN for mean, min, max, var and std, -1 for
    argmin and argmax (then one array per reduced axis)."""
    n = data.count(axis=axes)
    if op == "count":
        return n.astype(np.float64)
    if op in ("sum", "norm1", "norm2", "norminf"):
        x = {"sum": data, "norm1": abs(data), "norm2": data * data, "norminf": abs(data)}[op]
        s = x.max(axis=axes) if op == "norminf" else x.sum(axis=axes)
        s = np.ma.filled(s, 0.0)
        return np.sqrt(s) if op == "norm2" else s
    if op in ("mean", "min", "max"):
        return np.ma.filled(getattr(data, op)(axis=axes), np.nan)
    if op in ("var", "std"):
        mean = data.sum(axis=axes) / np.where(n > 0, n, 1)
        dev = data - np.expand_dims(np.ma.filled(mean, 0.0), axes)
        ss = np.ma.filled((dev * dev).sum(axis=axes), 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = np.where(n - ddof > 0, ss / (n - ddof), np.nan)
        return np.sqrt(var) if op == "std" else var
    # argmin / argmax: the reduced axes last, flattened; the first extreme valid element.
    kept = [d for d in range(data.ndim) if d not in axes]
    moved = np.ma.transpose(data, kept + list(axes))
    flat = moved.reshape(moved.shape[:len(kept)] + (-1,))
    fill = np.inf if op == "argmin" else -np.inf
    vals = np.ma.filled(flat, fill)
    idx = np.argmin(vals, axis=-1) if op == "argmin" else np.argmax(vals, axis=-1)
    idx = np.where(flat.count(axis=-1) > 0, idx, -1)
    red_shape = tuple(data.shape[d] for d in axes)
    per_dim = np.unravel_index(np.where(idx >= 0, idx, 0), red_shape)
    return [np.where(idx >= 0, p, -1).astype(np.int64) for p in per_dim]


def compare(got, want, what, exact):
    expect(got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}")
    if exact:
        ok = np.array_equal(got, want, equal_nan=True)
    else:
        ok = np.allclose(got, want, rtol=1e-12, atol=1e-9, equal_nan=True)
    expect(ok, f"{what}: tessera {got.ravel()[:12]} vs numpy {np.asarray(want).ravel()[:12]}")


def outputs_of(var, names, op):
    if op in ("argmin", "argmax"):
        return [f"{var}_{op}_{n}" for n in names]
    return [f"{var}_{op}"]


def check_against_numpy(r, path, var, data, dim_names, axes, ddof=0):
    reduced = [dim_names[d] for d in axes]
    with h5py.File(r.path(path), "r") as f:
        for op in ALL_OPS:
            want = reference(data, tuple(axes), op, ddof)
            got_paths = outputs_of(var, reduced, op)
            wants = want if isinstance(want, list) else [want]
            for p, w in zip(got_paths, wants):
                got = f[p][()]
                exact = op in ("min", "max", "count", "argmin", "argmax")
                compare(got, np.asarray(w), f"{p} over {reduced}", exact)
                if op in ("argmin", "argmax"):
                    expect(got.dtype == np.int64, f"{p} is {got.dtype}, expected int64")


def same_bits(r, a, b, names, what):
    with h5py.File(r.path(a), "r") as x, h5py.File(r.path(b), "r") as y:
        for n in names:
            expect(x[n][()].tobytes() == y[n][()].tobytes(), f"{n}: {what} changes the bits")


def stats(r, rng):
    ranks = ranks_of(r)
    # Fewer times than ranks at 3 and 5 ranks (ranks without rows), a level of length 1, primes.
    nt = max(2, ranks - 1) if ranks > 1 else rng.randint(2, 4)
    shape = (nt, 1, rng.choice([5, 7]), rng.choice([11, 13]))
    print(f"== netCDF-4 input: /v {shape} f64 with missing values, /w {shape[2:]} f32")
    v, w = make_input(r.path("in.nc"), shape, rng)
    names = ["time", "lev", "lat", "lon"]
    op_list = ",".join(ALL_OPS)
    one = Runner(r.tessera, 1, r.mpirun, r.dir)

    for dims, axes in (("lat,lon", (2, 3)), ("time", (0,)), ("lev,lon", (1, 3)),
                       ("0,2,3", (0, 2, 3))):
        tag = dims.replace(",", "")
        out = f"r_{tag}.h5"
        p = r.run(["reduce", "in.nc:/v", "--dims", dims, "--op", op_list, "--output", out,
                   "--json"])
        check_against_numpy(r, out, "/v", v, names, axes)
        all_names = [q for op in ALL_OPS for q in outputs_of("/v", [names[a] for a in axes], op)]
        # The same bits at one rank and in pieces far below a row of the data.
        one.run(["reduce", "in.nc:/v", "--dims", dims, "--op", op_list, "--output",
                 f"one_{tag}.h5"])
        r.run(["reduce", "in.nc:/v", "--dims", dims, "--op", op_list, "--output",
               f"lim_{tag}.h5", "--memory-limit", "64B"])
        same_bits(r, out, f"one_{tag}.h5", all_names, "one rank")
        same_bits(r, out, f"lim_{tag}.h5", all_names, "a memory limit")
        # --json: one object on stdout, the file's values, nested over the kept dimensions.
        objs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
        expect(len(objs) == 1, f"--json printed {len(objs)} objects")
        o = objs[0]
        kept = [names[d] for d in range(4) if d not in axes]
        expect(o["dims"] == [names[a] for a in axes] and o["kept"] == kept,
               f"--json dims {o['dims']} kept {o['kept']}")
        expect(o["shape"] == list(shape) and o["dtype"] == "f64", "--json shape or dtype")
        with h5py.File(r.path(out), "r") as f:
            for op in ALL_OPS:
                if op in ("argmin", "argmax"):
                    for d in (names[a] for a in axes):
                        got = np.array(o["results"][op][d])
                        expect(np.array_equal(got, f[f"v_{op}_{d}"][()]), f"--json {op} {d}")
                        expect(o["variables"][op][d] == f"/v_{op}_{d}", "--json variables")
                else:
                    got = np.array(o["results"][op], dtype=np.float64)  # null: NaN
                    expect(np.array_equal(got, f[f"v_{op}"][()], equal_nan=True),
                           f"--json {op}: {got.ravel()[:8]}")

    # The sample variance (ddof 1), its attribute.
    r.run(["reduce", "in.nc:/v", "--dims", "lat,lon", "--op", "var,std", "--ddof", "1",
           "--output", "ddof.h5"])
    with h5py.File(r.path("ddof.h5"), "r") as f:
        for op in ("var", "std"):
            compare(f[f"v_{op}"][()], reference(v, (2, 3), op, 1), f"{op} ddof 1", False)
            expect(int(f[f"v_{op}"].attrs["ddof"]) == 1, "ddof attribute")

    # Two datasets in one call, one JSON object each; chunked, compressed outputs; read as
    # netCDF4 (and so xarray) reads them.
    p = r.run(["reduce", "in.nc:/v,/w", "--dims", "lat", "--op", "mean,std,argmax,count",
               "--output", "two.nc", "--json", "--deflate", "3", "--shuffle"])
    objs = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    expect([o["dataset"] for o in objs] == ["/v", "/w"], "--json: one object per dataset")
    expect(objs[1]["result_shape"] == [shape[3]], "--json result_shape of /w")
    for op in ("mean", "std", "count"):
        with h5py.File(r.path("two.nc"), "r") as f:
            d = f[f"w_{op}"]
            expect(d.compression == "gzip" and d.shuffle, f"/w_{op} is not gzip + shuffle")
            compare(d[()], reference(w, (0,), op), f"/w_{op}", op == "count")
            compare(f[f"v_{op}"][()], reference(v, (2,), op), f"/v_{op}", op == "count")
    import netCDF4
    with netCDF4.Dataset(r.path("two.nc")) as nc, netCDF4.Dataset(r.path("in.nc")) as src:
        m = nc["v_mean"]
        expect(m.dimensions == ("time", "lev", "lon"), f"/v_mean dims {m.dimensions}")
        expect(m.units == "K" and m.long_name == "temperature", "units or long_name of the mean")
        for gone in ("_FillValue", "missing_value", "valid_max"):
            expect(gone not in m.ncattrs(), f"{gone} on /v_mean")
        expect("units" in nc["v_std"].ncattrs(), "units not on the std")
        a = nc["v_argmax_lat"]
        expect("units" not in a.ncattrs(), "units on an index")
        expect(a.dtype == np.int64 and a.reduced_dims == "lat", "argmax: type or reduced_dims")
        got = a[:]
        want = reference(v, (2,), "argmax")[0]
        expect(np.array_equal(np.ma.getmaskarray(got), want < 0),
               "netCDF4 does not mask the argmax of rows without valid elements")
        expect(np.array_equal(np.ma.filled(got, -1), want), "argmax read by netCDF4")
        expect(nc["w_mean"].dimensions == ("lon",) and nc["w_mean"].units == "m", "/w_mean")
        expect(np.array_equal(nc["lon"][:], src["lon"][:]), "the lon coordinate")
        expect(nc["lon"].dimensions == ("lon",), "lon is not a coordinate variable")

    # Norm2 rescued where the squares overflow or underflow (f64 rows of 1e200, 1e-200).
    big = np.array([[3e200, 4e200, 1e200], [3e-200, 4e-200, 0.0]])
    with h5py.File(r.path("big.h5"), "w") as f:
        f["b"] = big
    r.run(["reduce", "big.h5:/b", "--dims", "1", "--op", "norm2,norminf", "--output", "bn.h5"])
    with h5py.File(r.path("bn.h5"), "r") as f:
        mx = np.abs(big).max(axis=1)
        want = mx * np.sqrt(((big / mx[:, None]) ** 2).sum(axis=1))
        compare(f["b_norm2"][()], want, "rescued norm2", False)

    # The ops only --dims has are refused without it, with the way to ask for them.
    p = r.run(["reduce", "in.nc:/w", "--op", "var"], expect_ok=False)
    expect(p.returncode != 0 and "--dims" in p.stderr + p.stdout,
           "var without --dims: no clear refusal")

    # Plain integer variables (no scale_factor): reduced in f64, the fill value skipped, as
    # numpy.ma reduces them; the 2-D reduce and --dims alike.
    import netCDF4
    g = np.random.default_rng(rng.randrange(2 ** 32))
    counts = g.integers(0, 30000, (shape[0], shape[2], shape[3])).astype(np.int16)
    counts[0, 0, :2] = -1
    with netCDF4.Dataset(r.path("ints.nc"), "w") as nc:
        for n, d in zip(("time", "lat", "lon"), counts.shape):
            nc.createDimension(n, d)
        x = nc.createVariable("n", "i2", ("time", "lat", "lon"), fill_value=-1)
        x[:] = np.ma.masked_equal(counts, -1)
        nc.createVariable("m", "i4", ("lat", "lon"))[:] = counts[0].astype(np.int32) * 70000
    with netCDF4.Dataset(r.path("ints.nc")) as nc:
        n_masked = np.ma.asarray(nc["n"][:], dtype=np.float64)
        m_plain = np.asarray(nc["m"][:], dtype=np.float64)
    r.run(["reduce", "ints.nc:/n", "--dims", "lat,lon", "--op", "sum,mean,min,max,count,std",
           "--output", "ints_r.h5"])
    with h5py.File(r.path("ints_r.h5"), "r") as f:
        for op in ("sum", "mean", "min", "max", "count", "std"):
            compare(f[f"n_{op}"][()], reference(n_masked, (1, 2), op), f"/n_{op} (i2)",
                    op in ("sum", "min", "max", "count"))
    p = r.run(["reduce", "ints.nc:/m", "--op", "sum,max,min", "--axis", "cols", "--json"])
    o = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")][0]
    for op in ("sum", "max", "min"):
        compare(np.array(o["results"][op]), getattr(m_plain, op)(axis=0), f"2-D {op} of i4",
                True)
