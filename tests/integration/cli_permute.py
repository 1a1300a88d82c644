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
