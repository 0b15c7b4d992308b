#!/usr/bin/env python3
"""Summarizes a `perf script` dump made by hops.sh: where one request's time goes between threads.

For the busiest threads (the client's and the server's), per request: how often each runs, for
how long, how long it waits between being woken and running, and what its system calls cost.
A thread hand-off shows as a wake-up call (a write of 8 bytes to an eventfd, a futex wake) on one
side and a wake-up latency on the other.

    hops.py DUMP REQUESTS
"""
import collections
import re
import sys

SYSCALLS = {0: "read", 1: "write", 20: "writev", 202: "futex", 232: "epoll_wait", 19: "readv"}
LINE = re.compile(r"\s*(.+?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)")


def main(path, requests):
    comm = {}
    runs = collections.defaultdict(list)
    latency = collections.defaultdict(list)
    calls = collections.defaultdict(list)
    woken, running, entered = {}, {}, {}
    for line in open(path, errors="replace"):
        match = LINE.match(line)
        if not match:
            continue
        name, tid, _, time, event, rest = match.groups()
        time = float(time) * 1e6
        if event.endswith("sched_wakeup"):
            target = re.search(r"pid=(\d+)", rest)
            # Only a sleeping thread's wake-up counts (a thread perf saw switch back in without
            # its wait returning yet is running).
            if target and target.group(1) not in running:
                woken[target.group(1)] = time
        elif event.endswith("sched_switch"):
            previous = re.search(r"prev_comm=(.*?) prev_pid=(\d+)", rest)
            following = re.search(r"next_comm=(.*?) next_pid=(\d+)", rest)
            if previous and previous.group(2) in running:
                runs[previous.group(2)].append(time - running.pop(previous.group(2)))
            if following:
                thread = following.group(2)
                comm[thread] = following.group(1)
                running[thread] = time
                if thread in woken:
                    latency[thread].append(time - woken.pop(thread))
        elif event.endswith("sys_enter"):
            number = int(re.search(r"NR (\d+)", rest).group(1))
            label = SYSCALLS.get(number, str(number))
            if label == "futex":
                # The operation is the second argument; the private flag (128) aside, 1 and 10
                # wake, 0 and 9 wait.
                arguments = re.search(r"\((\w+), (\w+)", rest)
                operation = int(arguments.group(2), 16) & 127 if arguments else -1
                label = "futex wake" if operation in (1, 10) else "futex wait" if operation in (0, 9) else "futex"
            entered[tid] = (number, time, label)
        elif event.endswith("sys_exit"):
            number = int(re.search(r"NR (\d+)", rest).group(1))
            if tid in entered and entered[tid][0] == number:
                result = rest.rsplit("=", 1)[-1].strip()
                label = entered[tid][2]
                # A thread returning from a wait runs again. With system calls traced, perf
                # misses most switches away from the idle task, so this is when its run starts.
                if label in ("epoll_wait", "futex wait") and tid not in running:
                    running[tid] = time
                    comm[tid] = name
                    if tid in woken:
                        latency[tid].append(time - woken.pop(tid))
                # An 8-byte write is an eventfd wake-up (NIO's event loop, the event loop's own).
                if label == "write" and result == "8":
                    label = "write(eventfd)"
                # Waits are sleeps, counted by the runs.
                if label not in ("epoll_wait", "futex wait"):
                    calls[(tid, label)].append(time - entered[tid][1])
                del entered[tid]
    busiest = sorted((thread for thread in runs if thread != "0"), key=lambda thread: -sum(runs[thread]))[:6]
    print(f"{'thread':<24} {'runs/req':>8} {'µs/run':>7} {'µs/req':>7} {'wake→run µs':>11}  system calls per request (mean µs)")
    for thread in busiest:
        durations = runs[thread]
        waits = latency[thread]
        # The median: a wake-up now and then waits behind another thread for a whole run.
        median_wait = sorted(waits)[len(waits) // 2] if waits else 0
        syscalls = sorted(((label, values) for (owner, label), values in calls.items() if owner == thread),
                          key=lambda item: -len(item[1]))
        text = ", ".join(f"{label} {len(values) / requests:.2f}×{sum(values) / len(values):.1f}"
                         for label, values in syscalls if len(values) >= requests / 10)
        print(f"{comm.get(thread, thread)[:18] + '/' + thread:<24} {len(durations) / requests:8.2f} "
              f"{sum(durations) / len(durations):7.1f} {sum(durations) / requests:7.1f} {median_wait:11.1f}  {text}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
