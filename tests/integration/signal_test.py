#!/usr/bin/python3
"""A signal ends a file job promptly, says so, and leaves nothing behind.

  signal_test.py --tessera BIN --shim fault_shim.so [--mpirun MPIRUN] --np N

fault_shim.so (preloaded) stalls rank 0 inside its first collective write (generate,
transpose streamed and in memory) or read (reduce), as a stalled file system would, and marks
that it is there; the test then sends SIGINT or SIGTERM — to tessera itself at N = 0 (no
launcher), to `mpirun` otherwise (which passes SIGTERM on to every rank). The job must end with
one `tessera: stopped by SIG…` line, exit status 128 + the signal (without a launcher; mpirun
reports its own non-zero status), and remove its output's temporary and lock. Before, the
signal's default action killed the ranks and left `OUT.h5.XXXXXX.partial` and `OUT.h5.lock`.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

LIMIT = 90  # seconds: only a hang reaches it

CASES = [  # (name, tessera arguments, the call the shim stalls in)
    ("generate", ["generate", "out.h5:/A", "--rows", "64", "--cols", "48"], "write"),
    ("transpose streamed", ["transpose", "in.h5:/A", "out.h5:/AT"], "write"),
    ("transpose in memory", ["transpose", "in.h5:/A", "out.h5:/AT", "--in-memory"], "write"),
    ("reduce", ["reduce", "in.h5:/A"], "read"),
]


def run_case(args, work, name, targs, stall, sig):
    mark = os.path.join(work, "stalled")
    env = dict(os.environ, TESSERA_HDF5_IO="parallel", TESSERA_TEST_STALL=stall,
               TESSERA_TEST_STALL_MARK=mark)
    preload = "LD_PRELOAD=" + os.path.abspath(args.shim)
    cmd = [os.path.abspath(args.tessera)] + targs
    if args.np > 0:  # the shim goes to the ranks only, not to mpirun
        # mpirun kills the ranks a second after passing the signal on: time enough for tessera,
        # but not always for a loaded test machine to schedule it. The ranks see the signal
        # only about twice this timeout after mpirun does (Open MPI 4.1), so it stays short.
        cmd = [args.mpirun, "-np", str(args.np), "--mca", "odls_base_sigkill_timeout", "5",
               "-x", preload, "-x", "TESSERA_HDF5_IO",
               "-x", "TESSERA_TEST_STALL", "-x", "TESSERA_TEST_STALL_MARK"] + cmd
    else:
        env["LD_PRELOAD"] = os.path.abspath(args.shim)
    print(f"== {name}, {signal.Signals(sig).name}\n$ " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    problems = []
    deadline = time.monotonic() + LIMIT
    while not os.path.exists(mark) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not os.path.exists(mark):
        p.kill()
        out, err = p.communicate()
        return [f"{name}: the job never reached the stalled call\n{out}{err}"]
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        problems.append(f"still running {LIMIT} s after the signal")
    sys.stdout.write(out + err)
    lines = [line for line in err.splitlines() if line.startswith("tessera: stopped by SIG")]
    if len(lines) != 1:
        problems.append(f"expected one 'tessera: stopped by SIG…' line, got {len(lines)}")
    if args.np == 0 and p.returncode != 128 + sig:
        problems.append(f"exit status {p.returncode}, expected {128 + sig}")
    if p.returncode == 0:
        problems.append("exit status 0")
    left = sorted(f for f in os.listdir(work) if f.startswith("out.h5"))
    if left:
        problems.append(f"left behind: {left}")
    os.remove(mark)
    return [f"{name}, {signal.Signals(sig).name}: {prob}" for prob in problems]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--np", type=int, default=0)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tessera-signal-")
    gen = [os.path.abspath(args.tessera), "-q", "generate", "in.h5:/A", "--rows", "64", "--cols",
           "48"]
    subprocess.run(gen, cwd=work, check=True, timeout=LIMIT)
    problems = []
    for k, (name, targs, stall) in enumerate(CASES):
        sig = signal.SIGINT if k % 2 == 0 else signal.SIGTERM
        problems += run_case(args, work, name, targs, stall, sig)
    for prob in problems:
        print("FAILED: " + prob, file=sys.stderr)
    if not problems:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"files kept in {work}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
