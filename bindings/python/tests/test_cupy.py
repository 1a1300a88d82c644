# Device arrays (__cuda_array_interface__) in the Python module, under mpirun as test_tessera.py
# (every rank runs every test, in the same order):
#   mpirun -np 3 python3 -m pytest -q bindings/python/tests/test_cupy.py
# with PYTHONPATH holding the built package (BUILD/bindings/python). The tests marked needs_gpu
# need CuPy, a tessera built with CUDA and a GPU on every rank; the ranks decide together and
# skip them everywhere otherwise. The others need neither: they pass hand-made interfaces, which
# must be refused before any memory is touched.
import numpy
import pytest
from mpi4py import MPI

import tessera
from tessera import _tessera

comm = MPI.COMM_WORLD

try:
    import cupy
except ImportError:
    cupy = None


def _gpu_reason():
    """Why the GPU tests cannot run ("" when they can), the same on every rank."""
    try:
        local = cupy is not None and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # CuPy without a driver or a device raises its own errors
        local = False
    if not comm.allreduce(local, op=MPI.LAND):
        return "CuPy with a GPU is missing on some rank"
    # tessera binds each rank to GPU (node-local rank mod GPU count): the arrays go there too.
    count = cupy.cuda.runtime.getDeviceCount()
    cupy.cuda.Device(comm.Split_type(MPI.COMM_TYPE_SHARED).rank % count).use()
    # Collective (every rank gets here): "auto" resolves to cuda in a CUDA build with GPUs.
    probe = tessera.TransposePlan(tessera.BlockDistribution((2, 2), comm.size), "f64", comm)
    if not comm.allreduce(probe.backend == "cuda", op=MPI.LAND):
        return "this tessera has no usable CUDA backend on some rank"
    return ""


GPU_REASON = _gpu_reason()
needs_gpu = pytest.mark.skipif(GPU_REASON != "", reason=GPU_REASON)

DTYPES = [numpy.float32, numpy.float64, numpy.complex64, numpy.complex128]
TYPESTR = {numpy.float32: "<f4", numpy.float64: "<f8", numpy.complex64: "<c8",
           numpy.complex128: "<c16"}


def matrix(m, n, dtype):
    """The same pseudo-random m×n matrix on every rank (complex parts for complex dtypes)."""
    rng = numpy.random.default_rng(m * 1000 + n)
    a = rng.standard_normal((m, n))
    if numpy.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((m, n))
    return a.astype(dtype)


def rows_of(dist, a):
    return a[dist.begin(comm.rank):dist.end(comm.rank)]


class Interface:
    """Exposes a given __cuda_array_interface__ and nothing else: a foreign device array such as
    Numba's or PyTorch's, or a malformed one."""

    def __init__(self, **cai):
        self.__cuda_array_interface__ = cai


def fake(shape, typestr="<f8", ptr=0x1000, **extra):
    """A well-formed interface whose pointer must never be touched."""
    cai = dict(shape=shape, typestr=typestr, data=(ptr, False), strides=None, version=3)
    cai.update(extra)
    return Interface(**cai)


def wrap(d, **override):
    """A device array seen only through its interface (what Numba or PyTorch would pass)."""
    cai = dict(d.__cuda_array_interface__)
    cai.update(override)
    return Interface(**cai)


# --- Without CuPy or a GPU -----------------------------------------------------------------

def test_device_array_needs_cuda_plan():
    m, n = 10, 6
    dist = tessera.BlockDistribution((m, n), comm.size)
    block = fake((dist.rows(comm.rank), n))
    plan = tessera.TransposePlan(dist, numpy.float64, comm, backend="cpu")
    with pytest.raises(tessera.InputError, match='need a plan with backend="cuda".*numpy'):
        plan.execute(block)
    reduce = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum"], backend="cpu")
    assert reduce.backend == "cpu"
    with pytest.raises(tessera.InputError, match='backend="cuda"'):
        reduce.execute(block)
    # The host path of the same plans still works afterwards.
    a = matrix(m, n, numpy.float64)
    numpy.testing.assert_array_equal(plan.execute(rows_of(dist, a)),
                                     rows_of(dist.transposed(), a.T))


def info(obj, shape, dtype=numpy.float64):
    return _tessera._device_array_info(obj, dtype, shape, "the block")


