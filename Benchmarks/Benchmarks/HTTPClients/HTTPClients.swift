import Benchmark
import Foundation

// The five scenarios of issue #7, each for Lupine, raw AsyncHTTPClient and URLSession, against the
// server at LUPINE_BENCH_URL (compare.sh starts `lupine serve` in its own process).
//
// S1 smallGET:          2000 sequential GETs of 64 bytes
// S2 concurrentGET64:   20000 GETs of 64 bytes, 64 in flight
// S3 body100MiB:        a 100 MiB body into memory
// S4 download100MiB:    a 100 MiB body to a file
// S5 post1MiB:          200 sequential POSTs of 1 MiB
//
// One benchmark iteration runs the whole scenario; compare.sh turns its wall-clock time into
// requests or bytes per second. LUPINE_BENCH_SCALE shrinks or grows every count (default 1).

let environment = ProcessInfo.processInfo.environment
let baseURL = environment["LUPINE_BENCH_URL"] ?? "http://127.0.0.1:8080"
let scale = Double(environment["LUPINE_BENCH_SCALE"] ?? "1") ?? 1

func scaled(_ count: Int) -> Int { max(1, Int(Double(count) * scale)) }

let smallGETCount = scaled(2000)
let concurrency = 64
let concurrentGETCount = max(concurrency, scaled(20000))
let largeBodySize = scaled(100 << 20)
let postCount = scaled(200)
let postBody = Data(repeating: 0x61, count: 1 << 20)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .cpuTotal, .mallocCountTotal, .peakMemoryResident, .contextSwitches],
        warmupIterations: 1,
        maxDuration: .seconds(120),
        maxIterations: 3
    )

    let clients: [any ScenarioClient] = [LupineClient(), AHCClient(), URLSessionClient()]

    for client in clients {
        Benchmark("S1 smallGET \(client.name)") { _ in
            for _ in 0..<smallGETCount { try await client.get("\(baseURL)/bytes/64") }
        }
        Benchmark("S2 concurrentGET64 \(client.name)") { _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                let perWorker = concurrentGETCount / concurrency
                for _ in 0..<concurrency {
                    group.addTask { for _ in 0..<perWorker { try await client.get("\(baseURL)/bytes/64") } }
                }
                try await group.waitForAll()
            }
        }
        Benchmark("S3 body100MiB \(client.name)") { _ in
            let count = try await client.bodyByteCount("\(baseURL)/bytes/\(largeBodySize)")
            guard count == largeBodySize else { throw ScenarioError.wrongSize(count) }
        }
        Benchmark("S4 download100MiB \(client.name)") { _ in
            let count = try await client.downloadByteCount("\(baseURL)/bytes/\(largeBodySize)")
            guard count == largeBodySize else { throw ScenarioError.wrongSize(count) }
        }
        Benchmark("S5 post1MiB \(client.name)") { _ in
            for _ in 0..<postCount { try await client.post(postBody, to: "\(baseURL)/upload") }
        }
    }
}
