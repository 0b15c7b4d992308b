#!/usr/bin/env python3
"""Summarizes the JMH exports of compare.sh: medians per scenario and client, and the ratios."""
import glob
import json
import os
import re
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
    "S9_h2ConcurrentGET64": (max(64, int(20000 * SCALE)) // 64 * 64, "req/s"),
}
# Requests of one scenario run (S3 and S4: one), for the per-request columns.
REQUESTS = {
    "S1_smallGET": max(1, int(2000 * SCALE)),
    "S2_concurrentGET64": max(64, int(20000 * SCALE)) // 64 * 64,
    "S3_body100MiB": 1,
    "S4_download100MiB": 1,
    "S5_post1MiB": max(1, int(200 * SCALE)),
    "S6_cachedGET64": max(64, int(20000 * SCALE)) // 64 * 64,
    "S7_heuristicCachedGET64": max(64, int(20000 * SCALE)) // 64 * 64,
    "S9_h2ConcurrentGET64": max(64, int(20000 * SCALE)) // 64 * 64,
}
# Clients that sit a scenario out, and why (shown in the table).
SITS_OUT = {
    ("S9_h2ConcurrentGET64", "URLSession"): "skipped: corelibs URLSession cannot trust the self-signed certificate",
}
TO_SECONDS = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def metric(element, fragment):
    for name, value in element.get("secondaryMetrics", {}).items():
        if fragment in name.lower():
            return value
    return None


CLIENTS = ("Lupine", "LupineClosure", "Engine", "AHC", "URLSession")


def profile_lines(directory):
    """(scenario, client) -> the line bench-profile printed in compare.sh's pass after the timed
    repetitions (one full-size run of each scenario and client)."""
    lines = {}
    for path in glob.glob(os.path.join(directory, "switches", "*.txt")):
        scenario, client = os.path.basename(path)[:-len(".txt")].rsplit("_", 1)
        with open(path, encoding="utf-8") as handle:
            lines[(scenario, client)] = handle.read()
    return lines


def parsed(lines, pattern, convert):
    """(scenario, client) -> convert(match) for each of bench-profile's lines `pattern` matches."""
    compiled = re.compile(pattern)
    return {key: convert(match) for key, match in ((key, compiled.search(text)) for key, text in lines.items()) if match}


def switches_counted(lines):
    """(scenario, client) -> "voluntary + involuntary" per request, from bench-profile's lines."""
    return parsed(lines, r"context switches per request ([0-9.]+) voluntary \+ ([0-9.]+) involuntary",
                  lambda found: f"{float(found.group(1)):.2f} + {float(found.group(2)):.2f}")


def profile_pass(lines):
    """(scenario, client) -> (seconds per run, CPU µs per request), from bench-profile's lines."""
    return parsed(lines, r"([0-9]+) run\(s\), ([0-9.]+) s, .*?CPU ([0-9.]+) µs per request",
                  lambda found: (float(found.group(2)) / int(found.group(1)), float(found.group(3))))