def test_device_array_checks():
    assert info(fake((3, 4)), (3, 4)) == (0x1000, False, 0)
    for t in DTYPES:
        assert info(fake((3, 4), TYPESTR[t]), (3, 4), t)[0] == 0x1000
    # Streams: the default ones need nothing, another one is handed on to be synchronized.
    assert info(fake((3, 4), stream=None), (3, 4))[2] == 0
    assert info(fake((3, 4), stream=1), (3, 4))[2] == 0
    assert info(fake((3, 4), stream=2), (3, 4))[2] == 0
    assert info(fake((3, 4), stream=0x7f00), (3, 4))[2] == 0x7f00
    assert info(fake((3, 4), data=(0x1000, True)), (3, 4))[1] is True
    # C strides, or strides that cannot matter, are contiguous.
    assert info(fake((3, 4), strides=(32, 8)), (3, 4))[0] == 0x1000
    assert info(fake((1, 4), strides=(800, 8)), (1, 4))[0] == 0x1000
    assert info(fake((3, 1), strides=(8, 64)), (3, 1))[0] == 0x1000
    assert info(fake((0, 4), strides=(8, 24), ptr=0), (0, 4))[0] == 0
    assert info(fake((3, 0), ptr=0, version=2), (3, 0))[0] == 0

    bad = [
        (fake((3, 4), "<f4"), "must have dtype float64 \\(typestr '<f8'\\), got typestr '<f4'"),
        (fake((3, 4), ">f8"), "typestr '>f8'"),
        (fake((3, 4), "<i8"), "typestr '<i8'"),
        (fake((3, 5)), "must have shape \\(3, 4\\), got \\(3, 5\\)"),
        (fake((12,)), "must have shape \\(3, 4\\), got \\(12,\\)"),
        (fake((3, 4), strides=(8, 24)), "must be C-contiguous"),
        (fake((3, 4), strides=(64, 16)), "must be C-contiguous"),
        (fake((3, 4), mask=(0x2000, False)), "masked"),
        (fake((3, 4), ptr=0), "data pointer is null"),
        (fake((3, 4), data=0x1000), "data must be a tuple"),
        (fake((3, 4), version=1), "version 1, expected 2 or 3"),
        (fake((3, 4), version=None), "version None"),
        (fake((3, 4), stream=0), "stream is 0"),
        (Interface(shape=None, typestr="<f8", data=(0x1000, False), version=3),
         "shape must be a tuple"),
        (Interface(), "version"),
    ]
    for obj, message in bad:
        with pytest.raises(tessera.InputError, match=message):
            info(obj, (3, 4))
    # Arrays of any rank, and the integer types (permutations of dimensions).
    assert info(fake((2, 3, 4), strides=(96, 32, 8)), (2, 3, 4))[0] == 0x1000
    assert info(fake((5,), "|i1", strides=(1,)), (5,), numpy.int8)[0] == 0x1000
    assert info(fake((2, 1, 4), "<u2", strides=(8, 2, 2)), (2, 1, 4), numpy.uint16)[0] == 0x1000
    with pytest.raises(tessera.InputError, match="C-contiguous \\(strides \\(96, 32, 8\\) bytes"):
        info(fake((2, 3, 4), strides=(8, 16, 48)), (2, 3, 4))
    with pytest.raises(tessera.InputError, match="strides must be None or a tuple of 3 ints"):
        info(fake((2, 3, 4), strides=(32, 8)), (2, 3, 4))
    with pytest.raises(tessera.InputError, match="must have shape \\(2, 3, 4\\), got \\(6, 4\\)"):
        info(fake((6, 4)), (2, 3, 4))
    not_a_dict = Interface()
    not_a_dict.__cuda_array_interface__ = [1, 2]
    with pytest.raises(tessera.InputError, match="must be a dict, got list"):
        info(not_a_dict, (3, 4))


def test_permute_device_array_needs_cuda_plan():
    shape = (5, 4, 3)
    plan = tessera.PermutePlan(shape, (2, 0, 1), numpy.float64, comm, backend="cpu")
    assert plan.backend == "cpu"
    with pytest.raises(tessera.InputError, match='need a plan with backend="cuda"'):
        plan.execute(fake(plan.input_block_shape))
    a = matrix(5, 12, numpy.float64).reshape(shape)
    with pytest.raises(tessera.InputError, match="out is a device array but the input block is"):
        plan.execute(a[plan.input_slice], out=fake(plan.output_block_shape))
    numpy.testing.assert_array_equal(plan.execute(a[plan.input_slice]),
                                     a.transpose(2, 0, 1)[plan.output_slice])
    # permute() with device arrays asks for the CUDA backend.
    with pytest.raises(tessera.InputError, match="device pointers need the CUDA backend"):
        tessera.permute(fake(plan.input_block_shape), (2, 0, 1), global_shape=shape,
                        backend="cpu")


