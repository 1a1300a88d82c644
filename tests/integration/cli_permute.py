"""`tessera transpose --axes`: permutations of the dimensions of netCDF-4 variables (unlimited
dimension, chunked and compressed, a variable in a group, int16 packed with scale_factor and
_FillValue, f32) and of an HDF5 array of rank 5, checked bit for bit against numpy's
transpose(axes), with the output's dimension names read back by netCDF4 in the new order."""
import h5py
import numpy as np

from cli_common import expect, ranks_of

FILL = -32767


def make_netcdf(path, nt, nlat, nlon, rng):
    """time (unlimited) x lat x lon f32 /temp, /grp/packed int16 over (time, lev, lat, lon) with
    lev a dimension without a coordinate variable, and a 2-D uint8 /u8; returns the arrays."""
    import netCDF4
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    temp = nprng.standard_normal((nt, nlat, nlon)).astype(np.float32) * 10 + 280
    packed = nprng.integers(-30000, 30000, (nt, 1, nlat, nlon), dtype=np.int16)
    packed[0, 0, 0, :2] = FILL
    u8 = nprng.integers(0, 256, (nlat, nlon), dtype=np.uint8)
    with netCDF4.Dataset(path, "w") as nc:
        nc.title = "permutation test"
        nc.createDimension("time", None)
        nc.createDimension("lat", nlat)
        nc.createDimension("lon", nlon)
        nc.createDimension("lev", 1)
        t = nc.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t[:] = np.arange(nt) * 0.5
        nc.createVariable("lat", "f4", ("lat",))[:] = np.linspace(-80, 80, nlat)
        nc.createVariable("lon", "f4", ("lon",))[:] = np.linspace(0, 350, nlon)
        v = nc.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True,
                              chunksizes=(1, nlat, nlon))
        v.units = "K"
        v[:] = temp
        g = nc.createGroup("grp")
        p = g.createVariable("packed", "i2", ("time", "lev", "lat", "lon"), zlib=True,
                             fill_value=FILL)
        p.scale_factor = np.float32(0.01)
        p.add_offset = np.float32(280.0)
        p.set_auto_maskandscale(False)
        p[:] = packed
        nc.createVariable("u8", "u1", ("lat", "lon"))[:] = u8
    return temp, packed, u8


def same_bits(got, want, what):
    expect(got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}")
    expect(got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}")
    expect(got.tobytes() == want.tobytes(), f"{what}: the values differ from numpy's transpose")


def netcdf_dims(path, var):
    import netCDF4
    with netCDF4.Dataset(path) as nc:
        group = nc
        for part in var.strip("/").split("/")[:-1]:
            group = group.groups[part]
        return group.variables[var.strip("/").split("/")[-1]].dimensions


def permute(r, rng):
    ranks = ranks_of(r)
    # time shorter than the rank count at 3 ranks: some ranks own no output rows.
    nt = max(1, ranks - 1) if ranks > 1 else rng.randint(2, 4)
    nlat, nlon = rng.choice([7, 11, 13]), rng.choice([17, 19, 23])
    print(f"== netCDF-4 input: time {nt} (unlimited) x lat {nlat} x lon {nlon}")
    temp, packed, u8 = make_netcdf(r.path("in.nc"), nt, nlat, nlon, rng)

    # f32 by name, time outermost (fewer rows than ranks), then time innermost.
    for axes, names in (((0, 2, 1), "time,lon,lat"), ((1, 2, 0), "lat,lon,time")):
        out = f"t_{''.join(map(str, axes))}.nc"
        r.run(["transpose", "in.nc:/temp", f"{out}:/temp", "--axes", names])
        with h5py.File(r.path(out), "r") as f:
            same_bits(f["temp"][()], temp.transpose(axes), f"/temp axes {axes}")
            expect(f["temp"].attrs["units"] in (b"K", "K"), "units not copied")
            expect(f.attrs["title"] in (b"permutation test", "permutation test"),
                   "global attributes not copied")
            expect(np.array_equal(f["time"][()], np.arange(nt) * 0.5), "time coordinate")
        got = netcdf_dims(r.path(out), "/temp")
        expect(got == tuple(names.split(",")), f"netCDF4 reads the dimensions {got}")

    # int16 packed, in a group, by index, through pieces far below the data (a memory limit
    # of 16 bytes cuts single rows along the next dimension): raw values and packing kept.
    axes = (3, 0, 1, 2)
    r.run(["transpose", "in.nc:/grp/packed", "p.nc:/grp/packed", "--axes", "3,0,1,2",
           "--memory-limit", "16B"])
    with h5py.File(r.path("p.nc"), "r") as f:
        d = f["grp/packed"]
        same_bits(d[()], packed.transpose(axes), "/grp/packed")
        expect(d.attrs["_FillValue"] == FILL, "_FillValue not copied")
        expect(abs(float(d.attrs["scale_factor"]) - 0.01) < 1e-7, "scale_factor not copied")
        expect(float(d.attrs["add_offset"]) == 280.0, "add_offset not copied")
    got = netcdf_dims(r.path("p.nc"), "/grp/packed")
    expect(got == ("lon", "time", "lev", "lat"), f"netCDF4 reads the dimensions {got}")
    import netCDF4
    with netCDF4.Dataset(r.path("in.nc")) as a, netCDF4.Dataset(r.path("p.nc")) as b:
        want = a["grp"]["packed"][:].transpose(axes)
        have = b["grp"]["packed"][:]
        expect(np.array_equal(np.ma.getmaskarray(have), np.ma.getmaskarray(want)),
               "netCDF4 masks other values in the output")
        expect(np.ma.allequal(have, want), "netCDF4 unpacks the output to other values")

    # A 2-D integer variable without --axes: the transpose.
    r.run(["transpose", "in.nc:/u8", "u.h5:/u8t"])
    with h5py.File(r.path("u.h5"), "r") as f:
        same_bits(f["u8t"][()], u8.T, "/u8t")

    # Rank 5, f64 without dimension scales, a dimension of length 1, by index.
    shape = (rng.randint(1, 4), 1, rng.choice([3, 5]), 2, rng.choice([7, 11]))
    cube = np.random.default_rng(rng.randrange(2 ** 32)).standard_normal(shape)
    with h5py.File(r.path("c.h5"), "w") as f:
        f["c"] = cube
    r.run(["transpose", "c.h5:/c", "c_out.h5:/c", "--axes", "4,2,0,3,1"])
    with h5py.File(r.path("c_out.h5"), "r") as f:
        same_bits(f["c"][()], cube.transpose(4, 2, 0, 3, 1), "rank-5 /c")


