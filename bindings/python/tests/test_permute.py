# Distributed permutations of dimensions against numpy.transpose, under mpirun as
# test_tessera.py (every rank runs every test, in the same order):
#   mpirun -np 3 python3 -m pytest -q bindings/python/tests/test_permute.py
# Each test also runs on the sub-communicators of the first 1, 2, … ranks, so one job covers
# every rank count up to its size.
import numpy
import pytest
from mpi4py import MPI

import tessera

comm = MPI.COMM_WORLD


def communicators():
    """MPI.COMM_WORLD's first k ranks for k = 1 … size (None on the ranks left out)."""
    for k in range(1, comm.size + 1):
        sub = comm.Split(0 if comm.rank < k else MPI.UNDEFINED, comm.rank)
        yield None if sub == MPI.COMM_NULL else sub
        if sub != MPI.COMM_NULL:
            sub.Free()


def array(shape, dtype, seed=0):
    """The same pseudo-random array on every rank (whole range of integer types)."""
    rng = numpy.random.default_rng(seed + 7919 * len(shape))
    dt = numpy.dtype(dtype)
    if dt.kind in "iu":
        info = numpy.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    a = rng.standard_normal(shape)
    if dt.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dt)


def block(a, dist_len, c):
    """Rank c.rank's block of a's outermost dimension, as BlockDistribution splits rows."""
    d = tessera.BlockDistribution((dist_len, 1), c.size)
    return a[d.begin(c.rank):d.end(c.rank)]


CASES = [
    ((5, 3, 7), (2, 0, 1)),
    ((5, 3, 7), (1, 2, 0)),
    ((5, 3, 7), (0, 2, 1)),   # no exchange: the outermost dimension stays
    ((2, 9, 4), (2, 1, 0)),   # an outermost dimension shorter than the rank count
    ((1, 4, 3), (1, 0, 2)),
    ((13,), (0,)),
    ((6, 11), (1, 0)),
    ((3, 1, 4, 5), (3, 1, 0, 2)),
    ((2, 3, 2, 3, 2), (4, 0, 3, 1, 2)),
    ((0, 3, 2), (2, 0, 1)),
]


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32, numpy.complex128,
                                   numpy.int8, numpy.uint16, numpy.int64])
def test_plan_matches_numpy_transpose(dtype):
    for c in communicators():
        if c is None:
            continue
        for seed, (shape, axes) in enumerate(CASES):
            a = array(shape, dtype, seed)
            want = numpy.transpose(a, axes)
            plan = tessera.PermutePlan(shape, axes, dtype, c)
            assert plan.input_shape == shape and plan.output_shape == want.shape
            assert plan.axes == axes and plan.dtype == numpy.dtype(dtype)
            got = plan.execute(numpy.ascontiguousarray(a[plan.input_slice]))
            assert got.dtype == numpy.dtype(dtype)
            assert got.shape == plan.output_block_shape
            numpy.testing.assert_array_equal(got, want[plan.output_slice],
                                             err_msg=f"{shape} {axes} on {c.size} ranks")
            numpy.testing.assert_array_equal(got, block(want, want.shape[0], c))


def test_permute_function_infers_the_global_shape():
    for c in communicators():
        if c is None:
            continue
        a = array((7, 4, 3, 2), numpy.float64)
        mine = numpy.ascontiguousarray(block(a, 7, c))
        for axes in [(3, 2, 1, 0), (1, 0, 3, 2), (2, 3, 0, 1), None, (-1, 0, 1, 2)]:
            want = numpy.transpose(a, axes)
            got = tessera.permute(mine, axes, comm=c)
            numpy.testing.assert_array_equal(got, block(want, want.shape[0], c))
        # The same with the shape given, and into out=.
        out = numpy.full(block(a.transpose(2, 0, 1, 3), 3, c).shape, -1.0)
        assert tessera.permute(mine, (2, 0, 1, 3), global_shape=a.shape, comm=c, out=out) is out
        numpy.testing.assert_array_equal(out, block(a.transpose(2, 0, 1, 3), 3, c))


def test_repeated_executes():
    shape, axes = (9, 5, 4), (1, 2, 0)
    plan = tessera.PermutePlan(shape, axes, numpy.float32, comm)
    for seed in range(3):
        a = array(shape, numpy.float32, seed)
        numpy.testing.assert_array_equal(plan.execute(a[plan.input_slice]),
                                         a.transpose(axes)[plan.output_slice])


def test_bad_arguments_raise_on_every_rank():
    shape, axes = (6, 4, 5), (2, 0, 1)
    a = array(shape, numpy.float64)
    plan = tessera.PermutePlan(shape, axes, numpy.float64, comm)
    mine = a[plan.input_slice]
    bad = comm.size - 1
    # One rank's block has the wrong shape, or the wrong dtype: every rank raises, naming it.
    wrong = numpy.zeros((mine.shape[0] + 1,) + mine.shape[1:]) if comm.rank == bad else mine
    expected = "input block must have shape" if comm.rank == bad else f"rank {bad}: "
    with pytest.raises(tessera.InputError, match=expected):
        plan.execute(wrong)
    wrong = mine.astype(numpy.float32) if comm.rank == bad else mine
    with pytest.raises(tessera.InputError, match="float64" if comm.rank == bad else
                       f"rank {bad}: "):
        plan.execute(wrong)
    with pytest.raises(tessera.InputError, match="C-contiguous"):
        plan.execute(numpy.zeros(mine.shape[::-1]).T)  # (rows, 4, 5) in Fortran order
    with pytest.raises(tessera.InputError, match="out must have shape"):
        plan.execute(mine, out=numpy.zeros(plan.output_block_shape + (1,)))
    # Nobody was left inside a collective: the plan still works.
    numpy.testing.assert_array_equal(plan.execute(mine), a.transpose(axes)[plan.output_slice])
    with pytest.raises(tessera.InputError, match="given twice"):
        tessera.PermutePlan(shape, (0, 0, 1), numpy.float64, comm)
    with pytest.raises(tessera.InputError, match="is not one tessera handles"):
        tessera.PermutePlan(shape, axes, numpy.float16, comm)
    # permute(): blocks of different dtypes, or that are not arrays, raise everywhere.
    odd = mine.astype(numpy.float32) if comm.rank == bad and comm.size > 1 else mine
    if comm.size > 1:
        with pytest.raises(tessera.InputError, match="different dtypes"):
            tessera.permute(odd, axes)
    with pytest.raises(tessera.InputError, match="numpy array or a device array.*list|rank"):
        tessera.permute(mine.tolist() if comm.rank == bad else mine, axes)
