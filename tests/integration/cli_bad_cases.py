"""The bad-input cases of the command line (cli_test.py's `bad CASE`, each registered at 1 and
3 ranks): each must fail with a clear message, a non-zero exit and one "tessera: " line, on every
rank without an abort or a hang, and leave no file behind."""
import os
import re
import subprocess

from cli_common import PIPELINE, Runner, expect


def make_h5(r):
    """Input files for the bad-input cases, written with h5py."""
    import h5py  # here: most cases need neither h5py nor numpy (cli_test.py)
    import numpy as np

    with h5py.File(r.path("in.h5"), "w") as f:
        f["A"] = np.arange(12.0).reshape(3, 4)
        f["v"] = np.arange(5.0)                       # 1-D
        f["cube"] = np.zeros((2, 3, 4))               # 3-D
        f["ints"] = np.arange(12, dtype=np.int32).reshape(3, 4)
        f["text"] = np.array([[b"ab", b"cd"]])
        f["empty"] = np.zeros((0, 5))
        f["C"] = np.ones((3, 4), dtype=np.complex128)


def on_h5(*argv):
    """A case that runs ARGV on in.h5 (make_h5)."""
    return lambda r: (make_h5(r), list(argv))[1]


def deck(r, text):
    with open(r.path("bad.toml"), "w") as fh:
        fh.write(text)
    return "bad.toml"


def nan_field(r):
    """A 3 x 4 initial field with one NaN."""
    import h5py
    import numpy as np

    u = np.ones((3, 4))
    u[1, 2] = np.nan
    with h5py.File(r.path("nan.h5"), "w") as f:
        f["u"] = u
    return "nan.h5"


