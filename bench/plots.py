#!/usr/bin/python3
"""The figures of the docs (docs/img/*.png), regenerated from measured data in the repository.

  /usr/bin/python3 bench/plots.py convergence   # docs/verification.md's convergence tables
  /usr/bin/python3 bench/plots.py field [--file OUT.h5 | --tessera BIN]
                                                # the last snapshot of a heat2d output
  /usr/bin/python3 bench/plots.py bench         # bench/RESULTS.md's tables as bar charts
  /usr/bin/python3 bench/plots.py jobs          # bench/RESULTS.md's whole-job table: time
                                                # against file size, tessera beside the others
  /usr/bin/python3 bench/plots.py layouts       # docs/layouts.md: who owns which element
  /usr/bin/python3 bench/plots.py all [--tessera BIN]

Nothing is measured here: the numbers are the tables the docs show (update a table, rerun its
command), the layouts follow the owner rules docs/layouts.md states, and the field is read from an output file — one given with --file, or one that
`tessera run` writes in a temporary directory (--tessera, default build/dev/src/app/tessera
when it exists). Needs matplotlib and numpy (Debian: python3-matplotlib), h5py for `field`.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMG = os.path.join(ROOT, "docs", "img")
VERIFICATION = os.path.join(ROOT, "docs", "verification.md")
RESULTS = os.path.join(ROOT, "bench", "RESULTS.md")


def tables(path):
    """The markdown tables of a file: a list of (heading and text before it, header, rows)."""
    out, context, lines = [], [], open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[-| ]+\|$", lines[i + 1]):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            out.append(("\n".join(context[-12:]), header, rows))
            continue
        context.append(line)
        i += 1
    return out


def number(cell):
    """The first number in a table cell ('**0.68**', '0.906 (faster than geam)', '10.9×')."""
    m = re.search(r"-?\d+(\.\d+)?(e[-+]?\d+)?", cell.replace("**", ""))
    return float(m.group(0)) if m else math.nan


def save(fig, name):
    os.makedirs(IMG, exist_ok=True)
    path = os.path.join(IMG, name)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {os.path.relpath(path, ROOT)}")


def convergence(args):
    found = [(ctx, h, rows) for ctx, h, rows in tables(VERIFICATION)
             if h[:2] == ["cells", "nx = ny"] and "l2_error" in h]
    if not found:
        sys.exit(f"{VERIFICATION}: no convergence table (columns cells, nx = ny, l2_error)")
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for ctx, header, rows in found:
        paragraph = ctx.strip().split("\n\n")[-1]  # the text just above the table
        label = "periodic" if paragraph.strip().startswith("Periodic") else "Dirichlet"
        cells = np.array([number(r[0]) for r in rows])
        for col, marker in (("l2_error", "o"), ("linf_error", "s")):
            err = np.array([number(r[header.index(col)]) for r in rows])
            ax.loglog(cells, err, marker=marker, label=f"{label}, {col}")
    # The second-order slope through the first point of the first table's l2 error.
    _, header, rows = found[0]
    c0, e0 = number(rows[0][0]), number(rows[0][header.index("l2_error")])
    cells = np.array([number(r[0]) for r in rows])
    ax.loglog(cells, e0 * (c0 / cells) ** 2, "k--", label="slope −2 (second order)")
    ax.set_xlabel("cells per direction (h and Δt halved together)")
    ax.set_ylabel("error at t = 0.05")
    ax.set_title("heat2d (Peaceman–Rachford ADI): convergence of the sine case")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    save(fig, "heat2d-convergence.png")


def default_tessera():
    for p in ("build/dev/src/app/tessera", "build/release/src/app/tessera"):
        if os.access(os.path.join(ROOT, p), os.X_OK):
            return os.path.join(ROOT, p)
    return None


def field(args):
    import h5py
    path = args.file
    tmp = None
    if not path:
        tessera = args.tessera or default_tessera()
        if not tessera:
            sys.exit("field: give --file OUT.h5, or --tessera BIN to run a heat2d case")
        tmp = tempfile.mkdtemp(prefix="tessera-plots-")
        path = os.path.join(tmp, "heat.h5")
        # A Gaussian spreading on the unit square: the embedded default deck with another start.
        cmd = [tessera, "-q", "run", "--set", "output.file=heat.h5", "--set", "initial.kind=gaussian",
               "--set", "grid.nx=128", "--set", "grid.ny=96", "--set", "grid.lx=1.5", "--set",
               "time.steps=100", "--set", "time.dt=2e-4", "--set", "output.snapshot_every=50"]
        print("$ " + " ".join(cmd))
        subprocess.run(cmd, cwd=tmp, check=True)
    with h5py.File(path, "r") as f:
        u = f["fields/u"]
        x, y, t = f["grid/x"][...], f["grid/y"][...], f["fields/time"][...]
        first, last = u[0], u[-1]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    vmax = max(first.max(), last.max())
    for ax, data, when in ((axes[0], first, t[0]), (axes[1], last, t[-1])):
        im = ax.pcolormesh(x, y, data, shading="auto", cmap="inferno", vmin=0, vmax=vmax)
        ax.set_aspect("equal")
        ax.set_title(f"u at t = {when:.3g}")
        ax.set_xlabel("x")
    axes[0].set_ylabel("y")
    fig.colorbar(im, ax=axes, shrink=0.85, label="u")
    fig.suptitle(f"heat2d output {os.path.basename(path)}: /fields/u, first and last snapshot")
    save(fig, "heat2d-field.png")
    if tmp:
        subprocess.run(["rm", "-rf", tmp], check=False)


def bars(ax, labels, series, ylabel, title, target=None):
    n = len(series)
    width = 0.8 / n
    xs = np.arange(len(labels))
    for k, (name, values) in enumerate(series):
        ax.bar(xs + (k - (n - 1) / 2) * width, values, width, label=name)
    if target is not None:
        ax.axhline(target, color="k", ls=":", lw=1, label=f"target {target:g}")
    ax.set_xticks(xs, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def bench(args):
    all_tables = tables(RESULTS)

    def table(first_cols):
        for ctx, header, rows in all_tables:
            if header[:len(first_cols)] == first_cols:
                return header, rows
        sys.exit(f"{RESULTS}: no table with the columns {first_cols}")

    def column(header, rows, name):
        return [number(r[header.index(name)]) for r in rows]

    def anchor(cell, name):
        """The figure after `name` in an anchor cell ('memcpy 42.3, HPTT 27.5')."""
        m = re.search(re.escape(name) + r"\S*\s+(\d+(\.\d+)?)", cell)
        return float(m.group(1)) if m else math.nan

    # CPU: the newest rounds (the first table of the CPU section): tessera, memcpy and HPTT.
    header, rows = table(["shape", "tessera", "memcpy", "/ memcpy", "HPTT (MEASURE)"])
    local = [r for r in rows if not r[0].startswith(("distributed", "the same"))]
    fig, ax = plt.subplots(figsize=(8, 4))
    bars(ax, [r[0].split(" (")[0] for r in local],
         [("tessera", column(header, local, "tessera")),
          ("memcpy", column(header, local, "memcpy")),
          ("HPTT (MEASURE)", column(header, local, "HPTT (MEASURE)"))],
         "GB/s", "CPU local transpose, 1 rank × 2 threads (bench/RESULTS.md)")
    save(fig, "bench-cpu.png")

    # CPU distributed transpose: tessera against FFTW's MPI transpose, same rounds.
    dist = [r for r in rows if "compare_fftw" in r[0]]
    fig, ax = plt.subplots(figsize=(7, 4))
    bars(ax, [r[0].split(",")[0].replace("distributed ", "") for r in dist],
         [("FFTW (FFTW_MEASURE)", [anchor(r[header.index("HPTT (MEASURE)")], "FFTW")
                                  for r in dist]),
          ("tessera TransposePlan", column(header, dist, "tessera"))],
         "GB/s", "distributed transpose, 2 ranks × 1 thread (bench/RESULTS.md)")
    save(fig, "bench-fftw.png")

    # GPU transpose: tessera, cuBLAS geam and the textbook tile as fractions of a device copy.
    header, rows = table(["shape", "dtype", "kernel chosen", "copy GB/s"])
    fig, ax = plt.subplots(figsize=(10, 4))
    bars(ax, [f"{r[0]} {r[1]}" for r in rows],
         [("cuBLAS geam", column(header, rows, "geam")),
          ("textbook tile", column(header, rows, "textbook tile")),
          ("tessera", column(header, rows, "tessera"))],
         "fraction of cudaMemcpy D2D", "GPU transpose, NVIDIA H200 (bench/RESULTS.md)")
    ax.axhline(1.0, color="grey", lw=1)
    save(fig, "bench-gpu-transpose.png")

    # GPU reductions: tessera as a fraction of cub::DeviceReduce::Sum.
    header, rows = table(["shape", "dtype", "cub GB/s (all)"])
    fig, ax = plt.subplots(figsize=(9, 4))
    ops = [h for h in header if h.startswith("sum ")]
    bars(ax, [f"{r[0]} {r[1]}" for r in rows],
         [(op, column(header, rows, op)) for op in ops],
         "fraction of cub::DeviceReduce::Sum", "GPU reductions, NVIDIA H200 (bench/RESULTS.md)")
    ax.axhline(1.0, color="grey", lw=1)
    save(fig, "bench-gpu-reduce.png")


def jobs(args):
    """Whole jobs (bench/jobs.sh): seconds against file size, one line per command, the limit
    (cp, cat) dashed. Reads the table whose header starts `job | 8 MiB`."""
    found = [(ctx, h, rows) for ctx, h, rows in tables(RESULTS)
             if h and h[0] == "job" and len(h) > 2 and "MiB" in h[1] + h[2]]
    if not found:
        sys.exit(f"{RESULTS}: no whole-job table (columns job, 8 MiB (1024²), …)")
    ctx, header, rows = found[0]
    sizes = []
    for h in header[1:]:
        m = re.match(r"([\d.]+) (MiB|GiB)", h)
        sizes.append(float(m.group(1)) * (1 if m.group(2) == "MiB" else 1024) if m else math.nan)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax, prefix, title in ((axes[0], "transpose", "transpose, file to file"),
                              (axes[1], "reduce", "sum, norm2, max of a file")):
        for r in rows:
            if not r[0].startswith(prefix):
                continue
            name = r[0][len(prefix):].strip(" :")
            y = np.array([number(c) if c not in ("", "-", "—") else math.nan for c in r[1:]])
            x = np.array(sizes)
            ok = ~np.isnan(y)
            limit = name in ("cp", "cat")
            ax.plot(x[ok], y[ok], "--" if limit else "-o", color="grey" if limit else None,
                    lw=2.5 if "tessera" in name else 1.5, label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("file size (MiB)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("seconds, start to exit (median of 3)")
    fig.suptitle("whole jobs, start to exit, in the page cache (bench/jobs.sh, bench/RESULTS.md)",
                 fontsize=9)
    save(fig, "jobs.png")


def layouts(args):
    """The layouts of docs/layouts.md on a 12 × 12 matrix over 4 ranks, each element coloured by
    the rank that owns it: the owner rules as docs/layouts.md states them (block sizes as
    BlockDistribution splits, ScaLAPACK's block-cyclic owner (i // mb + rsrc) mod pr)."""
    m = n = 12

    def split(length, parts):  # BlockDistribution: the first length % parts blocks one longer
        q, r = divmod(length, parts)
        edges = [0]
        for k in range(parts):
            edges.append(edges[-1] + q + (1 if k < r else 0))
        return edges

    def block_of(i, edges):
        return next(k for k in range(len(edges) - 1) if edges[k] <= i < edges[k + 1])

    rows4, cols4, half = split(m, 4), split(n, 4), split(m, 2)
    panels = [
        ("row blocks (4 ranks)", lambda i, j: block_of(i, rows4)),
        ("column blocks (4 ranks)", lambda i, j: block_of(j, cols4)),
        ("2-D blocks, 2 × 2 grid (row order)",
         lambda i, j: 2 * block_of(i, half) + block_of(j, half)),
        ("block-cyclic 2 × 3 blocks, 2 × 2 grid", lambda i, j: 2 * ((i // 2) % 2) + (j // 3) % 2),
    ]
    colors = plt.get_cmap("tab10").colors[:4]
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.9))
    for ax, (title, owner) in zip(axes, panels):
        grid = np.array([[owner(i, j) for j in range(n)] for i in range(m)])
        rgb = np.array([[colors[o] for o in row] for row in grid])
        ax.imshow(rgb, interpolation="nearest")
        for i in range(m):
            for j in range(n):
                ax.text(j, i, str(grid[i, j]), ha="center", va="center", fontsize=6, color="white")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(title, fontsize=9)
    fig.suptitle("which rank holds each element of a 12 × 12 matrix (docs/layouts.md)", fontsize=9)
    save(fig, "layouts.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["convergence", "field", "bench", "jobs", "layouts", "all"])
    ap.add_argument("--file", help="field: a heat2d output to draw")
    ap.add_argument("--tessera", help="field: the tessera binary that writes one")
    args = ap.parse_args()
    for name, fn in (("convergence", convergence), ("field", field), ("bench", bench),
                     ("jobs", jobs), ("layouts", layouts)):
        if args.what in (name, "all"):
            fn(args)


if __name__ == "__main__":
    main()
