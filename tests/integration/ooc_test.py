#!/usr/bin/env python3
"""Out-of-core transpose and reductions through the `tessera` command line.

Generates a dataset far larger than --memory-limit, transposes and reduces it out of core at
the given rank count, compares the results with numpy (read through h5py), and checks with
/usr/bin/time -v that every rank's peak resident memory stays within the limit plus a fixed
overhead. The overhead is measured, not guessed: the same command on a tiny dataset gives the
resident size of the binary, MPI, HDF5 and the I/O thread without any matrix data.

  ooc_test.py --tessera build/ooc/src/app/tessera --np 3 [--seed S]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

from cli_common import Failure, Launcher, add_launch_args, drive, expect

TIMEOUT = 600
MiB = 1 << 20
# Allowed beyond limit + the measured baseline: HDF5's chunk and metadata caches, the
# reductions' per-row doubles, heap fragmentation.
SLACK = 24 * MiB


class Runner(Launcher):
    def run(self, args, timed=False, expect_ok=True):
        """Runs tessera; returns (process, [peak RSS in bytes per rank] when timed)."""
        # Each rank's /usr/bin/time report goes to a file of its own: on a shared stderr the
        # ranks' reports interleave, even within a line.
        rss_prefix = os.path.join(self.dir, "rss")
        for old in glob.glob(rss_prefix + ".*"):
            os.remove(old)
        prog = ["/bin/sh", "-c", 'exec /usr/bin/time -v -o "$0.${OMPI_COMM_WORLD_RANK:-0}" "$@"',
                rss_prefix, self.tessera] if timed else [self.tessera]
        cmd = self.argv(args, prog)
        print("$ " + " ".join(cmd), flush=True)
        try:
            p = subprocess.run(cmd, cwd=self.dir, capture_output=True, text=True,
                               timeout=TIMEOUT)
        except subprocess.TimeoutExpired as e:
            raise Failure(f"did not finish within {TIMEOUT} s (hang?): {' '.join(cmd)}\n"
                          f"stdout: {e.stdout}\nstderr: {e.stderr}")
        sys.stdout.write(p.stdout)
        sys.stdout.write("\n".join(l for l in p.stderr.splitlines()
                                   if not l.startswith("\t")) + "\n")
        if p.returncode != 0 and expect_ok:
            sys.stdout.write(p.stderr)
            raise Failure(f"exit status {p.returncode}: {' '.join(cmd)}")
        rss = []
        for report in sorted(glob.glob(rss_prefix + ".*")):
            with open(report) as f:
                rss += [int(k) * 1024 for k in
                        re.findall(r"Maximum resident set size \(kbytes\): (\d+)", f.read())]
        if timed:
            expect(len(rss) == max(self.np, 1), f"expected one /usr/bin/time report per rank, "
                                                f"got {len(rss)}")
        return p, rss


def reduce_json(r, ref, axis, extra, timed=False):
    p, rss = r.run(["reduce", ref, "--op", "sum,norm2,max,min", "--axis", axis, "--json"] + extra,
                   timed=timed)
    return json.loads(p.stdout), rss


def check_reductions(got, a, axis):
    np_axis = {"all": None, "rows": 1, "cols": 0}[axis]
    want = {"sum": a.sum(axis=np_axis), "max": a.max(axis=np_axis), "min": a.min(axis=np_axis),
            "norm2": np.sqrt((a * a).sum(axis=np_axis))}
    for op, w in want.items():
        g = np.asarray(got["results"][op], dtype=np.float64)
        if op in ("max", "min"):
            expect(np.array_equal(g, w), f"reduce {op} along {axis} differs from numpy")
        else:
            expect(np.allclose(g, w, rtol=1e-9, atol=1e-9 * np.abs(a).sum() / a.size),
                   f"reduce {op} along {axis}: largest difference from numpy "
                   f"{np.max(np.abs(g - w))}")


def check_rss(what, rss, baseline, limit):
    bound = max(baseline) + limit + SLACK
    print(f"{what}: peak RSS per rank {[x // MiB for x in rss]} MiB; baseline "
          f"{max(baseline) // MiB} MiB + limit {limit // MiB} MiB + slack {SLACK // MiB} MiB "
          f"= {bound // MiB} MiB", flush=True)
    if os.environ.get("ASAN_OPTIONS") is not None:
        # The asan preset sets ASAN_OPTIONS: shadow memory and the quarantine inflate RSS.
        print(f"{what}: peak RSS not checked under AddressSanitizer", flush=True)
        return
    expect(max(rss) <= bound, f"{what}: peak RSS {max(rss) // MiB} MiB exceeds {bound // MiB} MiB")


def scenario(r, rng):
    rows, cols = 3001, 2749            # 66 MB of f64: awkward sizes, ~16x the limit
    limit = 4 * MiB
    seed = rng.randrange(2 ** 31)
    r.run(["generate", "a.h5:/A", "--rows", str(rows), "--cols", str(cols), "--seed", str(seed)])
    r.run(["generate", "tiny.h5:/A", "--rows", "8", "--cols", "8", "--seed", str(seed)])
    with h5py.File(r.path("a.h5"), "r") as f:
        a = f["A"][...]
    expect(a.nbytes > 8 * limit, "the dataset must be far larger than the memory limit")

    # Baseline resident size: the same commands on a tiny dataset, streamed out of core.
    _, base_t = r.run(["transpose", "tiny.h5:/A", "tinyt.h5:/AT", "--out-of-core"], timed=True)
    _, base_r = r.run(["reduce", "tiny.h5:/A", "--out-of-core"], timed=True)

    # Compressed output: HDF5 holds whole chunks while it compresses them, and that counts within
    # the limit. HDF5 chunks of 256 whole output rows (6 MB) cannot fit 4 MiB: a clear error.
    p, _ = r.run(["transpose", "a.h5:/A", "big.h5:/AT", "--memory-limit", "4MiB",
                  "--chunk-rows", "256", "--deflate", "1"], expect_ok=False)
    expect(p.returncode != 0 and "held by HDF5" in p.stderr,
           "compressed chunks larger than the limit were not refused clearly")
    expect(not any(f.startswith("big.h5") for f in os.listdir(r.dir)),
           "the refused transpose left a file behind")
    p, rss = r.run(["transpose", "a.h5:/A", "at.h5:/AT", "--memory-limit", "4MiB",
                    "--deflate", "1"], timed=True)
    log = p.stdout + p.stderr
    expect("out of core" in log, "the transpose did not go out of core")
    for phase in ("read", "write", "compute", "wait: compute on I/O"):
        expect(phase in p.stdout, f"the timing table has no '{phase}' row")
    # What tessera controls, as it reports it: its buffers and HDF5's compressed chunks.
    m = re.search(r"in (\d+) chunks of (\d+) columns, ([\d.]+) (B|KiB|MiB) of buffers per rank"
                  r"(?: \+ at most ([\d.]+) (B|KiB|MiB) held by HDF5)?", log)
    expect(m is not None, "no 'chunks of W columns, X of buffers per rank' line")
    unit = {"B": 1, "KiB": 1 << 10, "MiB": MiB}
    counted = float(m.group(3)) * unit[m.group(4)]
    if m.group(5):
        counted += float(m.group(5)) * unit[m.group(6)]
    expect(m.group(5) is not None, "compressed output: HDF5's chunk buffers are not counted")
    expect(counted <= limit + 0.02 * MiB, f"counted memory {counted / MiB:.2f} MiB exceeds the limit")
    check_rss("transpose", rss, base_t, limit)
    with h5py.File(r.path("at.h5"), "r") as f:
        at = f["AT"]
        width = int(m.group(2))
        expect(at.chunks is not None and at.chunks[0] == width,
               f"output chunks {at.chunks}: expected {width} rows, one panel's transpose")
        expect(at.compression == "gzip", "output is not deflate-compressed")
        expect(np.array_equal(at[...], a.T), "the transpose differs from numpy's")
        expect(f["AT"].attrs["transpose_of"] in ("a.h5:/A", b"a.h5:/A"), "no transpose_of")
        expect(int(f.attrs["complete"]) == 1, "the output is not marked complete")
    expect(not glob.glob(r.path("at.h5.*.partial")), "a .partial file was left behind")

    # Slabs of whole input rows, sized by --chunk-size: 1 MiB of 2749-column rows is 47 rows.
    p, _ = r.run(["transpose", "a.h5:/A", "ar.h5:/AT", "--memory-limit", "4MiB", "--chunk-shape",
               "rows", "--chunk-size", "1MiB"])
    expect(f"chunks of {MiB // (cols * 8)} rows" in p.stdout + p.stderr,
           "--chunk-size did not set the rows per chunk")
    with h5py.File(r.path("ar.h5"), "r") as f:
        expect(np.array_equal(f["AT"][...], a.T), "the row-slab transpose differs from numpy's")

    for axis in ("all", "rows", "cols"):
        got, rss = reduce_json(r, "a.h5:/A", axis, ["--memory-limit", "4MiB"], timed=True)
        check_reductions(got, a, axis)
        check_rss(f"reduce along {axis}", rss, base_r, limit)
        # Bit for bit the in-memory values.
        mem, _ = reduce_json(r, "a.h5:/A", axis, [])
        expect(mem["results"] == got["results"], f"along {axis}: out of core != in memory")

    # A pipeline deck streams its matrix.input the same way, with its staging keys.
    with open(r.path("ooc.toml"), "w") as f:
        f.write('[job]\nkind = "pipeline"\n[matrix]\ninput = "a.h5:/A"\n'
                '[reduce]\nops = ["sum", "max"]\naxis = "cols"\n'
                '[output]\nfile = "p.h5"\n[staging]\nmemory_limit = "4MiB"\ndepth = 2\n'
                'chunk_shape = "rows"\nchunk_size = "256KiB"\n')
    p, _ = r.run(["run", "ooc.toml"])
    slab = max(1, (256 * 1024) // (cols * 8))
    expect(re.search(rf"chunks of {slab} rows", p.stdout + p.stderr) is not None,
           f"pipeline: staging.chunk_shape/chunk_size not applied (expected slabs of {slab} rows)")
    with h5py.File(r.path("p.h5"), "r") as f:
        expect(np.array_equal(f["transpose"][...], a.T), "pipeline: /transpose differs")
        got = f["reductions/max"][...].reshape(-1)
        expect(np.array_equal(got, a.max(axis=0)), "pipeline: /reductions/max differs")


def main():
    ap = argparse.ArgumentParser()
    add_launch_args(ap)
    return drive("ooc_test", "", "tessera-ooc-", ap.parse_args(), Runner, scenario)


if __name__ == "__main__":
    sys.exit(main())