def reduce_dims(r, rng):
    """`tessera reduce --dims`: sum, mean, min, max and count over some dimensions of a netCDF-4
    f32 variable with missing values and of a packed int16 one, against numpy.ma; the same bits
    at one rank, at this test's rank count and in pieces of a tiny memory limit."""
    import netCDF4
    from cli_common import Runner
    nt, nlat, nlon = rng.randint(2, 5), rng.choice([5, 7]), rng.choice([11, 13])
    temp, packed, _ = make_netcdf(r.path("in.nc"), nt, nlat, nlon, rng)
    with netCDF4.Dataset(r.path("in.nc"), "a") as nc:
        v = nc["temp"]
        v.missing_value = np.float32(-999.0)
        v[0, 1, :3] = -999.0
    with netCDF4.Dataset(r.path("in.nc")) as nc:
        data = nc["temp"][:].astype(np.float64)      # masked where missing
    ops = ["sum", "mean", "min", "max", "count"]
    r.run(["reduce", "in.nc:/temp", "--dims", "lat,lon", "--op", ",".join(ops), "--output",
           "r.h5"])
    with h5py.File(r.path("r.h5"), "r") as f:
        got = {op: f[f"temp_{op}"][()] for op in ops}
        expect(f["temp_mean"].attrs["reduced_dims"] in (b"lat,lon", "lat,lon"), "reduced_dims")
        expect(f["temp_mean"].attrs["units"] in (b"K", "K"), "units not carried to the mean")
        expect("missing_value" not in f["temp_mean"].attrs, "missing_value on a result")
        expect("units" not in f["temp_count"].attrs, "units on a count")
    want = {"sum": data.sum(axis=(1, 2)), "mean": data.mean(axis=(1, 2)),
            "min": data.min(axis=(1, 2)), "max": data.max(axis=(1, 2)),
            "count": data.count(axis=(1, 2)).astype(np.float64)}
    for op in ops:
        expect(got[op].shape == (nt,), f"temp_{op} has shape {got[op].shape}")
        if op in ("min", "max", "count"):
            expect(np.array_equal(got[op], np.ma.getdata(want[op])), f"temp_{op} differs")
        else:
            expect(np.allclose(got[op], want[op], rtol=1e-12, atol=0), f"temp_{op} differs")
    expect(netcdf_dims(r.path("r.h5"), "/temp_mean") == ("time",), "dims of /temp_mean")

    # Over time (the outermost): a field over (lat, lon); and the same bits in pieces and at 1 rank.
    r.run(["reduce", "in.nc:/temp", "--dims", "time", "--op", "mean,max", "--output", "m.h5"])
    r.run(["reduce", "in.nc:/temp", "--dims", "0", "--op", "mean,max", "--output", "m2.h5",
           "--memory-limit", "64B"])
    one = Runner(r.tessera, 1, r.mpirun, r.dir)
    one.run(["reduce", "in.nc:/temp", "--dims", "time", "--op", "mean,max", "--output", "m1.h5"])
    with h5py.File(r.path("m.h5"), "r") as a, h5py.File(r.path("m2.h5"), "r") as b, \
            h5py.File(r.path("m1.h5"), "r") as c:
        for op in ("mean", "max"):
            x = a[f"temp_{op}"][()]
            expect(x.shape == (nlat, nlon), f"temp_{op} over time has shape {x.shape}")
            expect(x.tobytes() == b[f"temp_{op}"][()].tobytes(), f"{op}: pieces change bits")
            expect(x.tobytes() == c[f"temp_{op}"][()].tobytes(), f"{op}: 1 rank changes bits")
        expect(np.allclose(a["temp_mean"][()], data.mean(axis=0), rtol=1e-12), "mean over time")
    expect(netcdf_dims(r.path("m.h5"), "/temp_mean") == ("lat", "lon"), "dims of the field")

    # Packed int16 in a group, decoded and its _FillValue skipped.
    r.run(["reduce", "in.nc:/grp/packed", "--dims", "lev,lat", "--op", "mean", "--output",
           "p.h5"])
    with h5py.File(r.path("p.h5"), "r") as f:
        got = f["grp/packed_mean"][()]
        for packing in ("scale_factor", "add_offset", "_FillValue"):
            expect(packing not in f["grp/packed_mean"].attrs, f"{packing} on a decoded result")
    # Decoded in f64 with the stored (f32) scale_factor and add_offset, as tessera decodes.
    raw = np.ma.masked_equal(packed, FILL).astype(np.float64)
    unpacked = raw * np.float64(np.float32(0.01)) + np.float64(np.float32(280.0))
    expect(np.allclose(got, unpacked.mean(axis=(1, 2)), rtol=1e-12), "packed mean differs")


