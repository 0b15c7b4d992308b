#!/usr/bin/env bash
# Runs the scenarios S1-S7 and S9 for Lupine's async API (Lupine), Lupine's closure API
# (LupineClosure), its engine alone (Engine), raw AsyncHTTPClient and URLSession, alternating the
# clients in every repetition, against `lupine serve` (release) in its own process, and prints a
# table of medians (rate, CPU and mallocs per request, and the context switches per request that
# bench-profile counts in one more run of each) with the Lupine/AHC, LupineClosure/AHC, Engine/AHC
# and Lupine/URLSession ratios; then S8, the noisy neighbour, for Lupine alone.
#
# S9 runs over https with ALPN h2 against the server's HTTP/2 server, which presents a self-signed
# certificate for 127.0.0.1 made here; every client trusts it as its own API allows (URLSession,
# which cannot, sits S9 out).
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
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    if [[ -z "${LUPINE_BENCH_KEEP:-}" ]]; then rm -rf "$results"; fi
}
trap cleanup EXIT

# The server comes from the benchmark package's own release build of Lupine: one release build
# of the dependency graph instead of two.
swift build -c release --package-path Benchmarks >&2
swift build -c release --package-path Benchmarks --product lupine >&2
bin_path="$(swift build -c release --package-path Benchmarks --show-bin-path)"
server_binary="$bin_path/lupine"

# S9's certificate: self-signed, naming 127.0.0.1 as an IP address (what the clients verify).
certificate="$results/tls-certificate.pem"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$results/tls-key.pem" -out "$certificate" 2>/dev/null
subject_alternative_names="$(openssl x509 -in "$certificate" -noout -ext subjectAltName)"
if [[ "$subject_alternative_names" != *"IP Address:127.0.0.1"* ]]; then
    echo "compare.sh: the certificate made for S9 does not name IP 127.0.0.1" >&2
    exit 1
fi

# With a certificate the server also runs a TLS server, an HTTP/2 server (ALPN h2 only) and two
# proxies, and prints their 'tls URL', 'h2 URL', ... lines after its base URL, all at once.
server_output="$results/server.txt"
"$server_binary" serve --port 0 --tls-certificate "$certificate" --tls-key "$results/tls-key.pem" >"$server_output" 2>/dev/null &
server_pid=$!
for _ in $(seq 1 100); do grep -q '^h2 ' "$server_output" && break; sleep 0.1; done
export LUPINE_BENCH_URL="$(head -n 1 "$server_output")"
export LUPINE_BENCH_H2_URL="$(sed -n 's/^h2 //p' "$server_output")"
export LUPINE_BENCH_TLS_CERTIFICATE="$certificate"
if [[ -z "$LUPINE_BENCH_URL" || -z "$LUPINE_BENCH_H2_URL" ]]; then
    echo "compare.sh: the server did not start" >&2
    exit 1
fi
echo "server: $LUPINE_BENCH_URL, h2: $LUPINE_BENCH_H2_URL (pid $server_pid)" >&2

scenarios=("S1 smallGET" "S2 concurrentGET64" "S3 body100MiB" "S4 download100MiB" "S5 post1MiB" "S6 cachedGET64"
    "S7 heuristicCachedGET64" "S9 h2ConcurrentGET64")
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
clients=(Lupine LupineClosure Engine AHC URLSession)
# LUPINE_BENCH_CLIENTS="Engine AHC" runs only the clients named.
if [[ -n "${LUPINE_BENCH_CLIENTS:-}" ]]; then
    read -r -a clients <<<"$LUPINE_BENCH_CLIENTS"
fi
# URLSession (corelibs, on curl) cannot trust S9's certificate: the harness has no such benchmark
# (Scenario.supports) and summarize.py says so in its table.
sits_out() { [[ "${1%% *}" == S9 && "$2" == URLSession ]]; }
for repetition in $(seq 1 "$repetitions"); do
    for scenario in "${scenarios[@]}"; do
        # Rotate the order each repetition so that no client always runs first or last.
        for offset in $(seq 0 $(( ${#clients[@]} - 1 ))); do
            client="${clients[$(( (repetition + offset) % ${#clients[@]} ))]}"
            if sits_out "$scenario" "$client"; then continue; fi
            name="$scenario $client"
            echo "repetition $repetition: $name" >&2
            # benchmark 1.38 on Swift 6.3 without its runtime interposer (a package this machine
            # does not have) can crash in its runtime hooks now and then, leaving no export: one
            # more try before the run counts as failed.
            run_one() {
                swift package --package-path Benchmarks --allow-writing-to-directory "$results" \
                    benchmark --filter "^$name\$" --format jmh --path "$results/$repetition-${name// /_}" \
                    --no-progress --quiet >&2
            }
            run_one || { echo "retrying: $name" >&2; run_one; } || echo "failed: $name" >&2
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
        if sits_out "$scenario" "$client"; then continue; fi
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
