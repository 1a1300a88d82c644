#!/usr/bin/python3
"""A collective write that fails on one rank only must not hang the job.

  abort_test.py --tessera BIN --shim fault_shim.so [--mpirun MPIRUN] [--np N]

fault_shim.so (preloaded) makes MPI_File_write_at_all fail at once on rank 1, so the other ranks
wait inside the collective write for a rank that has left it. The failing rank must end the job
after TESSERA_COLLECTIVE_TIMEOUT seconds (2 here) with its message, and remove the output's
temporary; before that bounded wait existed, the job hung until it was killed.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

LIMIT = 90  # seconds: far beyond the 2 s wait, so only a hang reaches it


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--np", type=int, default=3)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tessera-abort-")
    env = dict(os.environ, TESSERA_COLLECTIVE_TIMEOUT="2", TESSERA_HDF5_IO="parallel")
    cmd = [args.mpirun, "-np", str(args.np), "-x", "LD_PRELOAD=" + os.path.abspath(args.shim),
           "-x", "TESSERA_TEST_FAIL_RANK=1", "-x", "TESSERA_COLLECTIVE_TIMEOUT",
           "-x", "TESSERA_HDF5_IO", os.path.abspath(args.tessera), "generate", "out.h5:/A",
           "--rows", "64", "--cols", "48"]
    print("$ " + " ".join(cmd), flush=True)
    problems = []
    try:
        p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=LIMIT)
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode == 0:
            problems.append("exit status 0, though rank 1 could not write")
        if "[rank 1] tessera: fatal:" not in p.stderr:
            problems.append("rank 1 did not end the job with its message")
        if "did not come to agree on it within 2 s" not in p.stderr:
            problems.append("the message does not say why the job was aborted")
    except subprocess.TimeoutExpired as e:
        problems.append(f"the job hung: still running after {LIMIT} s\n{e.stderr}")
    left = [os.path.basename(f) for f in glob.glob(os.path.join(work, "out.h5*"))
            if not f.endswith(".lock")]  # the lock of a job killed outright may stay
    if left:
        problems.append(f"left behind: {left}")
    shutil.rmtree(work, ignore_errors=True)
    for prob in problems:
        print("FAILED: " + prob, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
