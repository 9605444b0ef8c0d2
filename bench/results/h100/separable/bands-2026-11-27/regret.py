#!/usr/bin/env python3
"""The split rule's cost against a sweep: for each case (precision, size, K) of a sweep CSV
written by bench/probes/separable_bands_probe.cu, the time at the split a rule picks (its
strip width, where the CSV names it, and band count) over the fastest split swept. With
one CSV: the rule it was run with (its library_tile and library_bands columns); with
--rule-of OTHER.csv: the rule OTHER.csv was run with, judged on the first CSV's times.

    python3 regret.py sweep-rule-final.csv
    python3 regret.py sweep-rule-final.csv --rule-of sweep-before-rule-old.csv
"""
import argparse
import collections
import csv
import math


def load(path):
    cases = collections.defaultdict(list)
    with open(path) as f:
        for r in csv.DictReader(f):
            cases[(r["precision"], r["size"], int(r["k"]))].append(r)
    return cases


def grid_bands(rows, asked):
    chunks = int(rows[0]["chunks"])  # rows of one strip width
    per_band = -(-chunks // asked)
    return -(-chunks // per_band)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep")
    parser.add_argument("--rule-of")
    args = parser.parse_args()
    times = load(args.sweep)
    rule = load(args.rule_of) if args.rule_of else times
    ratios = []
    for key, rows in sorted(times.items()):
        chosen = rule[key][0]
        tile = chosen.get("library_tile") or chosen["tile"]  # sweeps before the width choice: one width
        of_tile = [r for r in rows if r["tile"] == tile]
        picked = grid_bands(of_tile, int(chosen["library_bands"]))
        best = min(rows, key=lambda r: float(r["ms"]))
        at = [r for r in of_tile if int(r["bands"]) == picked][0]
        ratio = float(at["ms"]) / float(best["ms"])
        ratios.append(ratio)
        print(f"{key[0]} {key[1]:>9} K {key[2]:3}: {tile:>3} x {picked:3} bands {float(at['ms']):.4f} ms, "
              f"fastest {best['tile']:>3} x {best['bands']:>3} bands {float(best['ms']):.4f} ms ({ratio:.3f})")
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"{len(ratios)} cases: {mean:.4f} on (geometric) average, {max(ratios):.3f} at worst, "
          f"{sum(r > 1.05 for r in ratios)} over 1.05")


if __name__ == "__main__":
    main()
