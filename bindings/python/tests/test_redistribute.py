# tessera.redistribute and tessera.RedistributePlan against numpy on the gathered matrices, under
# mpirun as the other tests of this folder (every rank runs every test, in the same order):
#   mpirun -np 4 python3 -m pytest -q bindings/python/tests/test_redistribute.py
# Each test also runs on the sub-communicators of the first 1, 2, … ranks.
import numpy
import pytest
from mpi4py import MPI

import tessera

comm = MPI.COMM_WORLD
DTYPES = [numpy.float64, numpy.float32, numpy.complex128, numpy.complex64]


def on_each_communicator(body):
    """body(c) on MPI.COMM_WORLD's first k ranks, for k = 1 … size. A failure on some ranks
    fails the test on every rank (after each k, so that no rank is left in a collective call
    the failing ones never reach)."""
    for k in range(1, comm.size + 1):
        sub = comm.Split(0 if comm.rank < k else MPI.UNDEFINED, comm.rank)
        error = None
        if sub != MPI.COMM_NULL:
            try:
                body(sub)
            except Exception as e:  # AssertionError included
                error = f"rank {comm.rank} of {k}: {type(e).__name__}: {e}"
            sub.Free()
        errors = [e for e in comm.allgather(error) if e is not None]
        if errors:
            pytest.fail("\n".join(errors))


def matrix(shape, dtype, rng):
    """Small integers and halves: exact in every dtype, whatever the order of evaluation."""
    a = rng.integers(-20, 20, size=shape) / 2
    if numpy.dtype(dtype).kind == "c":
        a = a + 1j * (rng.integers(-20, 20, size=shape) / 2)
    return a.astype(dtype)


