# The Python module under mpirun (every rank runs every test, in the same order):
#   mpirun -np 3 python3 -m pytest -q bindings/python/tests
import os
import tempfile

import numpy
import pytest
from mpi4py import MPI

import tessera

comm = MPI.COMM_WORLD


def matrix(m, n, dtype=numpy.float64):
    return (numpy.arange(m * n, dtype=numpy.float64).reshape(m, n) * 0.5 - 3.0).astype(dtype)


@pytest.fixture
def shared_dir():
    d = comm.bcast(tempfile.mkdtemp(prefix="tessera-py-") if comm.rank == 0 else None)
    yield d
    comm.barrier()


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64, numpy.complex64,
                                   numpy.complex128])
def test_transpose(dtype):
    m, n = 29, 13
    a = matrix(m, n, dtype) * (1 + 1j if numpy.dtype(dtype).kind == "c" else 1)
    a = a.astype(dtype)
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    plan = tessera.TransposePlan(dist, dtype, comm)
    out = plan.execute(a[b:e])
    t = dist.transposed()
    assert out.dtype == numpy.dtype(dtype)
    numpy.testing.assert_array_equal(out, a.T[t.begin(comm.rank):t.end(comm.rank)])


def test_reduce_same_bits_as_cpp_order():
    m, n = 300, 7  # several 64-row blocks, cut by rank boundaries
    a = numpy.sin(numpy.arange(m * n, dtype=numpy.float64)).reshape(m, n)
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    r = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum", "norm2", "max"]).execute(a[b:e])
    assert set(r) == {"sum", "norm2", "max"}
    assert r["max"] == a.max()
    assert r["sum"] == pytest.approx(a.sum(), rel=1e-13)
    # The same bits on one rank as on all of them (the sums are reproducible).
    one = tessera.BlockDistribution((m, n), 1)
    r1 = tessera.ReducePlan(one, numpy.float64, MPI.COMM_SELF, ops=["sum", "norm2"]).execute(a)
    assert r1["sum"] == r["sum"] and r1["norm2"] == r["norm2"]
    rows = tessera.ReducePlan(dist, "f64", comm, ops=["sum"], axis="rows").execute(a[b:e])
    assert rows["sum"].shape == (m,)


def test_ops_as_one_string():
    # "sum,max" as on the command line: the same as ["sum", "max"], never letter by letter.
    m, n = 40, 5
    a = numpy.cos(numpy.arange(m * n, dtype=numpy.float64)).reshape(m, n)
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    r = tessera.ReducePlan(dist, numpy.float64, comm, ops="sum, max").execute(a[b:e])
    assert set(r) == {"sum", "max"} and r["max"] == a.max()
    one = tessera.ReducePlan(dist, numpy.float64, comm, ops="norm2").execute(a[b:e])
    assert set(one) == {"norm2"}


def test_bad_arrays_raise():
    m, n = 10, 6
    a = matrix(m, n)
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    plan = tessera.TransposePlan(dist, numpy.float64, comm)
    with pytest.raises(tessera.InputError, match="dtype float64"):
        plan.execute(a[b:e].astype(numpy.float32))
    with pytest.raises(tessera.InputError, match="shape"):
        plan.execute(a[b:e + 1] if e < m else a[b:e - 1])
    with pytest.raises(tessera.InputError, match="C-contiguous"):
        plan.execute(numpy.asfortranarray(numpy.zeros((e - b, n))) if e - b > 1
                     else a[b:e, ::-1])
    with pytest.raises(tessera.InputError, match="int64"):
        tessera.TransposePlan(dist, numpy.int64, comm)
    with pytest.raises(tessera.InputError, match="mpi4py"):
        tessera.TransposePlan(dist, numpy.float64, 42)
    with pytest.raises(tessera.InputError, match="norm7"):
        tessera.ReducePlan(dist, numpy.float64, comm, ops=["norm7"])


