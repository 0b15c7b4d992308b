#!/usr/bin/env python3
"""Folds `perf script -F comm,ip,sym` output into stacks per thread and answers two questions:
how much a function costs inclusively, split by what it calls, and which functions of a thread
cost most. Units: samples / 200, so µs per GET for `bench-profile X S1 5` recorded at 20 kHz
(10,000 GETs; sampling inflates them, compare only profiles taken alike).

    perf record -F 20000 -g -o /tmp/x.data bench-profile Lupine S1 5
    perf script -i /tmp/x.data -F comm,ip,sym > /tmp/x.script
    Benchmarks/perfstacks.py fold /tmp/x.script /tmp/x.folded
    Benchmarks/perfstacks.py callees /tmp/x.folded 'planHop' oot     # oot: the cooperative pool's threads
    Benchmarks/perfstacks.py top /tmp/x.folded NIO Lupine 40          # NIO: the event loops
"""
import collections
import re
import sys

PER_UNIT = 200.0


def fold(script_path, folded_path):
    stacks = collections.Counter()
    comm, frames = None, []

    def flush():
        if comm is not None and frames:
            stacks[comm + ";" + ";".join(reversed(frames))] += 1

    for line in open(script_path, errors="replace"):
        if not line.strip():
            flush()
            comm, frames = None, []
        elif not line.startswith((" ", "\t")):
            flush()
            comm, frames = line.split()[0], []
        else:
            parts = line.strip().split(None, 1)
            frames.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[-1]))
    flush()
    with open(folded_path, "w") as out:
        for stack, count in stacks.items():
            out.write(f"{stack} {count}\n")


def read_folded(path, thread):
    for line in open(path):
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        if frames[0].startswith(thread):
            yield frames, int(count)


def callees(folded_path, pattern, thread):
    total, by_callee = 0, collections.Counter()
    for frames, count in read_folded(folded_path, thread):
        index = next((i for i, frame in enumerate(frames) if pattern in frame), None)
        if index is None:
            continue
        total += count
        by_callee[frames[index + 1] if index + 1 < len(frames) else "<self>"] += count
    print(f"{pattern}: {total / PER_UNIT:.1f} units")
    for callee, count in by_callee.most_common(25):
        print(f"  {count / PER_UNIT:6.2f}  {callee[:200]}")


def top(folded_path, thread, pattern, limit):
    inclusive = collections.Counter()
    for frames, count in read_folded(folded_path, thread):
        for frame in set(frames[1:]):
            if pattern in frame:
                inclusive[frame] += count
    for frame, count in inclusive.most_common(limit):
        print(f"{count / PER_UNIT:7.2f} {frame[:180]}")


if __name__ == "__main__":
    command, arguments = sys.argv[1] if len(sys.argv) > 1 else "", sys.argv[2:]
    if command == "fold" and len(arguments) == 2:
        fold(*arguments)
    elif command == "callees" and len(arguments) == 3:
        callees(*arguments)
    elif command == "top" and len(arguments) in (3, 4):
        top(arguments[0], arguments[1], arguments[2], int(arguments[3]) if len(arguments) == 4 else 40)
    else:
        print(__doc__)
        sys.exit(2)
