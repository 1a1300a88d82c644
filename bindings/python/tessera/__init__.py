"""tessera: distributed transpose, permutations of dimensions, reductions, HDF5 block I/O and
the heat2d solver.

Communicators are mpi4py communicators; blocks are numpy arrays (C-contiguous, this rank's
rows, or its indices of an N-D array's outermost dimension) or, for the plans on the CUDA
backend, device arrays (CuPy, or any object exposing the __cuda_array_interface__). Every call
that takes a communicator is collective over it. Errors raise tessera.Error (InputError for bad
arguments, IoError, MpiError, ...) with tessera's message.

    from mpi4py import MPI
    import numpy, tessera
    comm = MPI.COMM_WORLD
    dist = tessera.BlockDistribution((M, N), comm.size)
    b, e = dist.begin(comm.rank), dist.end(comm.rank)
    at_rows = tessera.TransposePlan(dist, numpy.float64, comm).execute(a[b:e])
    r = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum", "norm2"]).execute(a[b:e])
    plan = tessera.PermutePlan(x.shape, (2, 0, 1), x.dtype, comm)   # x: a 3-D array
    y_block = plan.execute(x[plan.input_slice])   # this rank's block of x.transpose(2, 0, 1)
    cyclic = tessera.Layout.block_cyclic(M, N, 32, 32, 2, 2, comm)   # ScaLAPACK's, 2 x 2 grid
    b = tessera.redistribute(a_rows, tessera.Layout.rows(M, N, comm), cyclic, op="T")
    s = tessera.ReducePlan(cyclic, numpy.float64, ops="sum,max").execute(b)  # any layout
"""

import numpy as _numpy
from mpi4py import MPI as _MPI  # loads libmpi for the whole process first

from . import _tessera
from ._tessera import (BlockDistribution, Error, Heat2dSettings, InputError, IoError, MpiError,
                       NotCompiled, ResourceError, set_log_level, version)

