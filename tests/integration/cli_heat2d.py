"""Command-line scenarios about heat2d runs that go on: a finished run extended with a longer
time.steps keeps its snapshots, numbered checkpoints (output.checkpoint_keep), the deck stored
by a restarted run, a run started from a snapshot of another, and `tessera check` opening the
files a deck reads."""
import os

import h5py
import numpy as np

from cli_common import PIPELINE, expect

STEPS = 8


def heat(r, nx, ny, name, steps, extra=()):
    return ["run", "--set", f"output.file={name}", "--set", f"grid.nx={nx}", "--set",
            f"grid.ny={ny}", "--set", f"time.steps={steps}", "--set", "output.snapshot_every=2",
            "--set", "output.diagnostics_every=2", "--set", "initial.kind=gaussian", *extra]


def grid(r, rng):
    n = max(r.np, 3)
    return rng.randint(n, 30), rng.randint(n, 30)


def read_run(path):
    with h5py.File(path, "r") as f:
        return (f["fields/u"][...], f["fields/step"][...], f["fields/time"][...],
                f["diagnostics/total"][...], dict(f.attrs))


def extend_run(r, rng):
    """A finished run leaves a checkpoint at its last step; `--restart` with a longer time.steps
    continues from there, keeps the earlier snapshots, and gives the bits of one straight run.
    The deck stored by the extended run names a checkpoint that later runs leave alone, and
    running it again gives the same file."""
    nx, ny = grid(r, rng)
    print(f"== {nx} x {ny}")
    r.run(heat(r, nx, ny, "straight.h5", 2 * STEPS))
    r.run(heat(r, nx, ny, "run.h5", STEPS))
    with h5py.File(r.path("run.ckpt.h5"), "r") as f:
        expect(int(f.attrs["step"]) == STEPS,
               f"the finished run's checkpoint is at step {f.attrs['step']}, not {STEPS}")
    p = r.run(heat(r, nx, ny, "run.h5", 2 * STEPS) + ["--restart", "run.ckpt.h5"])
    expect("not carried over" not in p.stdout + p.stderr, "the extension dropped snapshots")
    u, steps, times, total, attrs = read_run(r.path("run.h5"))
    u0, steps0, times0, total0, _ = read_run(r.path("straight.h5"))
    expect(list(steps) == list(steps0), f"snapshot steps {list(steps)}, straight {list(steps0)}")
    expect(np.array_equal(u, u0) and np.array_equal(times, times0),
           "the extended run's snapshots differ from one straight run's")
    expect(np.array_equal(total, total0), "the diagnostics differ from one straight run's")
    # The extension replaced run.ckpt.h5 (now at its last step); the state it started from
    # kept a numbered name, which its stored deck and restarted_from give.
    kept = r.path(f"run.ckpt.{STEPS:06d}.h5")
    expect(os.path.isfile(kept), f"no {kept}: {sorted(os.listdir(r.dir))}")
    with h5py.File(kept, "r") as f:
        expect(int(f.attrs["step"]) == STEPS, f"{kept} is at step {f.attrs['step']}")
    with h5py.File(r.path("run.ckpt.h5"), "r") as f:
        expect(int(f.attrs["step"]) == 2 * STEPS, "run.ckpt.h5 is not at the extended end")
    expect(os.path.basename(attrs["restarted_from"]) == os.path.basename(kept),
           f"restarted_from = {attrs['restarted_from']}")
    deck = r.run(["deck", "run.h5"]).stdout
    expect(f'file = "run.ckpt.{STEPS:06d}.h5"' in deck, f"the stored deck:\n{deck}")
    with open(r.path("again.toml"), "w") as fh:
        fh.write(deck)
    r.run(["run", "again.toml"])
    u2, steps2, _, _, _ = read_run(r.path("run.h5"))
    expect(list(steps2) == list(steps) and np.array_equal(u2, u),
           "the stored deck, run again, does not give the same snapshots")


def checkpoint_keep(r, rng):
    """output.checkpoint_keep = 2: every checkpoint gets a numbered name, the two newest stay,
    and NAME.ckpt.h5 is the newest; each restarts bit for bit."""
    nx, ny = grid(r, rng)
    r.run(heat(r, nx, ny, "k.h5", 3 * STEPS,
               ["--set", f"output.checkpoint_every={STEPS // 2}",
                "--set", "output.checkpoint_keep=2"]))
    names = sorted(n for n in os.listdir(r.dir) if n.startswith("k.ckpt"))
    last, before = 3 * STEPS, 3 * STEPS - STEPS // 2
    want = sorted(["k.ckpt.h5", f"k.ckpt.{before:06d}.h5", f"k.ckpt.{last:06d}.h5"])
    expect(names == want, f"checkpoints {names}, expected {want}")
    expect(os.path.samefile(r.path("k.ckpt.h5"), r.path(f"k.ckpt.{last:06d}.h5")),
           "k.ckpt.h5 is not the newest numbered checkpoint")
    u, _, _, _, _ = read_run(r.path("k.h5"))
    r.run(heat(r, nx, ny, "k2.h5", 3 * STEPS,
               ["--restart", f"k.ckpt.{before:06d}.h5"]))
    u2, _, _, _, _ = read_run(r.path("k2.h5"))
    expect(np.array_equal(u2[-1], u[-1]), "a restart from a numbered checkpoint differs")