HEAT2D_DECK = os.path.join(os.path.dirname(PIPELINE), "heat2d.toml")
BAD = {
    # name: (setup(r) -> argv, regex on stderr[, regex stderr must not match])
    "bench_chunk_without_host_staging": (
        lambda r: ["bench", "transpose", "--backend", "cpu", "--chunk-size", "16MiB"],
        r"bench: --chunk-size takes a positive size and applies to the host-staged transpose only"),
    "bench_bad_shape": (lambda r: ["bench", "transpose", "--shapes", "64x64,16x"],
                        r"bench: --shapes takes ROWSxCOLS entries with positive sizes, got '16x'"),
    "bench_redistribute_bad_layout": (
        lambda r: ["bench", "redistribute", "--rows", "8", "--cols", "8", "--to", "bc:4x4:9x9"],
        r"bench redistribute: layout 'bc:4x4:9x9' is not rows, cols, 2d:PRxPC or bc:MBxNB:PRxPC"),
    "bench_reduce_complex_in_list": (lambda r: ["bench", "reduce", "--dtype", "f32,c64"],
                                     r"bench reduce: --dtype must be f32 or f64, got c64"),
    "missing_deck": (lambda r: ["run", "no-such-deck.toml"],
                     r"deck file 'no-such-deck\.toml' not found"),
    "malformed_toml": (lambda r: ["run", deck(r, '[output]\nfile = "out.h5"\n[matrix\nrows = 3\n')],
                       r"bad\.toml:3:\d+: malformed TOML"),
    "unknown_key": (lambda r: ["run", deck(r, '[output]\nfile = "out.h5"\n[matrix]\nrowz = 3\n')],
                    r"bad\.toml:4: matrix\.rowz: unknown key"),
    "unknown_table": (lambda r: ["check", deck(r, '[matrix]\nrows = 3\n[mesh]\nx = 1\n')],
                      r"bad\.toml:3: mesh: unknown table \[mesh\]"),
    "wrong_type": (lambda r: ["run", deck(r, '[output]\nfile = "out.h5"\n[matrix]\nrows = "many"\n')],
                   r"bad\.toml:4: matrix\.rows: expected an integer, got a string"),
    "wrong_type_set": (lambda r: ["run", PIPELINE, "--set", "output.file=out.h5",
                                  "--set", "transpose.enabled=3"],
                       r"--set: transpose\.enabled: expected a boolean"),
    "bad_choice": (lambda r: ["run", PIPELINE, "--set", "output.file=out.h5", "--set",
                            "reduce.axis=diag"],
                   r"--set: reduce\.axis: 'diag' is not one of all, rows, cols"),
    "heat2d_bad_line_solve": (lambda r: ["run", "--set", "solver.line_solve=thomas"],
                              r"--set: solver\.line_solve: 'thomas' is not one of transpose, "
                              r"distributed"),
    "unknown_kind": (lambda r: ["run", deck(r, '[job]\nkind = "nothing"\n')],
                     r"bad\.toml:2: job\.kind: unknown job kind 'nothing'"),
    "deck_not_tessera": (on_h5("deck", "in.h5"),
                         r"'in\.h5' has no deck attribute: it was not written by tessera"),
    "deck_no_deck": (lambda r: (make_h5(r), subprocess.run(
        Runner(r.tessera, 0, r.mpirun, r.dir).argv(["transpose", "in.h5:/A", "t.h5:/T"]),
        cwd=r.dir, capture_output=True, check=True), ["deck", "t.h5"])[2],
                     r"'t\.h5' was written by a command that takes no deck \(`.*transpose"),
    "deck_missing_file": (lambda r: ["deck", "no-such.h5"], r"cannot open 'no-such\.h5'"),
    "missing_input_file": (lambda r: ["transpose", "no-such.h5:/A", "out.h5:/AT"],
                           r"no-such\.h5"),
    "missing_input_deck": (lambda r: ["run", PIPELINE, "--set", 'matrix.input=no-such.h5:/A',
                                      "--set", "output.file=out.h5"], r"no-such\.h5"),
    "missing_dataset": (on_h5("transpose", "in.h5:/B", "out.h5:/BT"), r"/B\b"),
    "wrong_rank_1d": (on_h5("transpose", "in.h5:/v", "out.h5:/vt"),
                      r"/v\b.*(2-D|1-D|dimension|rank)"),
    "wrong_rank_3d": (on_h5("reduce", "in.h5:/cube"), r"/cube\b.*(2-D|3-D|dimension|rank)"),
    "permute_without_axes": (on_h5("transpose", "in.h5:/cube", "out.h5:/c"),
                             r"/cube has rank 3.*--axes"),
    "permute_bad_axes": (on_h5("transpose", "in.h5:/cube", "out.h5:/c", "--axes", "0,1,1"),
                         r"--axes 0,1,1: dimension '1' of .*/cube is named twice"),
    "permute_unknown_axis": (on_h5("transpose", "in.h5:/cube", "out.h5:/c", "--axes",
                                   "time,0,1"),
                             r"'time' is neither a dimension of .*/cube"),
    "reduce_dims_all": (on_h5("reduce", "in.h5:/cube", "--dims", "0,1,2", "--output", "out.h5"),
                        r"--dims names every dimension of .*/cube; keep at least one"),
    "reduce_dims_no_output": (on_h5("reduce", "in.h5:/cube", "--dims", "1"),
                              r"--dims writes one variable per op: name the file with --output"),
    "unsupported_string": (on_h5("reduce", "in.h5:/text", "--json"), r"/text\b.*(type|string)"),
    "complex_reduce": (on_h5("reduce", "in.h5:/C"), r"f32 or f64.*c128"),
    "empty_dataset": (on_h5("transpose", "in.h5:/empty", "out.h5:/E"),
                      r"in\.h5:/empty is empty \(0x5\)"),
    "unwritable_dir": (lambda r: ["generate", "no-such-dir/out.h5:/A", "--rows", "3", "--cols",
                                  "4"], r"no-such-dir/out\.h5"),
    "output_parent_is_file": (lambda r: (open(r.path("plainfile"), "w").close(),
                                         ["run", PIPELINE, "--set",
                                          "output.file=plainfile/out.h5"])[1],
                              r"plainfile/out\.h5"),
    "zero_rows": (lambda r: ["generate", "out.h5:/A", "--rows", "0", "--cols", "5"],
                  r"zero-size matrix: --rows 0 --cols 5"),
    "zero_cols_deck": (lambda r: ["run", PIPELINE, "--set", "matrix.cols=0", "--set",
                                     "output.file=out.h5"],
                       r"--set: matrix\.cols: must be at least 1, got 0"),
    "same_file": (on_h5("transpose", "in.h5:/A", "./in.h5:/AT"), r"also the input file"),
    "memory_limit": (on_h5("transpose", "in.h5:/A", "out.h5:/AT", "--memory-limit", "64B"),
                     r"memory limit of 64 B per rank is too small to transpose .* chunks of "
                     r"one (row|column) already need"),
    "bad_size": (on_h5("transpose", "in.h5:/A", "out.h5:/AT", "--memory-limit", "lots"),
                 r"--memory-limit: 'lots' is not a size"),
    "bad_ref": (lambda r: ["generate", "out.h5", "--rows", "3", "--cols", "4"],
                r"FILE\.h5:/dataset"),
    "bad_op": (on_h5("reduce", "in.h5:/A", "--op", "sum,median"), r"median"),
    # Decks: `check` refuses what `run` refuses, every problem at once, each naming its key.
    "deck_empty": (lambda r: ["run", deck(r, "")], r"bad\.toml: the deck is empty"),
    "deck_truncated": (lambda r: ["run", deck(r, open(HEAT2D_DECK).read().split("[job]")[0])],
                       r"bad\.toml: the deck is empty"),
    "deck_deep_header": (lambda r: ["check", deck(r, '[job]\nkind = "heat2d"\n[' +
                                                  ".".join(["a"] * 40000) + "]\n")],
                         r"bad\.toml:3: keys, tables and arrays nest more than 64 levels"),
    "heat2d_many_check": (
        lambda r: ["check"] + [a for kv in ("time.dt=0", "grid.nx=0", "time.steps=-5",
                                            "physics.alpha=nan", "grid.lx=-1",
                                            "boundary.value=inf", "output.checkpoint_every=-1",
                                            "output.snapshot_queue=0", "physics.alpah=2")
                               for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"9 problems:", r"time\.dt: must be greater than 0, got 0",
            r"grid\.nx: must be at least 1", r"time\.steps: must be at least 0",
            r"physics\.alpha: must be a finite number, got nan", r"grid\.lx: must be greater",
            r"boundary\.value: must be a finite number, got inf", r"output\.checkpoint_every:",
            r"output\.snapshot_queue: must be at least 1",
            r"physics\.alpah: unknown key; did you mean physics\.alpha\?"))),
    "heat2d_many_run": (
        lambda r: ["run"] + [a for kv in ("time.dt=-1", "physics.alpha=0", "grid.lx=1e-300",
                                          "grid.ny=0", "boundary.value=inf",
                                          "output.file=out.h5")
                             for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"5 problems:", r"time\.dt: must be greater than 0, got -1",
            r"physics\.alpha: must be greater than 0, got 0",
            r"grid\.lx: 1e-300 over grid\.nx = 256 unknowns .* underflows",
            r"grid\.ny: must be at least 1", r"boundary\.value: must be a finite"))),
    "pipeline_many_check": (
        lambda r: ["check", PIPELINE] + [a for kv in ("reduce.ops=[]", "staging.memory_limit=lots",
                                                      "staging.chunk_shape=diag", "matrix.rowz=3")
                                         for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"4 problems:", r"reduce\.ops: is empty", r"staging\.memory_limit: 'lots' is not",
            r"staging\.chunk_shape: 'diag' is not one of rows, columns",
            r"matrix\.rowz: unknown key; did you mean matrix\.rows\?"))),
    "pipeline_many_run": (
        lambda r: ["run", PIPELINE] + [a for kv in ('reduce.ops=["sum","sum"]',
                                                    "staging.memory_limit=lots",
                                                    "staging.chunk_shape=diag",
                                                    "output.file=out.h5")
                                       for a in ("--set", kv)],
        "(?s)" + "".join(f"(?=.*{p})" for p in (
            r"3 problems:", r"reduce\.ops: lists 'sum' twice",
            r"staging\.memory_limit: 'lots' is not", r"staging\.chunk_shape: 'diag'"))),
    "heat2d_nan_initial": (lambda r: ["run", "--set", f"initial.kind={nan_field(r)}:/u",
                                      "--set", "grid.nx=4", "--set", "grid.ny=3",
                                      "--set", "output.file=out.h5"],
                           r"numerical error: heat2d: the initial field \(step 0, initial\.kind = "
                           r"nan\.h5:/u\) is not finite"),
    "pipeline_generated_too_big": (lambda r: ["run", PIPELINE, "--set", "output.file=out.h5",
                                              "--set", "staging.memory_limit=1KiB"],
                                   r"resource error: the generated 1000x999 f64 matrix needs "
                                   r".* per rank, more than staging\.memory_limit 1\.00 KiB; "
                                   r"only a matrix read from a file streams out of core"),
    # Who owns an output: devices, FIFOs and links to them are refused, names too long for the
    # file system fail before MPI-IO sees them, a second writer fails at once (the lock held
    # here as another job would hold it), a checkpoint may not be the output.
    "output_dev_null": (lambda r: ["generate", "/dev/null:/A", "--rows", "3", "--cols", "4"],
                        r"'/dev/null' is a character device, not a regular file"),
    "output_fifo": (lambda r: (os.mkfifo(r.path("pipe.h5")),
                               ["generate", "pipe.h5:/A", "--rows", "3", "--cols", "4"])[1],
                    r"'pipe\.h5' is a FIFO"),
    "output_link_to_device": (lambda r: (os.symlink("/dev/null", r.path("null.h5")),
                                         ["run", PIPELINE, "--set", "output.file=null.h5"])[1],
                              r"'/dev/null' \(where the link 'null\.h5' points\) is a "
                              r"character device"),
    "output_name_too_long": (lambda r: ["generate", "n" * 250 + ".h5:/A", "--rows", "3",
                                        "--cols", "4"],
                             r"its file name has 253 characters; at most 240 fit"),
    # A heat2d output's sidecar NAME.xmf is written at the end of the run; a name it cannot
    # take must fail before the run (no step after the initial state reported), not after it.
    "sidecar_is_directory": (lambda r: (os.mkdir(r.path("heat.h5.xmf")),
                                        ["run", "--set", "output.file=heat.h5", "--set",
                                         "output.diagnostics_every=1"])[1],
                             r"'heat\.h5\.xmf' is a directory, not a regular file",
                             r"step [1-9]\d*/"),
    "output_path_too_long": (lambda r: ["generate", "d" * 5000 + "/out.h5:/A", "--rows", "3",
                                        "--cols", "4"],
                             r"the directory name 'd+\.\.\.' has 5000 characters"),
    "output_written_elsewhere": (lambda r: (
        (fd := os.open(r.path("out.h5.lock"), os.O_RDWR | os.O_CREAT)),
        __import__("fcntl").flock(fd, __import__("fcntl").LOCK_EX),
        os.write(fd, b"4242 elsewhere\n"),
        ["generate", "out.h5:/A", "--rows", "3", "--cols", "4"])[3],
        r"another job \(process 4242 on host elsewhere\) is writing it"),
    # The process's environment is this case's alone (each case runs in its own driver).
    "bad_setting": (lambda r: (os.environ.__setitem__("TESSERA_KERNEL", "cuda-reduce-rows:fast"),
                               ["info"])[1],
                    r"input error: TESSERA_KERNEL='cuda-reduce-rows:fast': 'cuda-reduce-rows' "
                    r"has no kernel 'fast' \(kernels: warp, staged, short, strided, tree, "
                    r"narrow\)"),
    "checkpoint_is_output": (lambda r: ["check", "--set", "output.file=run.h5", "--set",
                                        "output.checkpoint_file=./run.h5"],
                             r"--set: output\.checkpoint_file: the checkpoint '\./run\.h5' and "
                             r"the output 'run\.h5' are the same file"),
    "checkpoint_is_output_run": (lambda r: ["run", "--set", "output.file=run.h5", "--set",
                                            "output.checkpoint_file=run.h5", "--set",
                                            "output.checkpoint_every=1", "--set",
                                            "time.steps=2"],
                                 r"output\.checkpoint_file: the checkpoint 'run\.h5' and the "
                                 r"output 'run\.h5' are the same file"),
}


def bad(r, rng, case):
    # (setup, regex stderr must match[, regex it must not: work that should not have begun])
    argv_of, pattern, *never = BAD[case]
    argv = argv_of(r)
    before = set(os.listdir(r.dir))
    p = r.run(argv, expect_ok=False)
    after = set(os.listdir(r.dir))
    expect(p.returncode != 0, f"exit status 0 for bad input '{case}'")
    expect(re.search(pattern, p.stderr),
           f"stderr does not match /{pattern}/:\n{p.stderr}")
    for unwanted in never:
        expect(not re.search(unwanted, p.stderr),
               f"stderr matches /{unwanted}/: the work began before the input was refused:\n"
               f"{p.stderr}")
    lines = [l for l in p.stderr.splitlines() if l.startswith("tessera: ")]
    expect(len(lines) == 1, f"expected one 'tessera: <kind>: <message>' line, got {lines}")
    expect("MPI_ABORT" not in p.stderr,
           "the job was aborted instead of failing collectively:\n" + p.stderr)
    new = sorted(after - before)
    expect(not new, f"files left behind: {new}")
