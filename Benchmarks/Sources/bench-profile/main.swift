import BenchmarkClients
import Foundation
import NIOPosix

// Runs one scenario with one client, without the benchmark harness, so that it can be run under
// `valgrind --tool=callgrind` or `perf`, and prints what the harness does not: context switches
// and CPU time per request (getrusage) and the distinct TCP connections used (ConnectionCensus).
//
//   bench-profile CLIENT SCENARIO [RUNS]     e.g. bench-profile Engine S2 3
//   bench-profile Lupine S8                  the noisy neighbour: B's p50 and p99 alone and beside A
//   LUPINE_BENCH_URL (default http://127.0.0.1:8080), LUPINE_BENCH_SCALE (default 1)
//   S9: LUPINE_BENCH_H2_URL (the h2 server of `lupine serve --tls-certificate`) and
//     LUPINE_BENCH_TLS_CERTIFICATE (its certificate, PEM); the connections counted are the h2
//     server's, so with HTTP/2 multiplexing the 64 streams a client shows one (or a few)
//   LUPINE_BENCH_ON_LOOP=1 runs the scenario's task on an event loop (see LoopExecutor)
//   LUPINE_BENCH_PRIORITY=userInitiated runs it at the priority the benchmark harness gives it
//   LUPINE_BENCH_ALL_CLIENTS=1 makes the other clients too and keeps them idle, as the harness does
//   LUPINE_BENCH_SAMPLER=1 keeps a thread of the userInitiated global queue busy with a /proc reader
//     every 10 ms, as the harness's memory sampler does. With LUPINE_BENCH_PRIORITY=userInitiated it
//     reproduces the harness's S1 numbers: the task's continuations then run on one pool thread
//     instead of two taking turns, which saves AHC a context switch per GET and costs Lupine 0.25.

