# tessera.ReducePlan over a tessera.Layout against the plan over the same matrix in row blocks,
# bit for bit, under mpirun as the other tests of this folder (every rank runs every test, in the
# same order):
#   mpirun -np 4 python3 -m pytest -q bindings/python/tests/test_reduce_layout.py
# Each test also runs on the sub-communicators of the first 1, 2, … ranks.
import numpy
import pytest
from mpi4py import MPI

import tessera
from test_redistribute import on_each_communicator, random_layout

comm = MPI.COMM_WORLD
OPS = ["sum", "mean", "norm2", "min", "max"]
AXES = ["all", "rows", "cols"]


def matrix(shape, dtype, rng):
    """Values over many binades: any other order of additions changes the bits."""
    return numpy.ldexp(rng.uniform(-1, 1, size=shape), rng.integers(-20, 21, size=shape)) \
        .astype(dtype)


def assert_same_bits(got, want):
    assert got.keys() == want.keys()
    for op in want:
        g, w = numpy.asarray(got[op]), numpy.asarray(want[op])
        assert g.shape == w.shape, op
        assert g.tobytes() == w.tobytes(), f"{op}: {g} != {w}"


def check(layout, a, axis, **kwargs):
    """The plan over `layout` and over row blocks, on this rank's parts of the global `a`."""
    c = layout.comm
    m, n = layout.shape
    dist = tessera.BlockDistribution((m, n), c.size)
    rows = a[dist.begin(c.rank):dist.end(c.rank)]
    want = tessera.ReducePlan(dist, a.dtype, c, ops=OPS, axis=axis, backend="cpu",
                              **kwargs).execute(rows)
    block = layout.local_block(a)
    plan = tessera.ReducePlan(layout, a.dtype, ops=OPS, axis=axis, backend="cpu", **kwargs)
    assert_same_bits(plan.execute(block), want)
    # A rank that holds nothing may pass None (execute is collective: all ranks run it again).
    if c.allreduce(block.size == 0, op=MPI.LOR):
        assert_same_bits(plan.execute(None if block.size == 0 else block), want)


@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
def test_random_layouts(dtype):
    seed = comm.bcast(numpy.random.SeedSequence().entropy)

    def body(c):
        rng = numpy.random.default_rng(seed)
        for k in range(24):
            shape = (int(rng.integers(1, 40)), int(rng.integers(1, 40)))
            layout = random_layout(rng, shape, c)
            check(layout, matrix(shape, dtype, rng), AXES[k % 3])

    on_each_communicator(body)


def test_named_layouts():
    seed = comm.bcast(numpy.random.SeedSequence().entropy)

    def body(c):
        rng = numpy.random.default_rng(seed)
        m, n = 67, 45
        a = matrix((m, n), numpy.float64, rng)
        layouts = [tessera.Layout.rows(m, n, c), tessera.Layout.rows(m, n, c, order="F"),
                   tessera.Layout.cols(m, n, c)]
        for pr in range(1, 4):
            for pc in range(1, 4):
                if pr * pc > c.size or pr * pc > 6:
                    continue
                layouts.append(tessera.Layout.grid2d(m, n, pr, pc, c))
                for nb in (1, 3, 64):
                    layouts.append(tessera.Layout.block_cyclic(m, n, nb, nb, pr, pc, c))
        for layout in layouts:
            for axis in AXES:
                check(layout, a, axis)

    on_each_communicator(body)


def test_skips_nan_as_row_blocks_do():
    seed = comm.bcast(numpy.random.SeedSequence().entropy)

    def body(c):
        rng = numpy.random.default_rng(seed)
        a = matrix((30, 41), numpy.float64, rng)
        a[rng.random(a.shape) < 0.1] = numpy.nan
        layout = tessera.Layout.block_cyclic(30, 41, 4, 3, 1, c.size, c)
        for axis in AXES:
            check(layout, a, axis, skip_nan=True)

    on_each_communicator(body)


def test_rejects_what_it_cannot_reduce():
    def body(c):
        layout = tessera.Layout.cols(6, 5, c, order="F")
        plan = tessera.ReducePlan(layout, numpy.float64, c, ops="sum")
        a = numpy.ones((6, 5))
        assert plan.execute(layout.local_block(a)) == {"sum": 30.0}
        # The wrong shape on the last rank only: every rank raises, the others naming it.
        block = layout.local_block(a)
        if c.rank == c.size - 1:
            block = numpy.ones((7, 7))
        with pytest.raises(tessera.InputError, match="shape"):
            plan.execute(block)
        # C order where the layout says Fortran order (a 2 x 2 block: the order shows).
        square = tessera.Layout.grid([0, 2], [0, 2], [0], c, order="F")
        sq = tessera.ReducePlan(square, numpy.float64, ops="sum")
        with pytest.raises(tessera.InputError, match="Fortran"):
            sq.execute(numpy.ones((2, 2)) if c.rank == 0 else None)
        if c.size > 1:
            with pytest.raises(tessera.InputError, match="communicator"):
                tessera.ReducePlan(layout, numpy.float64, MPI.COMM_SELF, ops="sum")
        with pytest.raises(tessera.InputError):
            tessera.ReducePlan(layout, numpy.complex128, ops="sum")

    on_each_communicator(body)
