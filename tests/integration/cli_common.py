"""What the command-line tests here share: running tessera at a rank count, failing a scenario
with a message, and the frame of a driver (options, seed, temporary directory, verdict)."""
import os
import random
import shutil
import subprocess
import sys
import tempfile

# The pipeline example deck (the embedded default is a heat2d job).
PIPELINE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "inputs",
                        "pipeline.toml")
TIMEOUT = 150  # seconds per tessera invocation: a hang fails the test with a clear message


class Failure(Exception):
    pass


def expect(cond, text):
    if not cond:
        raise Failure(text)


class Launcher:
    """tessera at a rank count in a working directory: N = 0 runs it without a launcher
    (single-node test mode), N >= 1 under `mpirun -np N`."""

    def __init__(self, tessera, np_, mpirun, workdir):
        self.tessera, self.np, self.mpirun, self.dir = tessera, np_, mpirun, workdir

    def argv(self, args, prog=None):
        """The command line for tessera ARGS; PROG (a wrapper ending in tessera) replaces the
        bare binary."""
        prog = prog or [self.tessera]
        if self.np == 0:
            return prog + args
        return [self.mpirun, "-np", str(self.np)] + prog + args

    def path(self, name):
        return os.path.join(self.dir, name)


class Runner(Launcher):
    def run(self, args, expect_ok=True, env=None, prog=None):
        cmd = self.argv(args, prog)
        print("$ " + " ".join(cmd) + (f"   (with {env})" if env else ""), flush=True)
        try:
            p = subprocess.run(cmd, cwd=self.dir, capture_output=True, text=True,
                               timeout=TIMEOUT, env=dict(os.environ, **env) if env else None)
        except subprocess.TimeoutExpired as e:
            raise Failure(f"tessera did not finish within {TIMEOUT} s (hang?): {' '.join(cmd)}\n"
                          f"stdout: {e.stdout}\nstderr: {e.stderr}")
        sys.stdout.write(p.stdout)
        sys.stdout.write(p.stderr)
        if expect_ok and p.returncode != 0:
            raise Failure(f"exit status {p.returncode}: {' '.join(cmd)}")
        return p


def check(args):
    """Runs check_outputs.py's checks in-process; raises on problems."""
    import check_outputs  # here: it imports h5py and numpy, which most bad-input cases skip

    print("check_outputs " + " ".join(args), flush=True)
    if check_outputs.main(args) != 0:
        raise Failure("check_outputs " + " ".join(args))


def ranks_of(r):
    return max(r.np, 1)


def heat2d_small(r, rng, name, extra=()):
    """A heat2d run of a few steps on a random small grid; returns (nx, ny)."""
    nx, ny = rng.randint(max(ranks_of(r), 3), 40), rng.randint(max(ranks_of(r), 3), 40)
    print(f"== heat2d {nx} x {ny}")
    r.run(["run", "--set", f"output.file={name}", "--set", f"grid.nx={nx}", "--set",
           f"grid.ny={ny}", "--set", "time.steps=6", "--set", "output.snapshot_every=3",
           "--set", "output.diagnostics_every=3", *extra])
    return nx, ny


# --- the drivers' frame ----------------------------------------------------------------------

def add_launch_args(ap):
    """The options every driver takes: the binary, the launcher, the rank count and a seed."""
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--seed", type=int)


def drive(name, label, prefix, args, runner, scenario):
    """Runs scenario(runner(...), rng) in a fresh temporary directory named PREFIX..., with a
    printed seed (--seed, else a random one) so that a failure can be reproduced. A failure
    keeps the directory and says where it is. Returns the exit status."""
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
    print(f"{name}{': ' + label if label else ''} at np={args.np}, seed {seed} "
          f"(rerun with --seed {seed})", flush=True)
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix=prefix)
    r = runner(os.path.abspath(args.tessera), args.np, args.mpirun, work)
    try:
        scenario(r, rng)
    except Failure as e:
        print(f"FAILED ({label + ', ' if label else ''}np={args.np}, seed {seed}, "
              f"files kept in {work}): {e}", file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print(f"{name}: passed")
    return 0
