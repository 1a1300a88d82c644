"""tessera from Python: transpose and reduce a distributed matrix, permute the dimensions of a
3-D array, HDF5 round trip, heat2d.
    mpirun -np 3 python3 tessera_example.py [WORKDIR]"""
import os
import sys

import numpy
from mpi4py import MPI

import tessera

comm = MPI.COMM_WORLD
M, N = 37, 23
a = numpy.arange(M * N, dtype=numpy.float64).reshape(M, N)  # every rank builds A here
dist = tessera.BlockDistribution((M, N), comm.size)
b, e = dist.begin(comm.rank), dist.end(comm.rank)

plan = tessera.TransposePlan(dist, numpy.float64, comm)  # backend="auto"
at_rows = plan.execute(a[b:e])  # a new array: this rank's rows of a.T
t = dist.transposed()
assert (at_rows == a.T[t.begin(comm.rank):t.end(comm.rank)]).all()

r = tessera.ReducePlan(dist, numpy.float64, comm, ops=["sum", "norm2"]).execute(a[b:e])
n = M * N
assert r["sum"] == n * (n - 1) / 2
assert abs(r["norm2"] - numpy.sqrt((n - 1) * n * (2 * n - 1) / 6)) < 1e-12 * r["norm2"]

# Permutation of dimensions: this rank's block of x.transpose(2, 0, 1), from its block of x.
x = numpy.arange(7 * 5 * 4, dtype=numpy.int32).reshape(7, 5, 4)
pp = tessera.PermutePlan(x.shape, (2, 0, 1), x.dtype, comm)
assert (pp.execute(x[pp.input_slice]) == x.transpose(2, 0, 1)[pp.output_slice]).all()

workdir = sys.argv[1] if len(sys.argv) > 1 else "."
f = os.path.join(workdir, "py_a.h5")
tessera.write_rows(f, "/A", dist, a[b:e], comm)
assert (tessera.read_rows(f, "/A", dist, numpy.float64, comm) == a[b:e]).all()

solver = tessera.Heat2dSolver(comm, nx=32, ny=24, dt=1e-4)
solver.step(20)
assert solver.diagnostics()["linf_error"] < 1e-3

try:
    tessera.TransposePlan(dist, numpy.int32, comm)
    raise SystemExit("an int32 plan was accepted")
except tessera.InputError as err:
    assert "int32" in str(err)

if comm.rank == 0:
    print(f"Python example (tessera {tessera.version()}, {comm.size} ranks): ok")