def initial_snapshot(r, rng):
    """initial.kind = "run.h5:/fields/u[-1]" starts from the last snapshot of another run, at its
    time: the result equals one straight run. [1] picks a middle snapshot; out-of-range and 2-D
    uses are refused."""
    nx, ny = grid(r, rng)
    r.run(heat(r, nx, ny, "straight.h5", 2 * STEPS))
    r.run(heat(r, nx, ny, "first.h5", STEPS, ["--set", "output.checkpoint_file=first.c.h5"]))
    r.run(heat(r, nx, ny, "second.h5", 2 * STEPS,
               ["--set", "initial.kind=first.h5:/fields/u[-1]"]))
    u, steps, times, _, attrs = read_run(r.path("second.h5"))
    u0, steps0, times0, _, _ = read_run(r.path("straight.h5"))
    expect(steps[0] == STEPS and times[0] == times0[list(steps0).index(STEPS)],
           f"the run starts at step {steps[0]}, t = {times[0]}, not at the snapshot's")
    expect(np.array_equal(u[-1], u0[-1]), "the run from the snapshot ends elsewhere")
    r.run(heat(r, nx, ny, "mid.h5", STEPS, ["--set", "initial.kind=first.h5:/fields/u[1]"]))
    _, steps_mid, _, _, _ = read_run(r.path("mid.h5"))
    expect(steps_mid[0] == 2, f"[1] starts at step {steps_mid[0]}, expected 2")
    for spec, words in (("first.h5:/fields/u[99]", "states"),
                        ("first.h5:/fields/u", "pick one with [k]"),
                        ("first.h5:/grid/x[0]", "dimensions")):
        p = r.run(heat(r, nx, ny, "bad.h5", 2 * STEPS, ["--set", f"initial.kind={spec}"]),
                  expect_ok=False)
        expect(p.returncode != 0 and words in p.stderr, f"{spec}: {p.stderr}")
        c = r.run(["check", "--set", f"grid.nx={nx}", "--set", f"grid.ny={ny}", "--set",
                   f"initial.kind={spec}"], expect_ok=False)
        expect(c.returncode != 0 and words in c.stderr, f"check {spec}: {c.stderr}")


def check_files(r, rng):
    """`tessera check` opens the files a deck reads and reports every problem at once; a deck
    whose files are right passes."""
    nx, ny = grid(r, rng)
    with h5py.File(r.path("in.h5"), "w") as f:
        f["u"] = np.zeros((ny, nx))
        f["wrong"] = np.zeros((ny + 1, nx))
        f["cube"] = np.zeros((2, 2, 2))
        f["A"] = np.ones((5, 4))
        f["Z"] = np.ones((5, 4), dtype=np.complex128)
    base = ["check", "--set", f"grid.nx={nx}", "--set", f"grid.ny={ny}"]
    r.run(base + ["--set", "initial.kind=in.h5:/u"])
    # Settings and files together, in one message.
    p = r.run(base + ["--set", "initial.kind=nope.h5:/u", "--set", "time.dt=0"],
              expect_ok=False)
    expect(p.returncode != 0 and "2 problems" in p.stderr and "initial.kind" in p.stderr and
           "time.dt" in p.stderr and "nope.h5" in p.stderr, f"missing file:\n{p.stderr}")
    p = r.run(base + ["--set", "restart.file=nope.h5"], expect_ok=False)
    expect(p.returncode != 0 and "restart.file" in p.stderr and "nope.h5" in p.stderr,
           f"missing checkpoint:\n{p.stderr}")
    for spec, words in (("in.h5:/nope", "/nope"), ("in.h5:/wrong", f"{ny + 1} x {nx}"),
                        ("in.h5:/cube[0]", "states of 2 x 2")):
        p = r.run(base + ["--set", f"initial.kind={spec}"], expect_ok=False)
        expect(p.returncode != 0 and words in p.stderr, f"{spec}:\n{p.stderr}")
    p = r.run(base + ["--set", "restart.file=in.h5"], expect_ok=False)
    expect(p.returncode != 0 and "not a heat2d checkpoint" in p.stderr, p.stderr)
    pipe = ["check", PIPELINE, "--set", "output.file="]
    r.run(pipe + ["--set", "matrix.input=in.h5:/A"])
    for spec, words in (("in.h5:/nope", "/nope"), ("nope.h5:/A", "nope.h5"),
                        ("in.h5:/cube", "rank 3"), ("in.h5:/Z", "reduce.enabled = false")):
        p = r.run(pipe + ["--set", f"matrix.input={spec}"], expect_ok=False)
        expect(p.returncode != 0 and words in p.stderr, f"{spec}:\n{p.stderr}")
    expect(not [n for n in os.listdir(r.dir) if n.endswith((".partial", ".lock"))],
           f"check left files: {os.listdir(r.dir)}")
