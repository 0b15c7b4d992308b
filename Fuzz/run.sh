#!/usr/bin/env bash
# Builds Lupine's libFuzzer targets and runs each for a fixed time (one after the other, or
# LUPINE_FUZZ_JOBS at once).
#
#   Fuzz/run.sh [seconds-per-target] [target...]
#
# Corpora grow under .build-fuzz/corpus/<target> (gitignored), seeded from Fuzz/Seeds/<target>;
# a crashing input is saved as .build-fuzz/artifacts/<target>/crash-*. Prints, per target, the
# runs, execs/s, coverage and number of crash/leak/timeout/oom artefacts this run left. Exits
# non-zero when a target left an artefact.
set -euo pipefail
# The Swift runtime's backtracer would otherwise take over a crash (and stall under ASan).
export SWIFT_BACKTRACE=enable=no

seconds="${1:-180}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/.build-fuzz"
all_targets=(FuzzFormEncoding FuzzMultipart FuzzHeaders FuzzCookies FuzzResumeData FuzzServerSentEvents
             FuzzWebSocketFrames FuzzDigestChallenge FuzzProxyEnvironment FuzzCacheRules FuzzURLProtocolClient
             FuzzHTTP1Response FuzzGzipDecoder FuzzDeflateDecoder FuzzBrotliDecoder FuzzZstdDecoder)
targets=("${@:-${all_targets[@]}}")
if [[ $# -eq 0 ]]; then targets=("${all_targets[@]}"); fi

# LUPINE_FUZZ_CONFIG=debug builds unoptimised: a fraction of the release build's time (CI's smoke),
# at a lower execution rate. Each configuration has its own build folder.
config="${LUPINE_FUZZ_CONFIG:-release}"
scratch="$out/build"
[[ "$config" == release ]] || scratch="$out/build-$config"
echo "building fuzz targets ($config, -sanitize=fuzzer,address, -enable-testing)..."
swift build -c "$config" --package-path "$root/Fuzz" --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing \
    > "$out-build.log" 2>&1 || { tail -40 "$out-build.log"; exit 1; }
bin="$(swift build -c "$config" --package-path "$root/Fuzz" --scratch-path "$scratch" --show-bin-path)"

mkdir -p "$out/logs"

# Runs one target for `seconds` and writes its summary line to $out/logs/<target>.summary.
run_target() {
    local target="$1"
    local corpus="$out/corpus/$target"
    local artifacts="$out/artifacts/$target"
    mkdir -p "$corpus" "$artifacts"
    local seeds="$root/Fuzz/Seeds/$target"
    [[ -d "$seeds" ]] || seeds=""
    local log="$out/logs/$target.log"
    # Artefacts are counted from this run only: older ones stay for inspection but are not news.
    local stamp="$out/logs/$target.started"
    touch "$stamp"
    echo "running $target for ${seconds}s..."
    # -rss_limit_mb bounds one input's memory; -timeout flags an input that takes over 10 s.
    # The CPU time it got is recorded too: targets run at once share the machine's cores.
    local TIMEFORMAT='%U %S'
    { time "$bin/$target" "$corpus" ${seeds:+"$seeds"} -max_total_time="$seconds" -print_final_stats=1 \
        -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$artifacts/" > "$log" 2>&1 || true; } 2> "$out/logs/$target.cpu"
    local runs rate cov found
    runs="$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    rate="$(grep -ao 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
    cov="$(grep -ao 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 || echo '?')"
    found="$(find "$artifacts" -type f -newer "$stamp" \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)"
    local cpu
    cpu="$(awk '{ printf "%d", $1 + $2 }' "$out/logs/$target.cpu" 2>/dev/null || echo '?')"
    printf '%-22s %6ss  cpu %6ss  runs %-10s  exec/s %-7s  %-22s  artefacts %s\n' "$target" "$seconds" "$cpu" "$runs" "$rate" "$cov" "$found" \
        > "$out/logs/$target.summary"
}

# LUPINE_FUZZ_JOBS=N runs up to N targets at once, each still for `seconds` (CI runs all sixteen
# at once: a smoke of a minute per target in a minute of wall time).
jobs_at_once="${LUPINE_FUZZ_JOBS:-1}"
for target in "${targets[@]}"; do
    rm -f "$out/logs/$target.summary"
    while [[ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]]; do wait -n || true; done
    run_target "$target" &
done
wait

echo
failed=0
for target in "${targets[@]}"; do
    line="$(cat "$out/logs/$target.summary" 2>/dev/null || printf '%-22s  no summary: the run did not finish' "$target")"
    echo "$line"
    [[ "$line" =~ artefacts\ 0$ ]] || failed=1
done
exit "$failed"
