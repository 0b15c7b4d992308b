#!/usr/bin/env bash
# Where one request's time goes between threads: runs `bench-profile CLIENT SCENARIO 1` under
# `perf record` (scheduler switches and wake-ups, system calls; the whole machine, so that the
# server's threads are seen too) and prints, per request, for the busiest threads: how often each
# runs and for how long, its wake-up latency, and the cost of its system calls (hops.py).
#
#   Benchmarks/hops.sh CLIENT [SCENARIO]     e.g. Benchmarks/hops.sh Lupine S1
#
# Needs `perf` with tracepoint access (root), the release build of bench-profile and a server at
# LUPINE_BENCH_URL (`lupine serve --port 0`, as compare.sh starts it). Tracing slows every system
# call and switch by about a microsecond: compare clients with each other, not with untraced runs.
# bench-profile's variables apply (LUPINE_BENCH_PRIORITY=userInitiated LUPINE_BENCH_SAMPLER=1
# reproduce the harness's conditions); the counts assume the full size (no LUPINE_BENCH_SCALE).
set -euo pipefail
cd "$(dirname "$0")/.."
client="${1:?usage: Benchmarks/hops.sh CLIENT [SCENARIO]}"
scenario="${2:-S1}"
: "${LUPINE_BENCH_URL:?start a server (lupine serve --port 0) and export LUPINE_BENCH_URL}"
if [[ -n "${LUPINE_BENCH_SCALE:-}" && "${LUPINE_BENCH_SCALE}" != "1" ]]; then
    echo "hops.sh counts the requests of a full-size run: unset LUPINE_BENCH_SCALE" >&2
    exit 2
fi
bench_profile="$(swift build -c release --package-path Benchmarks --show-bin-path)/bench-profile"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# `exec` makes the shell's pid perf's own, so that perf's system calls can be filtered out.
# The scheduler events come first: listed after the filtered ones, perf records almost none of
# the switches and wake-ups that happen on an idle CPU.
sh -c 'exec perf record -q -a -m 8192 -o "$1" \
    -e sched:sched_switch -e sched:sched_wakeup \
    -e raw_syscalls:sys_enter --filter "common_pid != $$" \
    -e raw_syscalls:sys_exit --filter "common_pid != $$" -- "$2" "$3" "$4" 1' \
    hops "$work/perf.data" "$bench_profile" "$client" "$scenario" | tail -n 1
perf script -i "$work/perf.data" 2>/dev/null >"$work/perf.txt"
# The warm-up run and the measured run: two runs of the scenario's requests.
case "$scenario" in
    S1) requests=4000 ;;
    S2|S6|S7) requests=40000 ;;
    S5) requests=400 ;;
    *) requests=2 ;;
esac
python3 Benchmarks/hops.py "$work/perf.txt" "$requests"
