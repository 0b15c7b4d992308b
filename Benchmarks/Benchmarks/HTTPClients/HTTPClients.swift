import Benchmark
import BenchmarkClients
import Foundation

// The scenarios S1-S7 (Sources/BenchmarkClients/Scenario.swift) for Lupine, its engine alone
// (through `Transport`), raw AsyncHTTPClient and URLSession, against the server at
// LUPINE_BENCH_URL (compare.sh starts `lupine serve` in its own
// process). One benchmark iteration runs the whole scenario; compare.sh turns its wall-clock time
// into requests or bytes per second. LUPINE_BENCH_SCALE shrinks or grows every count (default 1).

let environment = ProcessInfo.processInfo.environment
let baseURL = environment["LUPINE_BENCH_URL"] ?? "http://127.0.0.1:8080"
let scale = Double(environment["LUPINE_BENCH_SCALE"] ?? "1") ?? 1

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .cpuTotal, .mallocCountTotal, .peakMemoryResident, .contextSwitches],
        warmupIterations: 1,
        maxDuration: .seconds(120),
        maxIterations: 3
    )

    let clients: [any ScenarioClient] = [LupineClient(), EngineClient(), AHCClient(), URLSessionClient()]
    for client in clients {
        for scenario in Scenario.allCases {
            Benchmark("\(scenario.rawValue) \(client.name)") { _ in
                try await scenario.run(client, baseURL: baseURL, scale: scale)
            }
        }
    }
}
