"""`tessera transpose --axes` through many pieces: the I/O thread reads piece p + 1 and writes
piece p - 1 while piece p is permuted (ops/piece_stream.hpp). Small memory limits force pieces of
one output row and of parts of a row; the outputs are checked bit for bit against numpy's
transpose(axes), the buffers against the limit, and a failure injected on one rank, on either
side, must stop every rank with the cause and leave no output behind."""
import os
import re

import h5py
import numpy as np

from cli_common import expect, ranks_of

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def report(p):
    """(pieces per rank, bytes of buffers per rank) from the command's summary line; the bytes
    as printed, rounded down by the last printed digit (1.72 KiB may be 1761 bytes)."""
    text = p.stdout + p.stderr
    m = re.search(r"pieces: (\d+), ([\d.]+) (B|KiB|MiB|GiB) of buffers per rank", text)
    expect(m is not None, "no 'pieces: N, SIZE of buffers per rank' in the output")
    digits = len(m.group(2).partition(".")[2])
    return int(m.group(1)), (float(m.group(2)) - 0.5 * 10 ** -digits) * UNITS[m.group(3)]


def same_bits(path, var, want, what):
    with h5py.File(path, "r") as f:
        got = f[var][()]
    expect(got.dtype == want.dtype and got.shape == want.shape,
           f"{what}: {got.dtype} {got.shape}, expected {want.dtype} {want.shape}")
    expect(got.tobytes() == want.tobytes(), f"{what}: the values differ from numpy's transpose")


def permute_stream(r, rng):
    ranks = ranks_of(r)
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    nt, nlat, nlon = rng.choice([11, 13]), rng.choice([7, 9]), rng.choice([5, 11])
    temp = nprng.standard_normal((nt, nlat, nlon))
    counts = nprng.integers(-2 ** 31, 2 ** 31, (5, 9, 6), dtype=np.int32)
    with h5py.File(r.path("in.h5"), "w") as f:
        f["temp"] = temp
        f["counts"] = counts

    # (time, lat, lon) -> (lat, lon, time), one output row (nlon x nt) per piece: the four
    # buffers (two read, two permuted) must fit the limit together.
    row = nlon * nt * 8
    limit = 4 * row
    p = r.run(["transpose", "in.h5:/temp", "t.h5:/temp", "--axes", "1,2,0", "--memory-limit",
               f"{limit}B"])
    pieces, buffers = report(p)
    expect(pieces == -(-nlat // ranks), f"{pieces} pieces, expected one per output row")
    expect(buffers <= limit, f"{buffers:.0f} bytes of buffers per rank, over the {limit} B limit")
    same_bits(r.path("t.h5"), "temp", temp.transpose(1, 2, 0), "/temp axes (1, 2, 0)")

    # int32, rows cut along the output's second dimension (a piece of 9 elements, four buffers
    # of 36 bytes): many more pieces than rows.
    p = r.run(["transpose", "in.h5:/counts", "c.h5:/counts", "--axes", "2,0,1",
               "--memory-limit", "160B"])
    pieces, buffers = report(p)
    expect(pieces == 5 * -(-6 // ranks), f"{pieces} pieces, expected 5 per output row")
    expect(buffers <= 160, f"{buffers:.0f} bytes of buffers per rank, over the 160 B limit")
    same_bits(r.path("c.h5"), "counts", counts.transpose(2, 0, 1), "/counts axes (2, 0, 1)")

    # A failure on the last rank, in each side and mid-stream: every rank stops, the cause is
    # reported, and neither the output nor its temporary is left.
    last = ranks - 1
    for fault in (f"read:rank={last}:chunk=2", f"compute:rank={last}:chunk=1",
                  f"write:rank={last}:chunk=1"):
        out = "f_" + fault.split(":")[0] + ".h5"
        p = r.run(["transpose", "in.h5:/temp", f"{out}:/temp", "--axes", "1,2,0",
                   "--memory-limit", f"{limit}B"], expect_ok=False,
                  env={"TESSERA_TEST_HOOKS": "1", "TESSERA_FAULT": fault})
        expect(p.returncode != 0, f"{fault}: the command succeeded")
        expect("injected fault" in p.stdout + p.stderr, f"{fault}: the cause is not reported")
        left = [n for n in os.listdir(r.dir) if n.startswith(out)]
        expect(not left, f"{fault}: left {left} behind")