def random_layout(rng, shape, c):
    """One of the constructors, with random arguments (rng seeded alike on every rank)."""
    m, n = shape
    p = c.size
    kind = rng.integers(0, 6)
    order = "C" if rng.integers(0, 2) else "F"
    grid_order = "row" if rng.integers(0, 2) else "col"
    pr = int(rng.integers(1, min(p, 3) + 1))
    pc = int(rng.integers(1, min(p // pr, 3) + 1))
    if kind == 0:
        return tessera.Layout.rows(m, n, c, order=order)
    if kind == 1:
        return tessera.Layout.cols(m, n, c, order=order)
    if kind == 2:
        return tessera.Layout.grid2d(m, n, pr, pc, c, grid_order=grid_order, order=order)
    mb, nb = (int(x) for x in rng.choice([1, 2, 3, 5, 8, 64], size=2))
    rsrc, csrc = int(rng.integers(0, pr)), int(rng.integers(0, pc))
    if kind == 3:
        return tessera.Layout.block_cyclic(m, n, mb, nb, pr, pc, c, rsrc=rsrc, csrc=csrc,
                                           grid_order=grid_order, order=order)
    if kind == 4:
        # A descriptor as ScaLAPACK fills it: this rank's own (tight) leading dimension.
        tight = tessera.Layout.block_cyclic(m, n, mb, nb, pr, pc, c, rsrc=rsrc, csrc=csrc,
                                            grid_order=grid_order)
        lld = max(1, tight.local_shape()[0])
        return tessera.Layout.from_descriptor([1, 0, m, n, mb, nb, rsrc, csrc, lld], pr, pc, c,
                                              grid_order=grid_order)
    splits = [sorted({0, x, *rng.integers(0, x + 1, size=rng.integers(0, 3))}) for x in shape]
    splits = [s if s[-1] == x else s + [x] for s, x in zip(splits, shape)]
    owners = rng.integers(0, p, size=(len(splits[0]) - 1, len(splits[1]) - 1))
    return tessera.Layout.grid(splits[0], splits[1], owners, c, order=order)


def gather(layout, block):
    """The global matrix from every rank's local block."""
    blocks = layout.comm.allgather(block)
    dtype = next((b.dtype for b in blocks if b is not None and b.size), numpy.float64)
    out = numpy.zeros(layout.shape, dtype)
    for rows, cols, owner, (lr, lc) in layout.blocks():
        n_r, n_c = rows.stop - rows.start, cols.stop - cols.start
        if n_r > 0 and n_c > 0:
            out[rows, cols] = blocks[owner][lr:lr + n_r, lc:lc + n_c]
    return out


def op_of(a, op):
    return a if op == "N" else a.T if op == "T" else a.conj().T


def random_case(rng, c, dtype):
    """(A's layout, B's layout, op, a_corner, b_corner, window shape, whole B)."""
    kinds = "NTC" if numpy.dtype(dtype).kind == "c" else "NT"
    op = kinds[rng.integers(0, len(kinds))]
    # Shapes down to 1 x 1 and 1 x n, so that ranks hold nothing.
    a_shape = tuple(int(x) for x in rng.integers(1, 24, size=2))
    if rng.integers(0, 3) == 0:
        a_shape = (1, a_shape[1])
    b_shape = a_shape[::-1] if op != "N" else a_shape
    window = None
    a_corner = b_corner = (0, 0)
    if rng.integers(0, 2):
        b_shape = tuple(int(x) for x in rng.integers(1, 24, size=2))
        at = a_shape[::-1] if op != "N" else a_shape
        rows = int(rng.integers(0, min(b_shape[0], at[0]) + 1))
        cols = int(rng.integers(0, min(b_shape[1], at[1]) + 1))
        window = (rows, cols)
        b_corner = (int(rng.integers(0, b_shape[0] - rows + 1)),
                    int(rng.integers(0, b_shape[1] - cols + 1)))
        ac = (rows, cols) if op == "N" else (cols, rows)
        a_corner = (int(rng.integers(0, a_shape[0] - ac[0] + 1)),
                    int(rng.integers(0, a_shape[1] - ac[1] + 1)))
    return (random_layout(rng, a_shape, c), random_layout(rng, b_shape, c), op, a_corner,
            b_corner, window)


def expected(a, b0, op, a_corner, b_corner, window, alpha, beta):
    b = b0.copy()
    rows, cols = window if window is not None else (b.shape[0] - b_corner[0],
                                                    b.shape[1] - b_corner[1])
    ar, ac = (rows, cols) if op == "N" else (cols, rows)
    part = op_of(a[a_corner[0]:a_corner[0] + ar, a_corner[1]:a_corner[1] + ac], op)
    dst = b[b_corner[0]:b_corner[0] + rows, b_corner[1]:b_corner[1] + cols]
    dst[...] = alpha * part + (beta * dst if beta != 0 else 0)
    return b


@pytest.mark.parametrize("dtype", DTYPES)
def test_redistribute_matches_numpy(dtype):
    on_each_communicator(lambda c: redistribute_cases(c, dtype))


def redistribute_cases(c, dtype):
    rng = numpy.random.default_rng(100 + c.size + 7 * DTYPES.index(dtype))
    for case in range(12):
        la, lb, op, a_corner, b_corner, window = random_case(rng, c, dtype)
        a = matrix(la.shape, dtype, rng)
        b0 = matrix(lb.shape, dtype, rng)
        complex_ = numpy.dtype(dtype).kind == "c"
        alpha = [1, -2, 0.5 + 1.5j][rng.integers(0, 3 if complex_ else 2)]
        beta = [0, 0.5, -1 + 2j][rng.integers(0, 3 if complex_ else 2)]
        out = lb.local_block(b0) if beta != 0 or rng.integers(0, 2) else None
        got = tessera.redistribute(la.local_block(a), la, lb, op=op, alpha=alpha, beta=beta,
                                   out=out, a_corner=a_corner, b_corner=b_corner,
                                   shape=window)
        # What this rank alone can check, agreed before the collective gathers below.
        local = []
        if out is not None and got is not out:
            local.append("out= was not returned")
        if got.shape != lb.local_shape() or got.dtype != numpy.dtype(dtype):
            local.append(f"got {got.shape} {got.dtype}, expected {lb.local_shape()} {dtype}")
        elif got.size and min(got.shape) > 1 and \
                not got.flags["C_CONTIGUOUS" if lb.order == "C" else "F_CONTIGUOUS"]:
            local.append(f"the block is not in the layout's order {lb.order}")
        assert not any(c.allgather(local)), f"case {case}: {c.allgather(local)}"
        want = expected(a, b0, op, a_corner, b_corner, window, alpha, beta)
        if out is None and window is not None:  # B outside the window is not written
            got_global = gather(lb, got)
            rows, cols = window
            sl = (slice(b_corner[0], b_corner[0] + rows), slice(b_corner[1], b_corner[1] + cols))
            numpy.testing.assert_array_equal(got_global[sl], want[sl], err_msg=f"case {case}")
        else:
            numpy.testing.assert_array_equal(gather(lb, got), want, err_msg=f"case {case}")


def test_plan_is_reused_with_other_scalars():
    on_each_communicator(plan_reuse)


def plan_reuse(c):
    rng = numpy.random.default_rng(7 + c.size)
    la = tessera.Layout.block_cyclic(13, 9, 2, 3, 1, c.size, c)
    lb = tessera.Layout.rows(9, 13, c)
    plan = tessera.RedistributePlan(la, lb, numpy.complex128, op="C")
    assert plan.dtype == numpy.complex128
    a = matrix(la.shape, numpy.complex128, rng)
    b0 = matrix(lb.shape, numpy.complex128, rng)
    for alpha, beta in [(1, 0), (2 - 1j, 0.5), (-1, 1j)]:
        out = lb.local_block(b0)
        got = plan.execute(la.local_block(a), out=out, alpha=alpha, beta=beta)
        assert all(c.allgather(got is out))
        numpy.testing.assert_array_equal(
            gather(lb, out), expected(a, b0, "C", (0, 0), (0, 0), None, alpha, beta))
    t = plan.traffic
    assert t["sent"] == t["sent_lower_bound"]
    assert c.allreduce(t["sent"]) == c.allreduce(t["received"])


def test_relabel_keeps_what_each_rank_holds():
    on_each_communicator(relabel_case)


def relabel_case(c):
    """Row blocks to the same blocks dealt in reverse: relabelled, nothing moves, and the result
    is A laid out in plan.target."""
    p = c.size
    rng = numpy.random.default_rng(3 + p)
    la = tessera.Layout.rows(11, 6, c)
    splits = [0] + [rows.stop for rows, _, _, _ in la.blocks()]
    lb = tessera.Layout.grid(splits, [0, 6], [[r] for r in range(p - 1, -1, -1)], c, order="F")
    plan = tessera.RedistributePlan(la, lb, numpy.float64, relabel=True)
    assert plan.relabelling == list(range(p - 1, -1, -1))
    assert plan.traffic["sent"] == 0 and plan.traffic["received"] == 0
    target = plan.target
    assert isinstance(target, tessera.Layout) and target.shape == lb.shape
    for (_, _, owner, _), (_, _, b_owner, _) in zip(target.blocks(), lb.blocks()):
        assert owner == plan.relabelling[b_owner]
    a = matrix(la.shape, numpy.float64, rng)
    got = plan.execute(la.local_block(a))
    assert got.shape == target.local_shape()
    numpy.testing.assert_array_equal(gather(target, got), a)
    out = target.empty(numpy.float64)
    assert plan.execute(la.local_block(a), out=out) is out
    numpy.testing.assert_array_equal(gather(target, out), a)
    # Without relabel: the identity, and to_layout itself.
    plain = tessera.RedistributePlan(la, lb, numpy.float64)
    assert plain.relabelling == list(range(p)) and plain.target == lb
    with pytest.raises(tessera.InputError):
        tessera.RedistributePlan(la, lb, numpy.float64, relabel=True, shape=(2, 2))


def test_buffer_bound_splits_into_rounds():
    on_each_communicator(buffer_case)


def buffer_case(c):
    rng = numpy.random.default_rng(5 + c.size)
    la = tessera.Layout.rows(17, 9, c)
    lb = tessera.Layout.block_cyclic(9, 17, 2, 3, 1, c.size, c)
    a = matrix(la.shape, numpy.complex128, rng)
    for limit in (0, 16, 1000):
        plan = tessera.RedistributePlan(la, lb, numpy.complex128, op="T", max_buffer_bytes=limit)
        t = plan.traffic
        if limit:
            assert t["buffer_bytes"] <= max(limit, 2 * (c.size - 1) * 16)
        assert len(set(c.allgather(t["rounds"]))) == 1
        if limit == 16 and c.size > 1:
            assert t["rounds"] > 1
        numpy.testing.assert_array_equal(gather(lb, plan.execute(la.local_block(a))), a.T)
    with pytest.raises(tessera.InputError):
        tessera.RedistributePlan(la, lb, numpy.complex128, op="T",
                                 max_buffer_bytes=-1 if c.rank == 0 else 0)


def test_layout_queries():
    on_each_communicator(layout_queries)


def layout_queries(c):
    p = c.size
    rows = tessera.Layout.rows(7, 5, c)
    assert rows.shape == (7, 5) and rows.nranks == p and rows.order == "C"
    assert sum(rows.local_shape(r)[0] for r in range(p)) == 7
    cols = tessera.Layout.cols(7, 5, c, order="F")
    assert cols.order == "F" and sum(cols.local_shape(r)[1] for r in range(p)) == 5
    cyclic = tessera.Layout.block_cyclic(10, 10, 3, 3, 1, p, c)
    # Global element (4, 7): block column 2 goes to grid column 2 mod p.
    assert cyclic.locate(4, 7) == (2 % p, 4, (2 // p) * 3 + 1)
    desc = tessera.Layout.from_descriptor([1, 0, 10, 10, 3, 3, 0, 0, 10], 1, p, c)
    assert desc.order == "F" and desc.leading_dimension() == 10
    assert desc.empty(numpy.float64).strides[1] == 80  # padded to the leading dimension
    a = numpy.arange(100.0).reshape(10, 10)
    block = desc.local_block(a)
    assert block.shape == desc.local_shape()
    assert gather(desc, block).tolist() == a.tolist()
    assert rows.transposed().shape == (5, 7) and rows.transposed().order == "F"
    assert tessera.Layout.rows(7, 5, c) == rows and rows != cols
    g = tessera.Layout.grid([0, 2, 7], [0, 5], [[0], [p - 1]], c)
    assert g.local_shape(p - 1)[0] == (5 if p > 1 else 7)
    assert "Layout((7, 5)" in repr(rows)
    if p > 1:
        assert tessera.Layout.grid2d(4, 4, 1, 1, c).local_shape(1) == (0, 0)


def test_bad_arguments_raise_on_every_rank():
    la = tessera.Layout.rows(6, 4, comm)
    lb = tessera.Layout.cols(6, 4, comm)
    good = la.local_block(numpy.zeros((6, 4)))
    with pytest.raises(tessera.InputError):
        tessera.Layout.rows(6, 4, comm, order="X")
    with pytest.raises(tessera.InputError):
        tessera.Layout.from_descriptor([1, 0, 4], 1, 1, comm)
    with pytest.raises(tessera.InputError):
        tessera.Layout.rows(6, 4, "not a communicator")
    with pytest.raises(tessera.InputError):
        tessera.RedistributePlan(la, lb, numpy.float64, op="X")
    with pytest.raises(tessera.InputError):
        tessera.RedistributePlan(la, lb, numpy.int32)
    with pytest.raises(tessera.InputError):
        tessera.RedistributePlan(la, lb, numpy.float64, op="T")  # 4 x 6 from 6 x 4 into 6 x 4
    plan = tessera.RedistributePlan(la, lb, numpy.float64)
    last = comm.rank == comm.size - 1
    # Wrong on the last rank only: every rank raises, the others naming it.
    cases = [
        (good.astype(numpy.float32) if last else good, {}),                   # dtype
        (numpy.zeros((good.shape[0] + 1, 4)) if last else good, {}),          # shape
        (numpy.zeros((good.shape[0], 8))[:, ::2] if last else good, {}),      # strides
        (good, {"alpha": 1j} if last else {}),                                # complex scalar
        (good, {"beta": 1.0} if last else {}),                                # beta without out
        ([[1.0]] if last else good, {}),                                      # not an array
    ]
    for k, (a, kwargs) in enumerate(cases):
        with pytest.raises(tessera.InputError) as e:
            plan.execute(a, **kwargs)
        if not last:
            assert f"rank {comm.size - 1}" in str(e.value), k
    out = lb.empty(numpy.float64)
    out.flags.writeable = False
    with pytest.raises(tessera.InputError):
        plan.execute(good, out=out)
    if comm.size > 1:  # one rank's float32 against the others' float64
        with pytest.raises(tessera.InputError):
            tessera.redistribute(good.astype(numpy.float32) if last else good, la, lb)
    with pytest.raises(tessera.InputError):
        tessera.redistribute(good, la, "not a layout")