def test_host_out():
    m, n = 6, 6  # square: the input and output blocks have the same shape on every rank
    a = matrix(m, n, numpy.float64)
    dist = tessera.BlockDistribution((m, n), comm.size)
    t = dist.transposed()
    plan = tessera.TransposePlan(dist, numpy.float64, comm, backend="cpu")
    block = rows_of(dist, a).copy()
    out = numpy.full((t.rows(comm.rank), m), -1.0)
    assert plan.execute(block, out=out) is out
    numpy.testing.assert_array_equal(out, rows_of(t, a.T))
    with pytest.raises(tessera.InputError, match="out must have shape"):
        plan.execute(block, out=numpy.empty((t.rows(comm.rank), m + 1)))
    with pytest.raises(tessera.InputError, match="out must have dtype float64"):
        plan.execute(block, out=numpy.empty((t.rows(comm.rank), m), numpy.float32))
    readonly = numpy.empty((t.rows(comm.rank), m))
    readonly.flags.writeable = False
    with pytest.raises(tessera.InputError, match="out is read-only"):
        plan.execute(block, out=readonly)
    if block.size:
        with pytest.raises(tessera.InputError, match="out overlaps the input block"):
            plan.execute(block, out=block)
    with pytest.raises(tessera.InputError, match="out is a device array but the input block is"):
        plan.execute(block, out=fake((t.rows(comm.rank), m)))
    with pytest.raises(tessera.InputError, match="numpy array or a device array.*got list"):
        plan.execute(block.tolist())
    with pytest.raises(tessera.InputError, match="out must be a numpy array.*got str"):
        plan.execute(block, out="x")


def test_redistribute_device_array_checks():
    p = comm.size
    rows = tessera.Layout.rows(9, 7, comm)
    cpu = tessera.RedistributePlan(rows, rows, numpy.float64, backend="cpu")
    assert cpu.backend == "cpu"
    shape = rows.local_shape(comm.rank)
    with pytest.raises(tessera.InputError, match='backend="cuda"'):
        cpu.execute(fake(shape))
    # Padded local blocks (a leading dimension beyond the block) stay on the host; refused
    # before any memory is touched, whatever the backend.
    padded = tessera.Layout.block_cyclic(9, 7, 2, 2, 1, p, comm, lld=12)
    plan = tessera.RedistributePlan(padded, padded, numpy.float64)
    assert plan.backend == "cpu"  # auto, numpy arrays
    local = padded.local_shape(comm.rank)
    with pytest.raises(tessera.InputError, match="tight local blocks|device array"):
        plan.execute(fake(local), out=fake(local, ptr=0x9000))
    # A numpy array beside a device array.
    with pytest.raises(tessera.InputError, match="both in device memory|device array"):
        plan.execute(fake(local), out=numpy.zeros(local, order="F"))


# --- With CuPy and a GPU on every rank -----------------------------------------------------

@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(29, 13), (1, 7), (1031, 517)])
def test_transpose_device(dtype, shape):
    m, n = shape
    a = matrix(m, n, dtype)
    dist = tessera.BlockDistribution((m, n), comm.size)
    t = dist.transposed()
    plan = tessera.TransposePlan(dist, dtype, comm, backend="cuda")
    out = plan.execute(cupy.asarray(rows_of(dist, a)))  # empty on ranks without rows of (1, 7)
    assert isinstance(out, cupy.ndarray)
    assert out.shape == (t.rows(comm.rank), m) and out.dtype == numpy.dtype(dtype)
    numpy.testing.assert_array_equal(cupy.asnumpy(out), rows_of(t, a.T))
    # The host plan beside the device one.
    numpy.testing.assert_array_equal(plan.execute(rows_of(dist, a)), rows_of(t, a.T))
    again = plan.execute(cupy.asarray(rows_of(dist, a)))
    numpy.testing.assert_array_equal(cupy.asnumpy(again), rows_of(t, a.T))