def test_one_ranks_bad_array_raises_on_every_rank():
    # Before, the rank with the wrong array raised and the others waited in the exchange forever.
    m, n = 10, 6
    a = matrix(m, n)
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    bad = comm.size - 1
    block = a[b:e].astype(numpy.int32) if comm.rank == bad else a[b:e]
    expected = "int32" if comm.rank == bad else f"rank {bad}: .*int32"
    plan = tessera.TransposePlan(dist, numpy.float64, comm)
    with pytest.raises(tessera.InputError, match=expected):
        plan.execute(block)
    reduce = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum"])
    with pytest.raises(tessera.InputError, match=expected):
        reduce.execute(block)
    # Nobody was left inside a collective: the plans still work.
    numpy.testing.assert_array_equal(plan.execute(a[b:e]), a.T[dist.transposed().begin(
        comm.rank):dist.transposed().end(comm.rank)])
    assert reduce.execute(a[b:e])["sum"] == pytest.approx(a.sum())


def test_hdf5_round_trip_and_out_of_core(shared_dir):
    m, n = 21, 9
    a = matrix(m, n)
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    f = os.path.join(shared_dir, "a.h5")
    tessera.write_rows(f, "/A", dist, a[b:e], comm)
    shape, dtype = tessera.inspect(f, "/A", comm)
    assert shape == (m, n) and dtype == numpy.float64
    numpy.testing.assert_array_equal(tessera.read_rows(f, "/A", dist, numpy.float64, comm),
                                     a[b:e])
    with pytest.raises(tessera.IoError, match="missing.h5"):
        tessera.read_rows(os.path.join(shared_dir, "missing.h5"), "/A", dist, "f64", comm)
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        with pytest.raises(tessera.MpiError, match="MPI_THREAD_MULTIPLE"):
            tessera.reduce_out_of_core(f, "/A", comm)
        return
    ft = os.path.join(shared_dir, "at.h5")
    tessera.transpose_out_of_core(f, "/A", ft, "/AT", comm)
    t = dist.transposed()
    numpy.testing.assert_array_equal(tessera.read_rows(ft, "/AT", t, numpy.float64, comm),
                                     a.T[t.begin(comm.rank):t.end(comm.rank)])
    r = tessera.reduce_out_of_core(f, "/A", comm, ops=["sum", "norm2"])
    p = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum", "norm2"]).execute(a[b:e])
    assert r == p


def test_missing_values(shared_dir):
    """skip_nan as numpy's nan* functions; files: _FillValue and NaN skipped as numpy.ma does."""
    m, n = 23, 7
    a = matrix(m, n)
    a[::3, 1] = numpy.nan
    a[2, :] = -999.0
    dist = tessera.BlockDistribution((m, n), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    r = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum", "max", "count"], axis="cols",
                           skip_nan=True).execute(a[b:e])
    numpy.testing.assert_allclose(r["sum"], numpy.nansum(a, axis=0), rtol=1e-14)
    numpy.testing.assert_array_equal(r["max"], numpy.nanmax(a, axis=0))
    numpy.testing.assert_array_equal(r["count"], numpy.sum(~numpy.isnan(a), axis=0))
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        return
    f = os.path.join(shared_dir, "fill.h5")
    if comm.rank == 0:
        import h5py
        with h5py.File(f, "w") as h:
            h["A"] = a
            h["A"].attrs["_FillValue"] = -999.0
    comm.barrier()
    ma = numpy.ma.masked_invalid(numpy.ma.masked_equal(a, -999.0))
    r = tessera.reduce_out_of_core(f, "/A", comm, ops=["mean", "min", "count"])
    assert numpy.isclose(r["mean"], ma.mean(), rtol=1e-14)
    assert r["min"] == ma.min() and r["count"] == ma.count()
    assert numpy.isnan(tessera.reduce_out_of_core(f, "/A", comm, ops=["sum"], keep_nan=True)["sum"])


def test_heat2d():
    solver = tessera.Heat2dSolver(comm, nx=24, ny=18, dt=1e-4)
    d0 = solver.diagnostics()
    solver.step(10)
    d = solver.diagnostics()
    assert solver.steps_done == 10 and solver.time == pytest.approx(1e-3)
    assert d["max"] < d0["max"] and d["linf_error"] < 1e-3
    u = solver.read_field()
    lay = solver.layout
    assert u.shape == (lay.rows(comm.rank), 24)
    with pytest.raises(tessera.InputError, match="grid.nx"):
        tessera.Heat2dSolver(comm, nx=0, ny=18, dt=1e-4)
