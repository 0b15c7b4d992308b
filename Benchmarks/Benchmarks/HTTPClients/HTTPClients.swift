import Benchmark
import BenchmarkClients
import Foundation

// The scenarios S1-S7 and S9 (Sources/BenchmarkClients/Scenario.swift) for Lupine's async API,
// Lupine's closure API (LupineClosure), its engine alone (through `Transport`), raw
// AsyncHTTPClient and URLSession, against the server at LUPINE_BENCH_URL and, for S9, the HTTP/2
// server at LUPINE_BENCH_H2_URL whose certificate LUPINE_BENCH_TLS_CERTIFICATE names (compare.sh
// starts `lupine serve` in its own process). One benchmark iteration runs the whole scenario;
// compare.sh turns its wall-clock time into requests or bytes per second. LUPINE_BENCH_SCALE
// shrinks or grows every count (default 1).

let environment = ProcessInfo.processInfo.environment
let baseURL = environment["LUPINE_BENCH_URL"] ?? "http://127.0.0.1:8080"
let h2URL = environment["LUPINE_BENCH_H2_URL"]
let scale = Double(environment["LUPINE_BENCH_SCALE"] ?? "1") ?? 1

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .cpuTotal, .mallocCountTotal, .peakMemoryResident, .contextSwitches],
        warmupIterations: 1,
        maxDuration: .seconds(120),
        maxIterations: 3
    )

    let clients = scenarioClientNames.compactMap(scenarioClient(named:))
    for client in clients {
        for scenario in Scenario.allCases where scenario.supports(client) {
            Benchmark("\(scenario.rawValue) \(client.name)") { _ in
                try await scenario.run(client, baseURL: baseURL, h2URL: h2URL, scale: scale)
            }
        }
    }
}