__all__ = ["BlockDistribution", "TransposePlan", "ReducePlan", "PermutePlan", "permute",
           "Layout", "RedistributePlan", "redistribute",
           "read_rows", "write_rows", "read_hdf5", "write_hdf5",
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

    `dist` is a BlockDistribution (execute takes this rank's rows) or a tessera.Layout of any
    kind (execute takes this rank's local block of it, as layout.local_block gives it; None or
    an empty array where the rank holds nothing): the same bits as over the same matrix in row
    blocks. Over a layout, comm may be left out (the layout's), and each execute redistributes
    the matrix to row blocks: the plan holds one row block (about m / ranks x n elements) and
    the redistribution's send and receive buffers (what travels: at most the local block out,
    the row block in), except for Layout.rows with order "C", which is reduced where it is.

    On a plan over a BlockDistribution whose backend is "cuda" the block may be a device array
    (__cuda_array_interface__) instead, under TransposePlan's rules (every rank passes the same
    kind of array); the values are host values all the same, the same bits as for that data in a
    numpy array. A plan over a layout takes numpy arrays (on "cuda", the GPU reduces the row
    block from host memory)."""

    def __init__(self, dist, dtype, comm=None, ops=("sum",), axis="all", backend="auto",
                 skip_nan=False):
        """skip_nan: NaN elements are missing (numpy's nansum, nanmax, …); host arrays only."""
        if isinstance(dist, Layout):
            if comm is None:
                comm = dist.comm
            elif _handle(comm) and _MPI.Comm.Compare(comm, dist.comm) not in (_MPI.IDENT, _MPI.CONGRUENT):
                raise InputError("comm is not the layout's communicator: leave it out")
            dist = dist._layout
        elif comm is None:
            raise InputError("comm is needed with a BlockDistribution (only a tessera.Layout "
                             "carries its communicator)")
        super().__init__(dist, dtype, _handle(comm), _ops(ops), axis, backend, skip_nan)
        self._comm = comm  # the device plan, built later, is built over it


def _axes(axes, ndim):
    """numpy.transpose's axes: None reverses the dimensions, a negative axis counts from the
    end (tessera checks the rest: each dimension named once)."""
    if axes is None:
        return list(range(ndim - 1, -1, -1))
    return [int(a) + ndim if int(a) < 0 else int(a) for a in axes]


class PermutePlan(_tessera.PermutePlan):
    """Distributed permutation of dimensions: the N-D array of global shape `shape` (rank 1 to
    8), split along its outermost dimension over the ranks, becomes numpy.transpose(a, axes),
    split along its own outermost dimension. Both splits are BlockDistribution's: a rank's
    input block is a[plan.input_slice] (shape plan.input_block_shape), its output block
    numpy.transpose(a, axes)[plan.output_slice] (plan.output_block_shape). Any dtype numpy and
    tessera share: float32/64, complex64/128, signed and unsigned integers of 8 to 64 bits.

    execute(block) returns this rank's output block (a new array), or writes it into out= and
    returns out. On a plan whose backend is "cuda" the block may be a device array, under
    TransposePlan's rules: the result is then a new cupy.ndarray or out= (a writable device
    array), and every rank passes the same kind of array to a given execute."""

    def __init__(self, shape, axes=None, dtype=_numpy.float64, comm=None, backend="auto"):
        """axes as numpy.transpose takes them (None: reversed); comm: MPI.COMM_WORLD if None."""
        comm = _MPI.COMM_WORLD if comm is None else comm
        shape = [int(n) for n in shape]
        super().__init__(shape, _axes(axes, len(shape)), dtype, _handle(comm), backend, False)
        self._comm = comm  # the device plan, built later, is built over it


def _block_info(block):
    """(shape, dtype name, whether on the device) of a block, or an InputError."""
    cai = getattr(block, "__cuda_array_interface__", None)
    if cai is not None:
        if not isinstance(cai, dict) or "shape" not in cai or "typestr" not in cai:
            raise InputError("the block's __cuda_array_interface__ has no shape or typestr")
        shape, dtype, device = tuple(cai["shape"]), _numpy.dtype(cai["typestr"]), True
    elif isinstance(block, _numpy.ndarray):
        shape, dtype, device = block.shape, block.dtype, False
    else:
        raise InputError("the block must be a numpy array or a device array "
                         f"(__cuda_array_interface__), got {type(block).__name__}")
    if not shape:
        raise InputError("the block must have at least one dimension, got a 0-d array")
    return tuple(int(n) for n in shape), dtype.str, device


def permute(block, axes=None, global_shape=None, comm=None, backend="auto", out=None):
    """This rank's block of numpy.transpose(a, axes) (axes as numpy takes them), where `block` is this rank's block of the
    N-D array `a` split along its outermost dimension over `comm` (default MPI.COMM_WORLD) as
    BlockDistribution splits rows; the result is split the same way along its own outermost
    dimension. Without global_shape, a's shape is the blocks' shape with their outermost lengths
    summed over the ranks. A numpy block gives a numpy array, a device array (CuPy, or any
    __cuda_array_interface__) a CuPy array, or out= when given. Collective: every rank passes
    the same axes and the same kind of array. Builds a plan each call: for repeated
    permutations of one shape, a PermutePlan does the setup once."""
    comm = _MPI.COMM_WORLD if comm is None else comm
    handle = _handle(comm)
    # What every rank holds, gathered first, so that a rank with a bad block raises on every
    # rank instead of leaving the others in the collective calls that follow.
    try:
        mine = (_block_info(block), None)
    except Error as e:
        mine = (None, str(e))
    except Exception as e:  # numpy.dtype on a foreign typestr, say
        mine = (None, f"the block cannot be read: {e}")
    gathered = comm.allgather(mine)
    for r, (_, message) in enumerate(gathered):
        if message is not None:
            raise InputError(message if r == comm.rank else f"rank {r}: {message}")
    infos = [info for info, _ in gathered]
    if len({device for _, _, device in infos}) > 1:
        raise InputError("the ranks passed different kinds of arrays (numpy on some, device "
                         "arrays on others): pass the same kind on every rank")
    if len({dtype for _, dtype, _ in infos}) > 1:
        raise InputError("the ranks' blocks have different dtypes: " +
                         ", ".join(f"rank {r}: {_numpy.dtype(d)}" for r, (_, d, _) in
                                   enumerate(infos)))
    if global_shape is None:
        if len({shape[1:] for shape, _, _ in infos}) > 1:
            raise InputError("the ranks' blocks differ beyond their outermost dimension: " +
                             ", ".join(f"rank {r}: {s}" for r, (s, _, _) in enumerate(infos)) +
                             "; pass global_shape, or blocks of one array")
        global_shape = (sum(s[0] for s, _, _ in infos),) + infos[0][0][1:]
    _, dtype, device = infos[comm.rank]
    global_shape = [int(n) for n in global_shape]
    plan = _tessera.PermutePlan(global_shape, _axes(axes, len(global_shape)), _numpy.dtype(dtype),
                                handle, backend, device)
    return plan.execute(block, out)


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


# --- Layouts and redistribution ---------------------------------------------------------------


def _comm_and_size(comm):
    """(the mpi4py communicator, its size)."""
    _handle(comm)
    return comm, comm.size


class Layout:
    """Which rank holds which part of a global m x n matrix, and where in its local block:
    row blocks, column blocks, 2-D blocks, ScaLAPACK's 2-D block-cyclic or any grid of blocks
    with an owner each. A layout belongs to a communicator (an mpi4py one) and is a value:
    building it is local, no communication.

    A rank's local block is a 2-D numpy array of layout.local_shape(rank), holding the blocks
    it owns (block rows and block columns in global order: for block-cyclic layouts exactly
    ScaLAPACK's local matrix), C-ordered when layout.order is "C", Fortran-ordered when "F"
    (ScaLAPACK's), and with a leading dimension larger than the tight one (lld=) a view into a
    padded buffer: layout.empty(dtype) makes one, layout.local_block(a) fills one from a
    global array."""

    def __init__(self, layout, comm):
        """Use the constructors below (Layout.rows, .cols, .grid2d, .block_cyclic,
        .from_descriptor, .grid)."""
        self._layout = layout
        self.comm = comm

    @staticmethod
    def rows(m, n, comm, order="C"):
        """Rows split evenly over the ranks (BlockDistribution's split)."""
        comm, size = _comm_and_size(comm)
        return Layout(_tessera.Layout.rows(m, n, size, order), comm)

    @staticmethod
    def cols(m, n, comm, order="C"):
        """Columns split evenly over the ranks."""
        comm, size = _comm_and_size(comm)
        return Layout(_tessera.Layout.cols(m, n, size, order), comm)

    @staticmethod
    def grid2d(m, n, pr, pc, comm, grid_order="row", order="C"):
        """One block per rank of a pr x pc grid: rows split evenly over pr, columns over pc.
        grid_order "row" gives rank p * pc + q to grid position (p, q), "col" q * pr + p; ranks
        beyond pr * pc hold nothing."""
        comm, size = _comm_and_size(comm)
        return Layout(_tessera.Layout.grid2d(m, n, pr, pc, size, grid_order, order), comm)

    @staticmethod
    def block_cyclic(m, n, mb, nb, pr, pc, comm, rsrc=0, csrc=0, grid_order="row",
                     grid_ranks=None, lld=0, order="F"):
        """2-D block-cyclic, as ScaLAPACK: mb x nb blocks dealt over a pr x pc grid from grid
        position (rsrc, csrc). grid_ranks[p * pc + q], when given, is the rank at grid position
        (p, q) (else grid_order says). lld: this rank's leading dimension (0: tight); local
        blocks are Fortran-ordered unless order="C"."""
        comm, size = _comm_and_size(comm)
        return Layout(_tessera.Layout.block_cyclic(m, n, mb, nb, pr, pc, size, rsrc, csrc,
                                                   grid_order, list(grid_ranks or []), lld,
                                                   order), comm)

    @staticmethod
    def from_descriptor(desc, nprow, npcol, comm, grid_order="row", grid_ranks=None):
        """The layout a ScaLAPACK descriptor desc[9] (dtype 1, ctxt, m, n, mb, nb, rsrc, csrc,
        lld) describes on an nprow x npcol BLACS grid: Fortran-ordered local blocks with
        leading dimension desc[8] (this rank's)."""
        comm, size = _comm_and_size(comm)
        return Layout(_tessera.Layout.from_descriptor([int(d) for d in desc], nprow, npcol, size,
                                                      grid_order, list(grid_ranks or [])), comm)

    @staticmethod
    def grid(row_splits, col_splits, owners, comm, order="C", lld=0):
        """Any grid of blocks: split points 0 = r_0 <= r_1 <= ... <= m (columns likewise) and
        owners[bi][bj] (or flat, block-row-major) the rank holding block (bi, bj)."""
        comm, size = _comm_and_size(comm)
        flat = [int(o) for o in _numpy.asarray(owners).ravel()]
        return Layout(_tessera.Layout.grid([int(r) for r in row_splits],
                                           [int(c) for c in col_splits], flat, size, order, lld),
                      comm)

    @property
    def shape(self):
        return self._layout.shape

    @property
    def nranks(self):
        return self._layout.nranks

    @property
    def order(self):
        """"C" (row-major local blocks) or "F" (column-major)."""
        return self._layout.order

    def local_shape(self, rank=None):
        """The shape of rank's local block (default: this rank's); (0, 0) when it holds
        nothing."""
        return self._layout.local_shape(self.comm.rank if rank is None else rank)

    def leading_dimension(self, rank=None):
        return self._layout.leading_dimension(self.comm.rank if rank is None else rank)

    def locate(self, i, j):
        """(rank, local row, local column) of global element (i, j)."""
        return self._layout.locate(i, j)

    def blocks(self):
        """Every block of the layout's grid as (rows, cols, owner, (local row, local col)):
        global row and column slices, the rank holding it, where it starts in that rank's
        local block."""
        rs, cs = self._layout.row_splits, self._layout.col_splits
        for bi in range(len(rs) - 1):
            for bj in range(len(cs) - 1):
                yield (slice(rs[bi], rs[bi + 1]), slice(cs[bj], cs[bj + 1]),
                       self._layout.owner(bi, bj), self._layout.local_position(bi, bj))

    def empty(self, dtype, rank=None):
        """A new, uninitialised local block of rank (default: this rank)."""
        return self._layout.empty(self.comm.rank if rank is None else rank, dtype)

    def local_block(self, a, rank=None):
        """Rank's local block (default: this rank's) of the global matrix `a`, a copy."""
        a = _numpy.asarray(a)
        if a.shape != self.shape:
            raise InputError(f"the global matrix has shape {a.shape}, the layout {self.shape}")
        rank = self.comm.rank if rank is None else rank
        out = self.empty(a.dtype, rank)
        for rows, cols, owner, (lr, lc) in self.blocks():
            n_r, n_c = rows.stop - rows.start, cols.stop - cols.start
            if owner == rank and n_r > 0 and n_c > 0:
                out[lr:lr + n_r, lc:lc + n_c] = a[rows, cols]
        return out

    def transposed(self):
        """The layout of A.T over the same local blocks (a C-ordered block read as Fortran
        order is its transpose)."""
        return Layout(self._layout.transposed(), self.comm)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._layout == other._layout

    def __repr__(self):
        return repr(self._layout)


def _corner(c, name):
    try:
        i, j = (int(x) for x in c)
    except Exception:
        raise InputError(f"{name} must be a pair of indices (row, column), got {c!r}") from None
    return i, j


class RedistributePlan(_tessera.RedistributePlan):
    """B = beta * B + alpha * op(A) from one layout to another, built once (collectively over
    the layouts' communicator) and executed many times: execute(a_local) returns this rank's
    local block of B (a new array, in B's layout's order), or updates out= and returns it.

    op: "N", "T" (transpose) or "C" (conjugate transpose, "H" also). Sub-matrices as ScaLAPACK
    takes them, 0-based: B[b_corner[0] : + shape[0], b_corner[1] : + shape[1]] and the matching
    part of A from a_corner (shape, or its transpose under op "T"/"C"); shape None: the whole
    of B from its corner. dtype: float32, float64, complex64 or complex128.

    relabel=True lets the plan write B with its owners permuted, so that each rank keeps as much
    of op(A) as it can (a layout differing from A's by a permutation of ranks then moves
    nothing): plan.target is the layout execute writes (out= must be its local block) and
    plan.relabelling[r] the rank that holds there what to_layout gives rank r. Only for the
    whole of B, with beta = 0.

    max_buffer_bytes bounds the send plus receive buffers on this rank (0: the larger of its
    local blocks of A and of B); the exchange goes in rounds where it needs more (see
    plan.traffic's buffer_bytes and rounds).

    Device arrays (CuPy, or anything with __cuda_array_interface__) are redistributed on the
    GPU, with the same bits as numpy arrays on the CPU: pass them to execute (a and out both
    on the device; a rank holding nothing may pass None), tight local blocks in the layout's
    order (C for "C" layouts, Fortran for "F" ones, no padding). The plan for them is built on
    the first such execute, collectively. backend: "auto" (numpy arrays on the CPU, device
    arrays on the GPU), "cpu" (numpy arrays only) or "cuda"; plan.backend is what numpy arrays
    run on (numpy arrays always take the CPU path, also on "cuda")."""

    def __init__(self, from_layout, to_layout, dtype, op="N", a_corner=(0, 0), b_corner=(0, 0),
                 shape=None, relabel=False, max_buffer_bytes=0, backend="auto"):
        if not isinstance(from_layout, Layout) or not isinstance(to_layout, Layout):
            raise InputError("from_layout and to_layout must be tessera.Layout objects")
        comm = from_layout.comm
        if shape is not None:
            shape = _corner(shape, "shape")
        super().__init__(from_layout._layout, to_layout._layout, dtype, op,
                         _corner(a_corner, "a_corner"), _corner(b_corner, "b_corner"), shape,
                         bool(relabel), int(max_buffer_bytes), str(backend), _handle(comm))
        self._comm = comm
        self.from_layout, self.to_layout = from_layout, to_layout

    @property
    def target(self):
        """The layout execute writes B in: to_layout, or relabelled (relabel=True)."""
        return Layout(super().target, self._comm)

    @property
    def relabelling(self):
        """relabelling[r]: the rank holding, in target, what to_layout gives rank r (the
        identity without relabel)."""
        return list(super().relabelling)

    def execute(self, a, out=None, alpha=1, beta=0):
        """alpha, beta: numbers (complex for complex dtypes); beta != 0 reads out=, which it
        then needs; beta = 0 never reads it (it may hold NaN). A rank that holds nothing may
        pass None (or any empty array). Device arrays give a device array (a new CuPy array
        without out=)."""
        return super().execute(a, out, complex(alpha), complex(beta))


def redistribute(a, from_layout, to_layout, op="N", alpha=1, beta=0, out=None, a_corner=(0, 0),
                 b_corner=(0, 0), shape=None):
    """This rank's local block of B = beta * B + alpha * op(A), where `a` is this rank's local
    block of A in from_layout and B is in to_layout (see RedistributePlan for op and the
    sub-matrices). Collective over the layouts' communicator: every rank passes the same
    layouts and arrays of one dtype. Builds a plan each call: for repeated redistributions of
    one pair of layouts, a RedistributePlan does the setup once."""
    if not isinstance(from_layout, Layout) or not isinstance(to_layout, Layout):
        raise InputError("from_layout and to_layout must be tessera.Layout objects")
    comm = from_layout.comm
    # The dtype from the arrays, agreed by every rank first (a rank that holds nothing may pass
    # None), so that a wrong array on one rank raises everywhere instead of leaving the others
    # in the collective calls that follow.
    full, any_, message = None, None, None  # dtype of a non-empty array, of any array
    for name, x in (("a", a), ("out", out)):
        if x is None:
            continue
        if not isinstance(x, _numpy.ndarray):
            message = f"{name} must be a numpy array, got {type(x).__name__}"
            continue
        any_ = any_ or x.dtype.str
        if x.size > 0:
            full = full or x.dtype.str
    gathered = comm.allgather((full, any_, message))
    for r, (_, _, m) in enumerate(gathered):
        if m is not None:
            raise InputError(m if r == comm.rank else f"rank {r}: {m}")
    # Empty arrays (ranks that hold nothing) have no say unless every array is empty.
    dtypes = {_numpy.dtype(f) for f, _, _ in gathered if f is not None} or \
        {_numpy.dtype(d) for _, d, _ in gathered if d is not None}
    if not dtypes:
        raise InputError("no rank passed an array: the dtype is unknown")
    if len(dtypes) > 1:
        raise InputError("the ranks' arrays have different dtypes: " +
                         ", ".join(sorted(str(d) for d in dtypes)))
    plan = RedistributePlan(from_layout, to_layout, dtypes.pop(), op, a_corner, b_corner, shape)
    return plan.execute(a, out, alpha, beta)


# --- HDF5 datasets in any layout --------------------------------------------------------------


def read_hdf5(file, dataset, layout, dtype=None, memory_limit=0):
    """This rank's local block of `layout` (a new array, in the layout's order and leading
    dimension) read from a 2-D HDF5 dataset of layout.shape. Collective over layout.comm.
    dtype: the dataset's own when None (float32 <-> float64 and complex64 <-> complex128
    convert). The file is read in row blocks and redistributed: about three times
    m * n / ranks elements of extra memory per rank for a layout that spreads the matrix
    evenly, or about memory_limit bytes when > 0."""
    if not isinstance(layout, Layout):
        raise InputError("layout must be a tessera.Layout")
    handle = _handle(layout.comm)
    if dtype is None:
        dtype = _tessera.h5_inspect(file, dataset, handle)[1]
    return _tessera.h5_read_layout(file, dataset, layout._layout, _numpy.dtype(dtype),
                                   int(memory_limit), handle)


def write_hdf5(file, dataset, block, layout, memory_limit=0):
    """Creates `file` holding `dataset` of layout.shape, written from every rank's local block
    `block` of `layout` (None, or any empty array, where the rank holds nothing); an existing
    file is replaced once the new one is complete. Collective over layout.comm; every rank's
    block has one dtype. Memory as read_hdf5."""
    if not isinstance(layout, Layout):
        raise InputError("layout must be a tessera.Layout")
    comm = layout.comm
    handle = _handle(comm)
    # The dtype from the blocks, agreed by every rank first (ranks holding nothing have no say
    # unless all do), so that a wrong block on one rank raises everywhere.
    mine, message = None, None
    if block is not None and not isinstance(block, _numpy.ndarray):
        message = f"block must be a numpy array, got {type(block).__name__}"
    elif block is not None:
        mine = (block.size > 0, block.dtype.str)
    gathered = comm.allgather((mine, message))
    for r, (_, m) in enumerate(gathered):
        if m is not None:
            raise InputError(m if r == comm.rank else f"rank {r}: {m}")
    given = [x for x, _ in gathered if x is not None]
    dtypes = {d for full, d in given if full} or {d for _, d in given}
    if len(dtypes) != 1:
        raise InputError("no rank passed a block: the dtype is unknown" if not dtypes else
                         "the ranks' blocks have different dtypes: " + ", ".join(sorted(dtypes)))
    _tessera.h5_write_layout(file, dataset, block, layout._layout, _numpy.dtype(dtypes.pop()),
                             int(memory_limit), handle)