def permute_storage(r, rng):
    """--axes outputs chunked and compressed as the flags ask (--chunk-rows, --deflate,
    --shuffle) or as the input is (--like-input, its chunk shape permuted), bit-exact against
    numpy, and read by netCDF4 with the dimension names in the new order."""
    import netCDF4
    ranks = ranks_of(r)
    # time shorter than the rank count (ranks without output rows), a lev of length 1, primes.
    nt = max(1, ranks - 2) if ranks > 1 else rng.randint(2, 4)
    nlat, nlon = rng.choice([7, 11]), rng.choice([13, 17])
    print(f"== netCDF-4 input: time {nt} (unlimited) x lat {nlat} x lon {nlon}")
    temp, packed, _ = make_netcdf(r.path("in.nc"), nt, nlat, nlon, rng)
    cases = [
        ("lat,lon,time", (1, 2, 0), ["--deflate", "4", "--shuffle"], None, 4, True),
        ("lon,time,lat", (2, 0, 1), ["--chunk-rows", "2"], None, None, False),
        # netCDF4 writes zlib with shuffle.
        ("time,lon,lat", (0, 2, 1), ["--like-input"], (1, nlon, nlat), 4, True),
        ("lon,lat,time", (2, 1, 0), ["--chunk-rows", "3", "--deflate", "1", "--memory-limit",
                                     "200B"], None, 1, False),
    ]
    for names, axes, flags, chunks, gzip, shuffle in cases:
        out = "s_" + "".join(map(str, axes)) + ".nc"
        r.run(["transpose", "in.nc:/temp", f"{out}:/temp", "--axes", names] + flags)
        with h5py.File(r.path(out), "r") as f:
            d = f["temp"]
            same_bits(d[()], temp.transpose(axes), f"/temp axes {axes} {flags}")
            expect(d.chunks is not None, f"{flags}: the output is not chunked")
            if chunks is not None:
                expect(d.chunks == chunks, f"{flags}: chunks {d.chunks}, expected {chunks}")
            if "--chunk-rows" in flags:
                want = min(int(flags[flags.index("--chunk-rows") + 1]), d.shape[0])
                expect(d.chunks[0] == want, f"{flags}: chunks {d.chunks}")
            expect((d.compression == "gzip") == (gzip is not None) and
                   (gzip is None or d.compression_opts == gzip),
                   f"{flags}: compression {d.compression} {d.compression_opts}")
            expect(bool(d.shuffle) == shuffle, f"{flags}: shuffle {d.shuffle}")
        got = netcdf_dims(r.path(out), "/temp")
        expect(got == tuple(names.split(",")), f"netCDF4 reads the dimensions {got}")
        with netCDF4.Dataset(r.path(out)) as nc:
            expect(np.array_equal(nc["temp"][:], temp.transpose(axes)), "netCDF4 reads other data")

    # Packed int16 keeps its packing and fill value through a compressed, permuted output.
    r.run(["transpose", "in.nc:/grp/packed", "p.nc:/grp/packed", "--axes", "lat,time,lon,lev",
           "--deflate", "2"])
    with h5py.File(r.path("p.nc"), "r") as f:
        d = f["grp/packed"]
        same_bits(d[()], packed.transpose(2, 0, 3, 1), "/grp/packed")
        expect(d.compression == "gzip" and d.fillvalue == FILL, "packed: gzip or fill value")
    with netCDF4.Dataset(r.path("in.nc")) as a, netCDF4.Dataset(r.path("p.nc")) as b:
        want = a["grp"]["packed"][:].transpose(2, 0, 3, 1)
        have = b["grp"]["packed"][:]
        expect(np.array_equal(np.ma.getmaskarray(have), np.ma.getmaskarray(want)) and
               np.ma.allequal(have, want), "netCDF4 unpacks the compressed output otherwise")
