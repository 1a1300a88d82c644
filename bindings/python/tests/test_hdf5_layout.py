# tessera.read_hdf5 and tessera.write_hdf5 against h5py: a matrix h5py wrote is read into random
# layouts and compared with numpy's slicing of it; each local block written back is read by h5py
# and compared with the matrix. Under mpirun as the other tests of this folder:
#   mpirun -np 4 python3 -m pytest -q bindings/python/tests/test_hdf5_layout.py
import os
import shutil
import tempfile

import numpy
import pytest
from mpi4py import MPI

import tessera
from test_redistribute import DTYPES, matrix, on_each_communicator, random_layout

h5py = pytest.importorskip("h5py")

comm = MPI.COMM_WORLD


@pytest.fixture
def tmpdir_shared():
    """A directory every rank sees, made and removed by rank 0."""
    path = comm.bcast(tempfile.mkdtemp(prefix="tessera-pyh5-") if comm.rank == 0 else None)
    yield path
    comm.Barrier()
    if comm.rank == 0:
        shutil.rmtree(path, ignore_errors=True)


def h5py_write(c, path, name, a):
    if c.rank == 0:
        with h5py.File(path, "w") as h:
            h[name] = a
    c.Barrier()


def h5py_matches(c, path, name, a):
    """Whether h5py reads `a` back (rank 0 reads; every rank gets the answer)."""
    same = None
    if c.rank == 0:
        with h5py.File(path, "r") as h:
            back = h[name][...]
        same = back.dtype == a.dtype and numpy.array_equal(back, a)
    return c.bcast(same)


def holds(layout, block, a):
    """Whether this rank's local block holds its blocks of `a` (a grid layout's local block
    may have holes: elements of no block, which nothing reads or writes)."""
    for rows, cols, owner, (lr, lc) in layout.blocks():
        n_r, n_c = rows.stop - rows.start, cols.stop - cols.start
        if owner == layout.comm.rank and n_r > 0 and n_c > 0:
            if not numpy.array_equal(block[lr:lr + n_r, lc:lc + n_c], a[rows, cols]):
                return False
    return True


def test_random_layouts_against_h5py(tmpdir_shared):
    def body(c):
        rng = numpy.random.default_rng(4049 + c.size)
        base = os.path.join(tmpdir_shared, f"np{c.size}")
        for dtype in DTYPES[c.size % 2::2]:  # two each, every one over the sizes 1, 2, ...
            a = matrix((int(rng.integers(1, 12)), int(rng.integers(1, 10))), dtype, rng)
            h5py_write(c, base + "-in.h5", "/grp/A", a)
            for k in range(3):
                layout = random_layout(rng, a.shape, c)
                limit = 0 if k < 2 else int(a.itemsize * a.shape[1])  # slices of few rows
                got = tessera.read_hdf5(base + "-in.h5", "/grp/A", layout, memory_limit=limit)
                assert got.dtype == a.dtype
                assert all(c.allgather(holds(layout, got, a))), f"a wrong read into {layout!r}"
                tessera.write_hdf5(base + "-out.h5", "/B", got, layout, memory_limit=limit)
                assert h5py_matches(c, base + "-out.h5", "/B", a), repr(layout)

    on_each_communicator(body)


def test_read_converts_and_errors(tmpdir_shared):
    def body(c):
        rng = numpy.random.default_rng(7)
        path = os.path.join(tmpdir_shared, f"conv{c.size}.h5")
        a = matrix((5, 6), numpy.float64, rng)
        h5py_write(c, path, "/A", a)
        layout = tessera.Layout.block_cyclic(5, 6, 2, 2, 1, c.size, c, order="F")
        got = tessera.read_hdf5(path, "/A", layout, dtype=numpy.float32)
        assert all(c.allgather(holds(layout, got, a.astype(numpy.float32))))
        with pytest.raises(tessera.InputError, match="shape"):
            tessera.read_hdf5(path, "/A", tessera.Layout.rows(5, 7, c))
        with pytest.raises(tessera.InputError, match="tessera.Layout"):
            tessera.write_hdf5(path, "/A", got, "rows")
        # A wrong block on one rank raises on every rank.
        wrong = got if c.rank != 0 else numpy.zeros((1, 1), numpy.float32)
        with pytest.raises(tessera.InputError):
            tessera.write_hdf5(path + ".w", "/A", wrong, layout)

    on_each_communicator(body)