@needs_gpu
def test_transpose_device_out_and_foreign_arrays():
    m, n = 37, 11
    a = matrix(m, n, numpy.complex128)
    dist = tessera.BlockDistribution((m, n), comm.size)
    t = dist.transposed()
    plan = tessera.TransposePlan(dist, numpy.complex128, comm, backend="cuda")
    d = cupy.asarray(rows_of(dist, a))
    out = cupy.full((t.rows(comm.rank), m), -1, dtype=numpy.complex128)
    assert plan.execute(d, out=out) is out
    numpy.testing.assert_array_equal(cupy.asnumpy(out), rows_of(t, a.T))
    # Arrays known only by their interface (Numba, PyTorch) work with out=.
    out2 = cupy.zeros_like(out)
    target = wrap(out2)
    assert plan.execute(wrap(d), out=target) is target
    numpy.testing.assert_array_equal(cupy.asnumpy(out2), rows_of(t, a.T))
    # Data written on a stream of its own: tessera synchronizes that stream first.
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        d2 = d * 2
    out3 = cupy.zeros_like(out)
    plan.execute(wrap(d2, stream=stream.ptr), out=out3)
    numpy.testing.assert_array_equal(cupy.asnumpy(out3), rows_of(t, (a * 2).T))


@needs_gpu
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.float32])
@pytest.mark.parametrize("axis", ["all", "rows", "cols"])
def test_reduce_device_same_bits_as_host(dtype, axis):
    m, n = 1031, 67  # several 64-row blocks, cut by rank boundaries
    a = numpy.sin(numpy.arange(m * n, dtype=numpy.float64)).reshape(m, n).astype(dtype)
    dist = tessera.BlockDistribution((m, n), comm.size)
    block = rows_of(dist, a)
    ops = ["sum", "norm2", "max"]
    plan = tessera.ReducePlan(dist, dtype, comm, ops=ops, axis=axis, backend="cuda")
    assert plan.backend == "cuda"
    device = plan.execute(cupy.asarray(block))
    host = plan.execute(block)
    cpu = tessera.ReducePlan(dist, dtype, comm, ops=ops, axis=axis, backend="cpu").execute(block)
    assert set(device) == set(ops)
    for op in ops:
        got = numpy.asarray(device[op], dtype=numpy.float64)
        assert got.shape == {"all": (), "rows": (m,), "cols": (n,)}[axis]
        for want in (host[op], cpu[op]):  # bit for bit
            assert got.tobytes() == numpy.asarray(want, dtype=numpy.float64).tobytes(), op


@needs_gpu
def test_device_bad_arrays_raise():
    m, n = 10, 6  # at least one row on every rank of up to 10
    dist = tessera.BlockDistribution((m, n), comm.size)
    rows = dist.rows(comm.rank)
    t = dist.transposed()
    d = cupy.asarray(rows_of(dist, matrix(m, n, numpy.float64)))
    plan = tessera.TransposePlan(dist, numpy.float64, comm, backend="cuda")
    with pytest.raises(tessera.InputError, match="input block must have shape"):
        plan.execute(cupy.zeros((rows + 1, n)))
    with pytest.raises(tessera.InputError, match="must have dtype float64"):
        plan.execute(d.astype(numpy.float32))
    with pytest.raises(tessera.InputError, match="must be C-contiguous"):
        plan.execute(cupy.zeros((rows, 2 * n))[:, ::2])
    with pytest.raises(tessera.InputError, match="must have shape"):
        plan.execute(d[:, ::2])
    readonly = cupy.empty((t.rows(comm.rank), m))
    with pytest.raises(tessera.InputError, match="out is read-only"):
        plan.execute(d, out=wrap(readonly, data=(readonly.data.ptr, True)))
    with pytest.raises(tessera.InputError, match="out must have shape"):
        plan.execute(d, out=cupy.empty((t.rows(comm.rank), m + 1)))
    with pytest.raises(tessera.InputError, match="out is a ndarray: pass out= as a device array"):
        plan.execute(d, out=numpy.empty((t.rows(comm.rank), m)))
    with pytest.raises(tessera.InputError, match="out is a device array"):
        plan.execute(cupy.asnumpy(d), out=cupy.empty((t.rows(comm.rank), m)))
    reduce = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum"], backend="cuda")
    with pytest.raises(tessera.InputError, match="must have dtype float64"):
        reduce.execute(d.astype(numpy.float32))
    with pytest.raises(tessera.InputError, match="must be C-contiguous"):
        reduce.execute(cupy.zeros((rows, 2 * n))[:, ::2])
    cpu = tessera.TransposePlan(dist, numpy.float64, comm, backend="cpu")
    with pytest.raises(tessera.InputError, match='backend="cuda"'):
        cpu.execute(d)
    # Nothing above reached a collective: the plan still works on every rank.
    out = plan.execute(d)
    numpy.testing.assert_array_equal(cupy.asnumpy(out),
                                     rows_of(t, matrix(m, n, numpy.float64).T))


