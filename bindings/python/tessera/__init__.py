"""tessera: distributed transpose, reductions, HDF5 block I/O and the heat2d solver.

Communicators are mpi4py communicators; blocks are numpy arrays (C-contiguous, this rank's
rows) or, for the plans on the CUDA backend, device arrays (CuPy, or any object exposing the
__cuda_array_interface__). Every call that takes a communicator is collective over it. Errors
raise tessera.Error (InputError for bad arguments, IoError, MpiError, ...) with tessera's message.

    from mpi4py import MPI
    import numpy, tessera
    comm = MPI.COMM_WORLD
    dist = tessera.BlockDistribution((M, N), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    at_rows = tessera.TransposePlan(dist, numpy.float64, comm).execute(a[b:e])
    r = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum", "norm2"]).execute(a[b:e])
"""

from mpi4py import MPI as _MPI  # loads libmpi for the whole process first

from . import _tessera
from ._tessera import (BlockDistribution, Error, Heat2dSettings, InputError, IoError, MpiError,
                       NotCompiled, ResourceError, set_log_level, version)

__all__ = ["BlockDistribution", "TransposePlan", "ReducePlan", "read_rows", "write_rows",
           "inspect", "transpose_out_of_core", "reduce_out_of_core", "Heat2dSolver",
           "Heat2dSettings", "Error", "InputError", "IoError", "MpiError", "NotCompiled",
           "ResourceError", "set_log_level", "version"]
__version__ = version()


def _handle(comm):
    if not isinstance(comm, _MPI.Comm):
        raise InputError(f"comm must be an mpi4py communicator, got {type(comm).__name__}")
    return comm.py2f()


def _ops(ops):
    """The reductions asked for: a list of names, or one string "sum,max" as on the command
    line (a string is not iterated letter by letter)."""
    if isinstance(ops, str):
        return [o.strip() for o in ops.split(",") if o.strip()]
    return list(ops)


class TransposePlan(_tessera.TransposePlan):
    """Distributed transpose: execute(rows of A) returns this rank's rows of A.T (a new array),
    or writes them into out= and returns out.

    The block is a numpy array, or on a plan whose backend is "cuda" a device array (any object
    exposing the __cuda_array_interface__): then the result is a new cupy.ndarray, or out= (a
    writable device array: Numba and PyTorch arrays without CuPy). Device arrays run a second,
    device-memory plan built on the first execute that gets one. Building it is collective, so
    every rank must pass the same kind of array (numpy or device) to a given execute, as with
    any collective call. A device array's work must be done or on a default stream (the
    execute waits for the legacy default stream); one on another stream is synchronized first
    (through CuPy: without it, synchronize the stream yourself)."""

    def __init__(self, dist, dtype, comm, backend="auto", exchange="auto"):
        super().__init__(dist, dtype, _handle(comm), backend, exchange)
        self._comm = comm  # the device plan, built later, is built over it


class ReducePlan(_tessera.ReducePlan):
    """Distributed reductions: execute(rows) returns {op: value} (axis "all") or {op: array}
    (axis "rows" or "cols"), the same on every rank and the same bits as the C++ plans. `ops` is
    a list of names (["sum", "max"]) or one comma-separated string ("sum,max").

    On a plan whose backend is "cuda" the block may be a device array (__cuda_array_interface__)
    instead, under TransposePlan's rules (every rank passes the same kind of array); the values
    are host values all the same, the same bits as for that data in a numpy array."""

    def __init__(self, dist, dtype, comm, ops=("sum",), axis="all", backend="auto",
                 skip_nan=False):
        """skip_nan: NaN elements are missing (numpy's nansum, nanmax, …); host arrays only."""
        super().__init__(dist, dtype, _handle(comm), _ops(ops), axis, backend, skip_nan)
        self._comm = comm  # the device plan, built later, is built over it


def read_rows(file, dataset, dist, dtype, comm):
    """This rank's rows of a 2-D HDF5 dataset, as a new array of `dtype`."""
    return _tessera.h5_read_rows(file, dataset, dist, dtype, _handle(comm))


def write_rows(file, dataset, dist, block, comm):
    """Creates `file` holding `dataset` of dist.shape; every rank writes its rows `block`."""
    _tessera.h5_write_rows(file, dataset, dist, block, _handle(comm))


def inspect(file, dataset, comm):
    """(shape, numpy dtype) of a 2-D HDF5 dataset."""
    return _tessera.h5_inspect(file, dataset, _handle(comm))


def transpose_out_of_core(in_file, in_dataset, out_file, out_dataset, comm, memory_limit=0,
                          backend="auto"):
    """Streams the transpose of a dataset into a new file (needs MPI_THREAD_MULTIPLE)."""
    _tessera.transpose_out_of_core(in_file, in_dataset, out_file, out_dataset, _handle(comm),
                                   memory_limit, backend)


def reduce_out_of_core(file, dataset, comm, ops=("sum",), axis="all", memory_limit=0,
                       backend="auto", keep_nan=False):
    """Streamed reductions of a dataset (needs MPI_THREAD_MULTIPLE); as ReducePlan.execute.
    Elements named by the dataset's _FillValue or missing_value are skipped, packed data
    (scale_factor, add_offset) is decoded, and NaN is skipped unless keep_nan."""
    return _tessera.reduce_out_of_core(file, dataset, _handle(comm), _ops(ops), axis,
                                       memory_limit, backend, keep_nan)


class Heat2dSolver(_tessera.Heat2dSolver):
    """The heat2d ADI solver: Heat2dSolver(comm, nx=…, ny=…, dt=…, …); step(n); read_field()
    returns this rank's rows of u[ny][nx] (rows layout.begin(rank) … layout.end(rank))."""

    def __init__(self, comm, settings=None, **kwargs):
        s = settings if settings is not None else Heat2dSettings()
        for key, value in kwargs.items():
            if not hasattr(s, key):
                raise InputError(f"Heat2dSolver: unknown setting '{key}'")
            setattr(s, key, value)
        super().__init__(_handle(comm), s)