let arguments = CommandLine.arguments.dropFirst()
let environment = ProcessInfo.processInfo.environment
// S8, the noisy neighbour: B's latency alone and beside A, for each API (Lupine only).
if arguments.count >= 2, arguments[arguments.startIndex] == "Lupine", arguments[arguments.startIndex + 1] == "S8" {
    let baseURL = environment["LUPINE_BENCH_URL"] ?? "http://127.0.0.1:8080"
    let scale = Double(environment["LUPINE_BENCH_SCALE"] ?? "1") ?? 1
    func milliseconds(_ duration: Duration) -> String {
        String(format: "%.2f ms", Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15)
    }
    func ratio(_ beside: Duration, _ alone: Duration) -> String {
        String(format: "%.2fx", (beside / alone))
    }
    do {
        for api in NoisyNeighbour.API.allCases {
            let alone = try await NoisyNeighbour.run(baseURL: baseURL, api: api, withNeighbour: false, scale: scale)
            let beside = try await NoisyNeighbour.run(baseURL: baseURL, api: api, withNeighbour: true, scale: scale)
            print("S8 noisyNeighbour Lupine \(api.rawValue) API: B alone p50 \(milliseconds(alone.percentile(0.5))) p99 \(milliseconds(alone.percentile(0.99))); "
                + "beside A p50 \(milliseconds(beside.percentile(0.5))) p99 \(milliseconds(beside.percentile(0.99))); "
                + "p99 beside/alone \(ratio(beside.percentile(0.99), alone.percentile(0.99))) (target <= 1.5x)")
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("bench-profile: S8: \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count >= 2,
      let client = scenarioClient(named: arguments[arguments.startIndex]),
      let scenario = Scenario.allCases.first(where: { $0.rawValue.hasPrefix(arguments[arguments.startIndex + 1] + " ") })
else {
    FileHandle.standardError.write(Data("usage: bench-profile \(scenarioClientNames.joined(separator: "|")) S1|S2|S3|S4|S5|S6|S7|S9 [runs]\n".utf8))
    exit(2)
}
guard scenario.supports(client) else {
    print("\(scenario.rawValue) \(client.name): skipped (the client cannot trust the benchmark's certificate)")
    exit(0)
}
let runs = arguments.count > 2 ? max(1, Int(arguments[arguments.startIndex + 2]) ?? 1) : 1
let idleClients: [any ScenarioClient] = environment["LUPINE_BENCH_ALL_CLIENTS"] == "1"
    ? scenarioClientNames.compactMap(scenarioClient(named:)) : []
if environment["LUPINE_BENCH_SAMPLER"] == "1" {
    DispatchQueue.global(qos: .userInitiated).async {
        while true {
            _ = try? Data(contentsOf: URL(fileURLWithPath: "/proc/self/statm"))
            usleep(UInt32.random(in: 9_000...11_000))
        }
    }
}
let baseURL = environment["LUPINE_BENCH_URL"] ?? "http://127.0.0.1:8080"
let h2URL = environment["LUPINE_BENCH_H2_URL"]
let scale = Double(environment["LUPINE_BENCH_SCALE"] ?? "1") ?? 1
let censusURL = scenario == .h2ConcurrentGET64 ? h2URL ?? "" : baseURL
let census = ConnectionCensus(serverPort: URL(string: censusURL)?.port ?? 80)

/// Context switches and CPU microseconds (user + system) of this process so far, without the
/// census thread's own (see `ConnectionCensus`).
@Sendable func processUsage() -> (voluntary: Int, involuntary: Int, cpuMicroseconds: Int) {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu = (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000
        + Int(usage.ru_utime.tv_usec) + Int(usage.ru_stime.tv_usec)
    let censusUsage = census.ownUsage
    return (Int(usage.ru_nvcsw) - censusUsage.voluntary, Int(usage.ru_nivcsw) - censusUsage.involuntary,
            cpu - censusUsage.cpuMicroseconds)
}

/// Runs `body` on `LoopExecutor` when LUPINE_BENCH_ON_LOOP=1, else where the task runs.
@Sendable func runningOnLoopIfAsked(_ body: () async throws -> Void) async throws {
    if environment["LUPINE_BENCH_ON_LOOP"] == "1" {
        try await withTaskExecutorPreference(LoopExecutor(loop: MultiThreadedEventLoopGroup.singleton.next())) {
            try await body()
        }
    } else {
        try await body()
    }
}

/// Runs the warm-up and the measured runs; returns the usage before them and their duration.
@Sendable func measure() async throws -> (usageBefore: (voluntary: Int, involuntary: Int, cpuMicroseconds: Int), elapsed: Duration) {
    var elapsed = Duration.zero
    var usageBefore = (voluntary: 0, involuntary: 0, cpuMicroseconds: 0)
    try await runningOnLoopIfAsked {
        try await scenario.run(client, baseURL: baseURL, h2URL: h2URL, scale: scale)  // warm-up: connections, caches
        usageBefore = processUsage()
        let start = ContinuousClock.now
        for _ in 0..<runs { try await scenario.run(client, baseURL: baseURL, h2URL: h2URL, scale: scale) }
        elapsed = ContinuousClock.now - start
    }
    return (usageBefore, elapsed)
}

do {
    census.start()
    let (usageBefore, elapsed) = environment["LUPINE_BENCH_PRIORITY"] == "userInitiated"
        ? try await Task(priority: .userInitiated) { try await measure() }.value
        : try await measure()
    let usageAfter = processUsage()
    let connections = census.stop()

    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    let requests = scenario.requestCount(scale: scale) * runs
    let voluntary = Double(usageAfter.voluntary - usageBefore.voluntary) / Double(requests)
    let involuntary = Double(usageAfter.involuntary - usageBefore.involuntary) / Double(requests)
    let cpuPerRequest = Double(usageAfter.cpuMicroseconds - usageBefore.cpuMicroseconds) / Double(requests)
    let rate: String
    switch scenario {
    case .body100MiB, .download100MiB:
        rate = String(format: "%.0f MB/s", Double(Scenario.largeBodySize(scale: scale) * runs) / 1e6 / seconds)
    default:
        rate = String(format: "%.0f req/s", Double(requests) / seconds)
    }
    print("\(scenario.rawValue) \(client.name): \(runs) run(s), \(String(format: "%.3f", seconds)) s, \(rate), "
        + "CPU \(String(format: "%.1f", cpuPerRequest)) µs per request, context switches per request \(String(format: "%.2f", voluntary)) voluntary + \(String(format: "%.2f", involuntary)) involuntary, "
        + "distinct TCP connections used (warm-up included) \(connections)")
} catch {
    FileHandle.standardError.write(Data("bench-profile: \(error)\n".utf8))
    exit(1)
}