def main(directory):
    # (scenario, client) -> lists of samples, one per iteration
    samples = {}
    for path in glob.glob(os.path.join(directory, "**", "*.json"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            try:
                elements = json.load(handle)
            except json.JSONDecodeError:
                continue
        for element in elements:
            key = element["benchmark"].rsplit(".", 1)[-1]
            scenario, client = key.rsplit("_", 1)
            entry = samples.setdefault((scenario, client), {"seconds": [], "cpu": [], "malloc": [], "rss": [], "ctx": []})
            wall = metric(element, "wall clock")
            if wall:
                factor = TO_SECONDS.get(wall.get("scoreUnit", "μs"), 1e-6)
                entry["seconds"] += [v * factor for v in wall["rawData"][0]]
            cpu = metric(element, "total cpu")
            if cpu:
                factor = TO_SECONDS.get(cpu.get("scoreUnit", "μs"), 1e-6)
                entry["cpu"] += [v * factor for v in cpu["rawData"][0]]
            for name, fragment in (("malloc", "malloc (total)"), ("rss", "resident peak"), ("ctx", "context switches")):
                found = metric(element, fragment)
                if found:
                    entry[name] += found["rawData"][0]

    def median(values):
        return statistics.median(values) if values else float("nan")

    lines = profile_lines(directory)
    counted = switches_counted(lines)
    # The harness records no throughput for an iteration longer than about 2 s (it rounds
    # iterations per second to an integer and drops a zero), and its JMH export then leaves the
    # benchmark out. A scenario that lost a client so takes every client's figures from the
    # bench-profile pass of the same run, so that its ratios compare runs of one kind.
    profiled = profile_pass(lines)
    from_pass = set()
    for scenario in UNITS:
        expected = [c for c in CLIENTS if (scenario, c) in profiled and (scenario, c) not in SITS_OUT]
        if not expected or all(samples.get((scenario, c), {}).get("seconds") for c in expected):
            continue
        from_pass.add(scenario)
        for client in expected:
            seconds, cpu = profiled[(scenario, client)]
            samples[(scenario, client)] = {"seconds": [seconds], "cpu": [cpu * 1e-6 * REQUESTS[scenario]],
                                           "malloc": [], "rss": [], "ctx": []}
    print("| scenario | client | rate | wall s (median) | CPU µs/req | mallocs/req | peak RSS MiB "
          "| context switches/req (voluntary + involuntary) |")
    print("|---|---|---|---|---|---|---|---|")
    rates = {}
    mallocs = {}
    for scenario in UNITS:
        work, unit = UNITS[scenario]
        requests = REQUESTS[scenario]
        ran = any(samples.get((scenario, other), {}).get("seconds") for other in CLIENTS)
        for client in CLIENTS:
            entry = samples.get((scenario, client))
            if not entry or not entry["seconds"]:
                if ran and (scenario, client) in SITS_OUT:
                    print(f"| {scenario} | {client} | {SITS_OUT[(scenario, client)]} | | | | | |")
                continue
            seconds = median(entry["seconds"])
            rate = work / seconds
            rates[(scenario, client)] = rate
            mallocs[(scenario, client)] = median(entry["malloc"]) / requests if entry["malloc"] else None
            cpu = f"{median(entry['cpu']) * 1e6 / requests:,.1f}" if entry["cpu"] else "n/a"
            malloc = f"{mallocs[(scenario, client)]:,.1f}" if entry["malloc"] else "n/a"
            if entry["ctx"]:
                switches = f"{median(entry['ctx']) / requests:,.2f}"
            else:
                switches = counted.get((scenario, client), "n/a")
            mark = " †" if scenario in from_pass else ""
            rss = f"{median(entry['rss']) / 1048576:,.1f}" if entry["rss"] else "n/a"
            print(f"| {scenario} | {client} | {rate:,.0f} {unit}{mark} | {seconds:.3f} | {cpu} | {malloc} "
                  f"| {rss} | {switches} |")
    if from_pass:
        print()
        print("† the harness exported no result for a client of this scenario (an iteration over about 2 s): "
              "every client's rate and CPU come from compare.sh's bench-profile pass of the same run.")
    print()
    print("| scenario | Lupine/AHC | LupineClosure/AHC | Engine/AHC | Lupine/URLSession | Engine/AHC mallocs per request |")
    print("|---|---|---|---|---|---|")
    for scenario in UNITS:
        if not any((scenario, client) in rates for client in CLIENTS):
            continue
        ahc = rates.get((scenario, "AHC"))
        session = rates.get((scenario, "URLSession"))

        def ratio(client, other):
            value = rates.get((scenario, client))
            return f"{value / other:.2f}x" if value and other else "n/a"

        engine_mallocs = mallocs.get((scenario, "Engine"))
        ahc_mallocs = mallocs.get((scenario, "AHC"))
        malloc_ratio = f"{engine_mallocs / ahc_mallocs:.2f}x" if engine_mallocs and ahc_mallocs else "n/a"
        print(f"| {scenario} | {ratio('Lupine', ahc)} | {ratio('LupineClosure', ahc)} | {ratio('Engine', ahc)} "
              f"| {ratio('Lupine', session)} | {malloc_ratio} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
