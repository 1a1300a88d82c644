#!/usr/bin/python3
"""A full file system: one clear error on every rank, exit status 1, nothing left behind, no
crash at the end and no hang.

  disk_full_test.py --tessera BIN [--mpirun MPIRUN] --np N

Mounts a small tmpfs (root only; exits 77, skipped, where it cannot) and runs, at N ranks
(0: without a launcher):
- generate into it when it is already full;
- generate of a matrix larger than the room left (the error comes with the file half made);
- a heat2d restart whose output and checkpoint go to it, full from the start, and with room for
  the output but not for the checkpoint.
Before, one rank ended with "closing an abandoned HDF5 file failed" and a segmentation fault
inside MPI_Finalize, and two ranks hung after the message.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

LIMIT = 90  # seconds: far beyond TESSERA_COLLECTIVE_TIMEOUT (5 here), so only a hang reaches it
SKIP = 77


def fill(mount, leave):
    """Fills the file system at MOUNT up to LEAVE bytes of room."""
    st = os.statvfs(mount)
    room = st.f_bavail * st.f_frsize
    fd = os.open(os.path.join(mount, "filler"), os.O_WRONLY | os.O_CREAT)
    try:
        os.write(fd, b"\0" * max(0, room - leave))
        while leave == 0:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    os.close(fd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--np", type=int, default=0)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tessera-diskfull-")
    mount = os.path.join(work, "small")
    os.mkdir(mount)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs",
                                            mount]).returncode != 0:
        print("skipped: cannot mount a tmpfs (needs root)")
        shutil.rmtree(work, ignore_errors=True)
        return SKIP
    env = dict(os.environ, TESSERA_COLLECTIVE_TIMEOUT="5")
    prog = [os.path.abspath(args.tessera)]
    if args.np > 0:
        prog = [args.mpirun, "-np", str(args.np), "-x", "TESSERA_COLLECTIVE_TIMEOUT"] + prog
    heat = ["run", "--set", "grid.nx=64", "--set", "grid.ny=64", "--set", "time.steps=4",
            "--set", "output.snapshot_every=1"]
    problems = []

    def expect_full(name, targs, leave, outputs):
        for f in os.listdir(mount):
            os.remove(os.path.join(mount, f))
        fill(mount, leave)
        cmd = prog + targs
        print(f"== {name}\n$ " + " ".join(cmd), flush=True)
        try:
            p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                               timeout=LIMIT)
        except subprocess.TimeoutExpired as e:
            problems.append(f"{name}: hung, still running after {LIMIT} s\n{e.stderr}")
            return
        sys.stdout.write(p.stdout + p.stderr)
        if p.returncode != 1:
            problems.append(f"{name}: exit status {p.returncode}, expected 1")
        if "No space left on device" not in p.stderr:
            problems.append(f"{name}: no 'No space left on device' message")
        for bad in ("abandoned", "Segmentation", "signal 11", "MPI_ABORT"):
            if bad in p.stderr:
                problems.append(f"{name}: '{bad}' in the output")
        left = sorted(os.path.basename(f) for o in outputs for f in glob.glob(o + "*"))
        if left:
            problems.append(f"{name}: left behind: {left}")

    ckpt = os.path.join(work, "first.ckpt.h5")
    subprocess.run(prog + heat + ["--set", "output.file=first.h5", "--set",
                                  "output.checkpoint_every=2", "--set", "time.steps=3"],
                   cwd=work, env=env, check=True, timeout=LIMIT, capture_output=True)
    out, cpt = os.path.join(mount, "out.h5"), os.path.join(mount, "c.ckpt.h5")
    restart = heat + ["--set", f"restart.file={ckpt}", "--set", f"output.file={out}",
                      "--set", f"output.checkpoint_file={cpt}", "--set",
                      "output.checkpoint_every=1"]
    try:
        expect_full("generate on a full disk", ["generate", out + ":/A", "--rows", "64",
                                                "--cols", "48"], 0, [out])
        expect_full("generate beyond the room left", ["generate", out + ":/A", "--rows", "2048",
                                                      "--cols", "1024"], 3 << 20, [out])
        expect_full("heat2d restart on a full disk", restart, 0, [out, cpt])
        # Room for the output's snapshots (about 170 KiB) and a little more: the checkpoint fails.
        expect_full("heat2d restart, no room for the checkpoint", restart, 1200 << 10,
                    [out, cpt])
    finally:
        subprocess.run(["umount", mount])
    for prob in problems:
        print("FAILED: " + prob, file=sys.stderr)
    if not problems:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
