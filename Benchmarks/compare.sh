#!/usr/bin/env bash
# Runs the scenarios S1-S7 for Lupine, its engine alone (Engine), raw AsyncHTTPClient and
# URLSession, alternating the clients in every repetition, against `lupine serve` (release) in its
# own process, and prints a table of medians (rate, CPU and mallocs per request, and the context
# switches per request that bench-profile counts in one more run of each) with the Lupine/AHC,
# Engine/AHC and Lupine/URLSession ratios; then S8, the noisy neighbour, for Lupine alone.
#
#   Benchmarks/compare.sh [repetitions]      (default 3; LUPINE_BENCH_SCALE=0.1 for a quick run)
set -euo pipefail
cd "$(dirname "$0")/.."
repetitions="${1:-3}"
results="$(mktemp -d)"
# SwiftPM leaves TemporaryDirectory.* folders in TMPDIR on every invocation (about 900 in a full
# run); they go with the results folder.
export TMPDIR="$results/tmp"
mkdir -p "$TMPDIR"
server_pid=""
# The server goes with the run, and so do the exports unless LUPINE_BENCH_KEEP=1 (then their
# folder is printed at the end).
cleanup() {
    if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
    if [[ -z "${LUPINE_BENCH_KEEP:-}" ]]; then rm -rf "$results"; fi
}
trap cleanup EXIT

# The server comes from the benchmark package's own release build of Lupine: one release build
# of the dependency graph instead of two.
swift build -c release --package-path Benchmarks >&2
swift build -c release --package-path Benchmarks --product lupine >&2
bin_path="$(swift build -c release --package-path Benchmarks --show-bin-path)"
server_binary="$bin_path/lupine"

server_output="$results/server.txt"
"$server_binary" serve --port 0 >"$server_output" 2>/dev/null &
server_pid=$!
for _ in $(seq 1 100); do [ -s "$server_output" ] && break; sleep 0.1; done
export LUPINE_BENCH_URL="$(head -n 1 "$server_output")"
echo "server: $LUPINE_BENCH_URL (pid $server_pid)" >&2

scenarios=("S1 smallGET" "S2 concurrentGET64" "S3 body100MiB" "S4 download100MiB" "S5 post1MiB" "S6 cachedGET64" "S7 heuristicCachedGET64")
# LUPINE_BENCH_SCENARIOS="S2 S6" runs only the scenarios named (by their S-number).
if [[ -n "${LUPINE_BENCH_SCENARIOS:-}" ]]; then
    chosen=()
    for scenario in "${scenarios[@]}"; do
        for wanted in $LUPINE_BENCH_SCENARIOS; do
            [[ "${scenario%% *}" == "$wanted" ]] && chosen+=("$scenario")
        done
    done
    scenarios=("${chosen[@]}")
fi
clients=(Lupine Engine AHC URLSession)
# LUPINE_BENCH_CLIENTS="Engine AHC" runs only the clients named.
if [[ -n "${LUPINE_BENCH_CLIENTS:-}" ]]; then
    read -r -a clients <<<"$LUPINE_BENCH_CLIENTS"
fi
for repetition in $(seq 1 "$repetitions"); do
    for scenario in "${scenarios[@]}"; do
        # Rotate the order each repetition so that no client always runs first or last.
        for offset in $(seq 0 $(( ${#clients[@]} - 1 ))); do
            client="${clients[$(( (repetition + offset) % ${#clients[@]} ))]}"
            name="$scenario $client"
            echo "repetition $repetition: $name" >&2
            swift package --package-path Benchmarks --allow-writing-to-directory "$results" \
                benchmark --filter "^$name\$" --format jmh --path "$results/$repetition-${name// /_}" \
                --no-progress --quiet >&2 || echo "failed: $name" >&2
        done
    done
done

# The harness exports no context switches on Linux: bench-profile (getrusage around one run, after a
# warm-up run) counts them for every scenario and client, once, after the timed repetitions.
bench_profile="$bin_path/bench-profile"
mkdir -p "$results/switches"
for scenario in "${scenarios[@]}"; do
    number="${scenario%% *}"
    for client in "${clients[@]}"; do
        echo "context switches: $scenario $client" >&2
        "$bench_profile" "$client" "$number" 1 >"$results/switches/${scenario// /_}_$client.txt" 2>/dev/null \
            || echo "failed: bench-profile $client $number" >&2
    done
done

python3 Benchmarks/summarize.py "$results"

# S8, the noisy neighbour, is a latency scenario outside the harness: bench-profile runs it once
# (Lupine only), unless LUPINE_BENCH_SCENARIOS leaves it out.
if [[ -z "${LUPINE_BENCH_SCENARIOS:-}" || " $LUPINE_BENCH_SCENARIOS " == *" S8 "* ]]; then
    echo "S8 noisy neighbour" >&2
    "$bench_profile" Lupine S8 || echo "failed: bench-profile Lupine S8" >&2
fi
if [[ -n "${LUPINE_BENCH_KEEP:-}" ]]; then echo "exports kept in $results" >&2; fi
