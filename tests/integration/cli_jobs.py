"""Whole jobs as users run them (cli_test.py's scenarios `streamed_jobs`, `start_up`,
`wisdom_cache` and `memory_room`): file jobs stream by default and give the same bits as the
in-memory path, answers that need no MPI come before it starts, the per-user wisdom cache, and
datasets larger than the memory a rank may use."""
import json
import os

import h5py
import netCDF4
import numpy as np

from cli_common import expect


def _netcdf_matrix(path, a):
    """A netCDF4 file as netCDF4-python writes one: a variable A(y, x), contiguous."""
    with netCDF4.Dataset(path, "w", format="NETCDF4") as d:
        d.createDimension("y", a.shape[0])
        d.createDimension("x", a.shape[1])
        d.createVariable("A", a.dtype, ("y", "x"))[:] = a


def streamed_jobs(r, rng):
    for dtype in (np.float32, np.float64):
        shape = (rng.randint(200, 1300), rng.randint(200, 1300))
        seed = rng.randrange(2 ** 62)
        print(f"== {shape} {np.dtype(dtype).name}, seed {seed}")
        a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
        _netcdf_matrix(r.path("A.nc"), a)
        p = r.run(["transpose", "A.nc:/A", "S.h5:/AT"])
        expect("streamed" in p.stderr, "the default transpose did not stream:\n" + p.stderr)
        p = r.run(["transpose", "A.nc:/A", "M.h5:/AT", "--in-memory"])
        expect("streamed" not in p.stderr, "--in-memory streamed:\n" + p.stderr)
        with h5py.File(r.path("S.h5"), "r") as s, h5py.File(r.path("M.h5"), "r") as m:
            expect(s["AT"].dtype == a.dtype, f"streamed output is {s['AT'].dtype}")
            expect(np.array_equal(s["AT"][...], a.T), "streamed transpose != numpy's")
            expect(np.array_equal(m["AT"][...], a.T), "in-memory transpose != numpy's")
        ops = ["--op", "sum,mean,norm1,norm2,norminf,min,max", "--json"]
        for axis in ("all", "rows", "cols"):
            s = r.run(["reduce", "A.nc:/A", "--axis", axis] + ops)
            m = r.run(["reduce", "A.nc:/A", "--axis", axis, "--in-memory"] + ops)
            rs, rm = json.loads(s.stdout)["results"], json.loads(m.stdout)["results"]
            expect(rs == rm, f"axis {axis}: streamed {rs} != in memory {rm}")
        expect(np.isclose(rs["sum"][0], a[:, 0].astype(np.float64).sum(), rtol=1e-12, atol=1e-9),
               "the column sum is not numpy's")


def start_up(r, rng):
    # An Open MPI that cannot start (no such transport): what needs no MPI still answers.
    broken = {"OMPI_MCA_pml": "no-such-pml"}
    p = r.run(["--version"], env=broken)
    expect(p.stdout.startswith("tessera "), "--version printed " + p.stdout)
    p = r.run(["transpose", "--help"], env=broken)
    expect("--in-memory" in p.stdout, "transpose --help does not list --in-memory")
    p = r.run(["no-such-command"], expect_ok=False, env=broken)
    expect(p.returncode != 0 and "subcommand" in p.stderr + p.stdout,
           "a usage error was not reported by the parser")
    p = r.run(["info"], expect_ok=False, env=broken)
    expect(p.returncode != 0, "tessera info ran without MPI: the test proves nothing")
    # Without a launcher the singleton starts on shared memory and needs no daemon.
    p = r.run(["info"])
    expect("ranks       1" in p.stdout, "info: " + p.stdout)


def wisdom_cache(r, rng):
    # Large enough that each rank's local transposes (of 2 ranks) are timed in measure mode.
    a = np.random.default_rng(rng.randrange(2 ** 62)).standard_normal((2053, 2100))
    with h5py.File(r.path("A.h5"), "w") as f:
        f["A"] = a
    cache = r.path("cache")
    env = {"XDG_CACHE_HOME": cache}
    r.run(["transpose", "A.h5:/A", "T.h5:/AT"], env=env)
    expect(not os.path.exists(cache), "a one-shot transpose timed kernels (estimate is its "
           "default) and wrote a cache")
    p = r.run(["--tuning", "measure", "transpose", "A.h5:/A", "T.h5:/AT"], env=env)
    wisdom = os.path.join(cache, "tessera", "wisdom")
    expect(os.path.isfile(wisdom), "no wisdom cache at " + wisdom)
    text = open(wisdom).read()
    expect(text.startswith("tessera-wisdom 1\n") and "\ntranspose " in text, "cache: " + text)
    with open(wisdom, "w") as f:
        f.write("damaged\n")
    p = r.run(["--tuning", "measure", "transpose", "A.h5:/A", "T.h5:/AT"], env=env)
    expect("wisdom" not in p.stderr, "a damaged cache warned:\n" + p.stderr)
    expect(open(wisdom).read().startswith("tessera-wisdom 1\n"), "the damaged cache was kept")
    with open(r.path("afile"), "w") as f:
        f.write("not a folder\n")
    p = r.run(["--tuning", "measure", "transpose", "A.h5:/A", "T.h5:/AT"],
              env={"XDG_CACHE_HOME": r.path("afile")})
    expect("wisdom" not in p.stderr, "an unwritable cache warned:\n" + p.stderr)
    with h5py.File(r.path("T.h5"), "r") as f:
        expect(np.array_equal(f["AT"][...], a.T), "transpose != numpy's")


def memory_room(r, rng):
    """A dataset larger than the memory a rank may use (here its RLIMIT_AS, 1 GiB), without
    --memory-limit: `reduce --in-memory` streams it with a line saying so, and `generate`, which
    makes its matrix in memory, fails before writing anything, naming what bounds it. Before,
    the allocation was tried (and under a cgroup's limit the process was killed)."""
    limit = 1 << 30
    rows = rng.choice([8192, 8221])
    with h5py.File(r.path("big.h5"), "w") as f:  # declared 1 GiB and more, nothing written
        f.create_dataset("A", shape=(rows, 16384), dtype="f8", chunks=(256, 16384))
    prog = ["prlimit", f"--as={limit}", r.tessera]
    p = r.run(["--timing=off", "reduce", "big.h5:/A", "--op", "sum", "--in-memory"], prog=prog)
    expect("streaming it out of core" in p.stderr and "RLIMIT_AS" in p.stderr,
           "the in-memory reduce did not say it streams, naming RLIMIT_AS:\n" + p.stderr)
    expect(p.stdout.split()[-1] in ("0", "0.0"), f"sum of an unwritten dataset: {p.stdout}")
    p = r.run(["generate", "gen.h5:/A", "--rows", str(rows), "--cols", "16384"], prog=prog,
              expect_ok=False)
    expect(p.returncode == 1, f"generate beyond the memory: exit status {p.returncode}")
    expect("this process may use" in p.stderr, "generate did not say what bounds it:\n" + p.stderr)
    expect(not [f for f in os.listdir(r.dir) if f.startswith("gen.h5")], "generate left files")
