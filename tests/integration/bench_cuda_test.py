#!/usr/bin/python3
"""`tessera bench … --backend cuda --json` end to end (registered by tests/CMakeLists.txt).

  bench_cuda_test.py --tessera BIN [--mpirun MPIRUN] --np N

N = 0 runs tessera without a launcher: a c64 transpose of an awkward shape on device memory
and staged from pinned host memory, a benchmark matrix of shapes and types in one command,
and reductions along each axis. N >= 2 runs the
distributed transpose (`bench exchange`) under `mpirun -np N`. Every report must be one JSON
line whose "checked" starts with "yes". Exits 77 (ctest SKIP_RETURN_CODE) when `tessera info`
shows no usable GPU.
"""
import argparse
import json
import subprocess
import sys

TIMEOUT = 150  # seconds per tessera invocation: a hang fails the test with a clear message
SKIP = 77


def run(cmd):
    print("$", " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        sys.exit(f"FAIL: no answer within {TIMEOUT} s: {' '.join(cmd)}")
    if p.stderr:
        print(p.stderr, end="", file=sys.stderr)
    return p


def has_gpu(tessera):
    p = run([tessera, "info"])
    if p.returncode != 0:
        sys.exit(f"FAIL: tessera info exited {p.returncode}:\n{p.stdout}")
    gpu_lines = [line for line in p.stdout.splitlines() if line.strip().startswith("GPUs")]
    return bool(gpu_lines) and not gpu_lines[0].split()[1].startswith("none")


def bench(prefix, args, expect):
    p = run(prefix + args)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit status {p.returncode}:\n{p.stdout}")
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    if len(lines) != 1:
        sys.exit(f"FAIL: expected one JSON line on stdout, got:\n{p.stdout}")
    r = json.loads(lines[0])
    print(json.dumps(r))
    problems = []
    if not str(r.get("checked", "")).startswith("yes"):
        problems.append(f"checked = {r.get('checked')!r}")
    if r.get("backend") != "cuda":
        problems.append(f"backend = {r.get('backend')!r}")
    for key, want in expect.items():
        if r.get(key) != want:
            problems.append(f"{key} = {r.get(key)!r}, expected {want!r}")
    for key in ("gbps", "fraction"):
        if not isinstance(r.get(key), (int, float)) or r[key] <= 0:
            problems.append(f"{key} = {r.get(key)!r}, expected a positive number")
    if problems:
        sys.exit("FAIL: " + "; ".join(problems))
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--np", type=int, default=0)
    a = ap.parse_args()
    if not has_gpu(a.tessera):
        print("SKIP: tessera info shows no usable GPU")
        return SKIP
    common = ["--backend", "cuda", "--repeat", "2", "--warmup", "1", "--json"]
    return one_rank(a.tessera, common) if a.np == 0 else several_ranks(a, common)


def one_rank(tessera, common):
    t = [tessera, "bench", "transpose", "--rows", "257", "--cols", "131", "--dtype", "c64"]
    r = bench(t, common, {"memory": "device"})
    if r["reference"]["name"] != "copy" or not r.get("geam_gbps", 0) > 0:
        sys.exit(f"FAIL: reference {r['reference']!r}, geam_gbps {r.get('geam_gbps')!r}")
    # Pinned host memory: rows off the 128-byte lines go staged, rows on them through one
    # kernel over the link; both beside the staged pipeline, both checked.
    aligned = [tessera, "bench", "transpose", "--rows", "257", "--cols", "512", "--dtype", "f32"]
    for cmd, path in ((t, "staged"), (aligned, "mapped")):
        r = bench(cmd + ["--memory", "host"], common, {"memory": "host"})
        names = [p["name"] for p in r["phases"]]
        if names != ["h2d (alone)", "kernel (alone)", "d2h (alone)", "staged pipeline"]:
            sys.exit(f"FAIL: phases {r['phases']!r}")
        if r.get("kernel") != path:
            sys.exit(f"FAIL: path {r.get('kernel')!r}, expected {path}")
        for key in ("total_over_slowest_phase", "staged_over_slowest_phase"):
            if not r.get(key, 0) > 0:
                sys.exit(f"FAIL: no {key}")
    matrix(tessera, common)
    for axis in ("all", "rows", "cols"):
        for dtype in ("f32", "f64"):
            r = bench([tessera, "bench", "reduce", "--rows", "257", "--cols", "131", "--dtype",
                       dtype, "--op", "sum,mean,min,max,norm1,norm2,norminf", "--axis", axis],
                      common, {"memory": "device"})
            if r["reference"]["name"] != "cub":
                sys.exit(f"FAIL: reference {r['reference']!r}")
    print("PASS")
    return 0


def matrix(tessera, common):
    """A benchmark matrix in one command: one JSON line per shape and type, each with the
    kernel chosen and the copy, geam and textbook-tile figures of the same run."""
    p = run([tessera, "bench", "transpose", "--shapes", "257x131,17x1000,1000x3",
             "--dtype", "f32,c128", "--variants"] + common)
    if p.returncode != 0:
        sys.exit(f"FAIL: exit status {p.returncode}:\n{p.stdout}")
    reports = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    if [(r["rows"], r["cols"], r["dtype"]) for r in reports] != [
            (257, 131, "f32"), (257, 131, "c128"), (17, 1000, "f32"), (17, 1000, "c128"),
            (1000, 3, "f32"), (1000, 3, "c128")]:
        sys.exit(f"FAIL: the matrix ran {[(r['rows'], r['cols'], r['dtype']) for r in reports]}")
    for r in reports:
        problems = [k for k in ("copy_gbps", "geam_gbps", "tile_gbps") if not r.get(k, 0) > 0]
        if not str(r.get("checked", "")).startswith("yes") or not r.get("kernel") or problems:
            sys.exit(f"FAIL: {json.dumps(r)} (missing or zero: {problems})")
        if not any(k.startswith("variant ") for k in r):
            sys.exit(f"FAIL: --variants timed no variant: {json.dumps(r)}")


def several_ranks(a, common):
    prefix = [a.mpirun, "-np", str(a.np), a.tessera]
    for algorithm in ("auto", "alltoallv", "pairwise", "pipelined"):
        r = bench(prefix + ["bench", "exchange", "--rows", "257", "--cols", "131", "--dtype",
                            "c64", "--algorithm", algorithm], common,
                  {"memory": "device", "ranks": a.np})
        if algorithm != "auto" and r.get("algorithm") != algorithm:
            sys.exit(f"FAIL: algorithm = {r.get('algorithm')!r}, expected {algorithm!r}")
    bench(prefix + ["bench", "reduce", "--rows", "257", "--cols", "131", "--dtype", "f64",
                    "--op", "sum,max,norm2", "--axis", "cols"], common, {"ranks": a.np})
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