@needs_gpu
@pytest.mark.parametrize("dtype", [numpy.float64, numpy.complex64, numpy.int16, numpy.uint8])
@pytest.mark.parametrize("shape,axes", [((7, 5, 3), (2, 0, 1)), ((6, 4, 5, 2), (3, 1, 0, 2)),
                                        ((2, 33, 65), (1, 2, 0)), ((5, 3, 4), (0, 2, 1))])
def test_permute_device(dtype, shape, axes):
    rng = numpy.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    want = a.transpose(axes)
    plan = tessera.PermutePlan(shape, axes, dtype, comm, backend="cuda")
    out = plan.execute(cupy.asarray(a[plan.input_slice]))
    assert isinstance(out, cupy.ndarray) and out.shape == plan.output_block_shape
    numpy.testing.assert_array_equal(cupy.asnumpy(out), want[plan.output_slice])
    # The host plan beside the device one, and out= on the device.
    numpy.testing.assert_array_equal(plan.execute(a[plan.input_slice]), want[plan.output_slice])
    out2 = cupy.zeros_like(out)
    assert plan.execute(cupy.asarray(a[plan.input_slice]), out=out2) is out2
    numpy.testing.assert_array_equal(cupy.asnumpy(out2), want[plan.output_slice])
    # The function, on device arrays: a cupy result.
    got = tessera.permute(cupy.asarray(a[plan.input_slice]), axes)
    assert isinstance(got, cupy.ndarray)
    numpy.testing.assert_array_equal(cupy.asnumpy(got), want[plan.output_slice])


def _device_block(layout, a):
    """This rank's local block of the global matrix a, on the device in the layout's order."""
    block = layout.local_block(a)
    if layout.order == "F":
        return cupy.asfortranarray(cupy.asarray(block))
    return cupy.ascontiguousarray(cupy.asarray(block))


@needs_gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["N", "T", "C"])
def test_redistribute_device_same_bits_as_host(dtype, op):
    p = comm.size
    m, n = 71, 45
    a = matrix(m, n, dtype)
    la = tessera.Layout.block_cyclic(m, n, 3, 5, 1, p, comm)  # Fortran-ordered, ScaLAPACK's
    bshape = (m, n) if op == "N" else (n, m)
    lb = tessera.Layout.rows(bshape[0], bshape[1], comm)
    b0 = matrix(bshape[0], bshape[1], dtype)
    for kwargs in [{}, {"max_buffer_bytes": 256}, {"shape": (20, 17), "a_corner": (2, 3),
                                                   "b_corner": (1, 4)}]:
        plan = tessera.RedistributePlan(la, lb, dtype, op=op, **kwargs)
        alpha, beta = (0.7 + 1.9j, -1.1 + 0.3j) if numpy.dtype(dtype).kind == "c" else (2.5, -0.5)
        host = plan.execute(la.local_block(a), out=lb.local_block(b0).copy(), alpha=alpha,
                            beta=beta)
        out = _device_block(lb, b0)
        got = plan.execute(_device_block(la, a), out=out, alpha=alpha, beta=beta)
        assert got is out and isinstance(got, cupy.ndarray)
        numpy.testing.assert_array_equal(cupy.asnumpy(got), host)
        # Without out= (beta = 0): a new device array in B's order.
        fresh = plan.execute(_device_block(la, a), alpha=alpha)
        assert isinstance(fresh, cupy.ndarray)
        numpy.testing.assert_array_equal(cupy.asnumpy(fresh),
                                         plan.execute(la.local_block(a), alpha=alpha))


@needs_gpu
def test_redistribute_device_back_to_block_cyclic_and_foreign_arrays():
    p = comm.size
    m, n = 40, 33
    a = matrix(m, n, numpy.complex64)
    la = tessera.Layout.rows(m, n, comm)
    lb = tessera.Layout.block_cyclic(n, m, 7, 2, min(p, 2), 1, comm) if p > 1 else \
        tessera.Layout.block_cyclic(n, m, 7, 2, 1, 1, comm)
    plan = tessera.RedistributePlan(la, lb, numpy.complex64, op="C", backend="cuda")
    assert plan.backend == "cuda"
    host = plan.execute(la.local_block(a))
    out = cupy.zeros(lb.local_shape(comm.rank), numpy.complex64, order="F")
    target = wrap(out)
    assert plan.execute(wrap(_device_block(la, a)), out=target) is target
    numpy.testing.assert_array_equal(cupy.asnumpy(out), host)
