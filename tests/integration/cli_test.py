#!/usr/bin/python3
"""End-to-end tests of the `tessera` command line (registered by CMakeLists.txt here).

  cli_test.py --tessera BIN [--mpirun M] --np N [--seed S] SCENARIO [CASE]
  cli_test.py --tessera none list-bad      (the bad-input case names, separated by ';')

N = 0 runs tessera without a launcher (single-node test mode); N >= 1 runs `mpirun -np N`.
Every scenario works in a fresh temporary directory and uses fresh random shapes and seeds
(printed, so a failure can be reproduced). The scenarios live in cli_runs.py, cli_views.py and
cli_bad_cases.py, what they share in cli_common.py. Scenarios:

  end_to_end      generate -> transpose -> reduce --json, read back with h5py/numpy and h5dump
  transpose_1000  a 1000 x 999 f64 transpose compared with numpy exactly
  run_default     `tessera run` with the embedded default deck
  run_deck        a deck file with --set overrides (rows axis, chunked + deflated output)
  pipeline_memory_limit  a deck whose matrix fits staging.memory_limit runs in memory
  provenance      heat2d, pipeline, generate and transpose outputs record the same provenance
  check           `tessera check` prints an effective deck that parses back to the same text
  info            `tessera info` names the MPI library, thread level, HDF5 and GPUs
  selftest        `tessera selftest` passes and prints its table
  unwritten_chunks  datasets with chunks never written: transposed and reduced as the fill value
  stop_early      SIGTERM before the set-up: heat2d stops before step 1 with a checkpoint
  paraview        a heat2d output opened by ParaView (pvbatch) through its XDMF sidecar
  transpose_metadata  attributes, fill value, dimension scales, --like-input, --shuffle
  quiet_timing    -q prints nothing; --timing=off|json
  oversubscribed  the warning when ranks x threads exceed a node's cores
  streamed_jobs   file jobs stream by default, bit-identical to --in-memory and numpy
  start_up        --version, --help and usage errors answered before MPI starts
  wisdom_cache    the per-user wisdom cache: written by measured runs, damaged or unwritable
  missing_values  _FillValue, missing_value, NaN and packed data of h5py and netCDF4 files
                  reduced as numpy.ma does; --keep-nan; count
  files_that_grow  transpose --mode append, several datasets per call, metadata kept
  extend_run      a finished heat2d run extended (--restart, longer time.steps) keeps its
                  snapshots; the deck it stores runs again to the same file
  checkpoint_keep numbered checkpoints, the newest kept, each restarting bit for bit
  initial_snapshot  initial.kind = FILE.h5:/fields/u[k]: a run from another's snapshot
  check_files     `tessera check` opens the files a deck reads, every problem at once
  memory_room     a dataset larger than a rank's memory streams; generate refuses one
  permute         --axes: netCDF-4 variables of rank 1 to 5 and of several types permuted,
                  against numpy and read back by netCDF4
  reduce_dims     reduce --dims: netCDF-4 variables reduced over some dimensions, against
                  numpy.ma, the same bits at any rank count and memory limit
  permute_storage --axes outputs chunked and compressed (--chunk-rows, --deflate, --shuffle,
                  --like-input), bit-exact and read by netCDF4
  permute_stream  --axes through many pieces read ahead and written behind, bit-exact, within
                  the memory limit; a fault on one rank in either side stops every rank
  reduce_dims_stats  reduce --dims with every op (norms, var, std, argmin, argmax) against
                  numpy.ma, --json, several datasets, compressed outputs read by netCDF4
  bad CASE        bad input: a clear message, non-zero exit, no hang, no output file left
"""
import argparse
import functools
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_bad_cases import BAD, bad  # noqa: E402
from cli_common import Runner, add_launch_args, drive  # noqa: E402

# scenario: (module, function). A run imports only its scenario's module: most of the bad-input
# cases need neither h5py nor numpy, whose import is most of a short case's CPU time.
SCENARIOS = {"end_to_end": ("cli_runs", "end_to_end"),
             "transpose_1000": ("cli_runs", "transpose_1000"),
             "run_default": ("cli_runs", "run_default"), "run_deck": ("cli_runs", "run_deck"),
             "pipeline_memory_limit": ("cli_runs", "pipeline_memory_limit"),
             "provenance": ("cli_runs", "provenance"), "check": ("cli_runs", "check_scenario"),
             "stop_early": ("cli_runs", "stop_early"),
             "info": ("cli_views", "info"), "selftest": ("cli_views", "selftest"),
             "unwritten_chunks": ("cli_views", "unwritten_chunks"),
             "paraview": ("cli_views", "paraview"),
             "transpose_metadata": ("cli_views", "transpose_metadata"),
             "quiet_timing": ("cli_views", "quiet_timing"),
             "oversubscribed": ("cli_views", "oversubscribed"),
             "streamed_jobs": ("cli_jobs", "streamed_jobs"), "start_up": ("cli_jobs", "start_up"),
             "wisdom_cache": ("cli_jobs", "wisdom_cache"),
             "missing_values": ("cli_missing", "missing_values"),
             "files_that_grow": ("cli_grow", "files_that_grow"),
             "extend_run": ("cli_heat2d", "extend_run"),
             "checkpoint_keep": ("cli_heat2d", "checkpoint_keep"),
             "initial_snapshot": ("cli_heat2d", "initial_snapshot"),
             "check_files": ("cli_heat2d", "check_files"),
             "memory_room": ("cli_jobs", "memory_room"),
             "permute": ("cli_permute", "permute"), "reduce_dims": ("cli_permute", "reduce_dims"),
             "permute_storage": ("cli_permute", "permute_storage"),
             "permute_stream": ("cli_permute_stream", "permute_stream"),
             "reduce_dims_stats": ("cli_reduce_dims", "stats")}


def main():
    ap = argparse.ArgumentParser()
    add_launch_args(ap)
    ap.add_argument("scenario", choices=sorted(SCENARIOS) + ["bad", "list-bad"])
    ap.add_argument("case", nargs="?")
    args = ap.parse_args()
    if args.scenario == "list-bad":
        # The configure step lists the cases with this, and leaves the command-line tests out
        # (or fails, in CI) where it fails: where h5py or numpy cannot be imported.
        import h5py  # noqa: F401
        import numpy  # noqa: F401
        print(";".join(sorted(BAD)))
        return 0
    if args.scenario == "bad":
        scenario = functools.partial(bad, case=args.case)
    else:
        module, function = SCENARIOS[args.scenario]
        scenario = getattr(importlib.import_module(module), function)
    return drive("cli_test", f"{args.scenario} {args.case or ''}",
                 f"tessera-cli-{args.scenario}-", args, Runner, scenario)


if __name__ == "__main__":
    sys.exit(main())
