#!/usr/bin/env python3
"""Summarizes the JMH exports of compare.sh: medians per scenario and client, and the ratios."""
import glob
import json
import os
import statistics
import sys

# Work units of one scenario run, to turn wall time into a rate (scale with LUPINE_BENCH_SCALE).
SCALE = float(os.environ.get("LUPINE_BENCH_SCALE", "1"))
UNITS = {
    "S1_smallGET": (max(1, int(2000 * SCALE)), "req/s"),
    "S2_concurrentGET64": (max(64, int(20000 * SCALE)) // 64 * 64, "req/s"),
    "S3_body100MiB": (max(1, int((100 << 20) * SCALE)) / 1e6, "MB/s"),
    "S4_download100MiB": (max(1, int((100 << 20) * SCALE)) / 1e6, "MB/s"),
    "S5_post1MiB": (max(1, int(200 * SCALE)), "req/s"),
    "S6_cachedGET64": (max(64, int(20000 * SCALE)) // 64 * 64, "req/s"),
    "S7_heuristicCachedGET64": (max(64, int(20000 * SCALE)) // 64 * 64, "req/s"),
}
TO_SECONDS = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def metric(element, fragment):
    for name, value in element.get("secondaryMetrics", {}).items():
        if fragment in name.lower():
            return value
    return None


def main(directory):
    samples = {}  # (scenario, client) -> {"seconds": [...], "malloc": [...], "rss": [...], "ctx": [...]}
    for path in glob.glob(os.path.join(directory, "**", "*.json"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            try:
                elements = json.load(handle)
            except json.JSONDecodeError:
                continue
        for element in elements:
            key = element["benchmark"].rsplit(".", 1)[-1]
            scenario, client = key.rsplit("_", 1)
            entry = samples.setdefault((scenario, client), {"seconds": [], "malloc": [], "rss": [], "ctx": []})
            wall = metric(element, "wall clock")
            if wall:
                factor = TO_SECONDS.get(wall.get("scoreUnit", "μs"), 1e-6)
                entry["seconds"] += [v * factor for v in wall["rawData"][0]]
            for name, fragment in (("malloc", "malloc (total)"), ("rss", "resident peak"), ("ctx", "context switches")):
                found = metric(element, fragment)
                if found:
                    entry[name] += found["rawData"][0]

    def median(values):
        return statistics.median(values) if values else float("nan")

    print("| scenario | client | rate | wall s (median) | mallocs | peak RSS MiB | context switches |")
    print("|---|---|---|---|---|---|---|")
    rates = {}
    for scenario in UNITS:
        for client in ("Lupine", "AHC", "URLSession"):
            entry = samples.get((scenario, client))
            if not entry or not entry["seconds"]:
                print(f"| {scenario} | {client} | (no data) | | | | |")
                continue
            seconds = median(entry["seconds"])
            work, unit = UNITS[scenario]
            rate = work / seconds
            rates[(scenario, client)] = rate
            switches = f"{median(entry['ctx']):,.0f}" if entry["ctx"] else "n/a"
            print(f"| {scenario} | {client} | {rate:,.0f} {unit} | {seconds:.3f} | {median(entry['malloc']):,.0f} "
                  f"| {median(entry['rss']) / 1048576:,.1f} | {switches} |")
    print()
    print("| scenario | Lupine/AHC | Lupine/URLSession |")
    print("|---|---|---|")
    for scenario in UNITS:
        lupine = rates.get((scenario, "Lupine"))
        ahc = rates.get((scenario, "AHC"))
        session = rates.get((scenario, "URLSession"))
        ratio = lambda other: f"{lupine / other:.2f}x" if lupine and other else "n/a"
        print(f"| {scenario} | {ratio(ahc)} | {ratio(session)} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
