#!/usr/bin/python3
"""Prints the tables of `tessera bench … --json` logs (one JSON object per line):

  bench_table.py LOG…

Transposes: tessera's GB/s, the D2D copy, and tessera, cuBLAS geam, the textbook tile (and any
timed variants) as fractions of the copy. Reductions: GB/s read and the fraction of cub Sum.
"""
import json
import sys


def rows(path):
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if line.startswith("{"):
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                pass


def main():
    for path in sys.argv[1:]:
        reports = list(rows(path))
        if not reports:
            continue
        print(f"== {path}")
        for r in reports:
            shape = f"{r['rows']}x{r['cols']}"
            if r["reference"]["name"] == "cub":
                print(f"{shape:>18} {r['dtype']:>5} {r['benchmark'][7:40]:<34} "
                      f"{r['gbps']:8.1f} GB/s  cub {r['reference']['gbps']:8.1f}  "
                      f"{r['fraction']:.3f}  {r['checked'][:3]}")
                continue
            variants = " ".join(f"{k[8:-9]}={v:.2f}" for k, v in r.items()
                                if k.startswith("variant ") and k.endswith("_fraction"))
            geam = r.get("geam_fraction")
            tile = r.get("tile_fraction")
            print(f"{shape:>18} {r['dtype']:>5} {r.get('kernel', '-'):>14} {r['gbps']:8.1f} GB/s "
                  f"copy {r['reference']['gbps']:7.1f}  tessera {r['fraction']:.3f}  "
                  f"geam {geam if geam is None else round(geam, 3)}  "
                  f"tile {tile if tile is None else round(tile, 3)}  {r['checked'][:3]}  {variants}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
