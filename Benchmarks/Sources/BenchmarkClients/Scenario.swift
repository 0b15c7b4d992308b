import Foundation

/// The scenarios of issues #7 and #13, each a fixed amount of work for one client.
///
/// S1 smallGET:          2000 sequential GETs of 64 bytes
/// S2 concurrentGET64:   20000 GETs of 64 bytes, 64 in flight
/// S3 body100MiB:        a 100 MiB body into memory
/// S4 download100MiB:    a 100 MiB body to a file
/// S5 post1MiB:          200 sequential POSTs of 1 MiB, to `/discard` (`/upload` hashes each body,
///                       three quarters of the server's work, which bounded every client alike)
/// S6 cachedGET64:       S2's load on a small body with `Cache-Control: max-age=3600`: Lupine
///                       answers from its HTTP cache, raw AsyncHTTPClient (which has none) and
///                       URLSession (its cache off, as in every scenario) go to the network
/// S7 heuristicCachedGET64: S6 on a body fresh only heuristically, from a `Last-Modified` in the
///                       past (RFC 9111 section 4.2.2): a hit must cost what an S6 hit costs
/// S9 h2ConcurrentGET64: S2's load over https with ALPN h2 (issue #38), against `lupine serve`'s
///                       HTTP/2 server, whose certificate each client trusts
///                       (`BenchmarkCertificate`); URLSession sits it out (see `supports(_:)`)
///
/// S8, the noisy neighbour, is a latency scenario outside the harness (`NoisyNeighbour`).
public enum Scenario: String, CaseIterable, Sendable {
    case smallGET = "S1 smallGET"
    case concurrentGET64 = "S2 concurrentGET64"
    case body100MiB = "S3 body100MiB"
    case download100MiB = "S4 download100MiB"
    case post1MiB = "S5 post1MiB"
    case cachedGET64 = "S6 cachedGET64"
    case heuristicCachedGET64 = "S7 heuristicCachedGET64"
    case h2ConcurrentGET64 = "S9 h2ConcurrentGET64"

    /// Requests in flight at once in S2, S6, S7 and S9.
    public static let concurrency = 64

    /// Requests one run sends (S3 and S4: one).
    public func requestCount(scale: Double) -> Int {
        switch self {
        case .smallGET: Self.scaled(2000, scale)
        case .concurrentGET64, .cachedGET64, .heuristicCachedGET64, .h2ConcurrentGET64: max(Self.concurrency, Self.scaled(20000, scale)) / Self.concurrency * Self.concurrency
        case .body100MiB, .download100MiB: 1
        case .post1MiB: Self.scaled(200, scale)
        }
    }

    /// Body bytes of S3 and S4.
    public static func largeBodySize(scale: Double) -> Int { scaled(100 << 20, scale) }

    /// Whether `client` takes part: S9 needs a client that can trust the benchmark's certificate.
    public func supports(_ client: any ScenarioClient) -> Bool {
        self != .h2ConcurrentGET64 || client.trustsBenchmarkCertificate
    }

    /// Runs the scenario once with `client` against the server at `baseURL` (S9: the HTTP/2
    /// server at `h2URL`).
    public func run(_ client: any ScenarioClient, baseURL: String, h2URL: String? = nil, scale: Double) async throws {
        let count = requestCount(scale: scale)
        switch self {
        case .smallGET:
            for _ in 0..<count { try await client.get("\(baseURL)/bytes/64") }
        case .concurrentGET64:
            try await Self.concurrentGETs(count, of: "\(baseURL)/bytes/64", with: client)
        case .h2ConcurrentGET64:
            guard let h2URL else { throw ScenarioError.noHTTP2Server }
            try await Self.concurrentGETs(count, of: "\(h2URL)/bytes/64", with: client)
        case .cachedGET64:
            // `/cached/KEY` answers with the query's pairs as header fields: a small JSON body.
            try await Self.concurrentGETs(count, of: "\(baseURL)/cached/s6?Cache-Control=max-age%3D3600", with: client)
        case .heuristicCachedGET64:
            // No Cache-Control or Expires: fresh for a tenth of the time since Last-Modified.
            try await Self.concurrentGETs(count, of: "\(baseURL)/cached/s7?Last-Modified=Mon%2C%2001%20Jan%202024%2000%3A00%3A00%20GMT",
                                          with: client)
        case .body100MiB:
            let size = Self.largeBodySize(scale: scale)
            let received = try await client.bodyByteCount("\(baseURL)/bytes/\(size)")
            guard received == size else { throw ScenarioError.wrongSize(received) }
        case .download100MiB:
            let size = Self.largeBodySize(scale: scale)
            let received = try await client.downloadByteCount("\(baseURL)/bytes/\(size)")
            guard received == size else { throw ScenarioError.wrongSize(received) }
        case .post1MiB:
            for _ in 0..<count { try await client.post(Self.postBody, to: "\(baseURL)/discard") }
        }
    }

    private static let postBody = Data(repeating: 0x61, count: 1 << 20)

    /// `count` GETs of `url`, `concurrency` in flight.
    private static func concurrentGETs(_ count: Int, of url: String, with client: any ScenarioClient) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    for _ in 0..<(count / concurrency) { try await client.get(url) }
                }
            }
            try await group.waitForAll()
        }
    }

    private static func scaled(_ count: Int, _ scale: Double) -> Int { max(1, Int(Double(count) * scale)) }
}

/// The names of the clients under comparison, in the order of the tables.
public let scenarioClientNames = ["Lupine", "LupineClosure", "Engine", "AHC", "URLSession"]

/// The clients under comparison, by the name used in benchmark names and on the command line.
public func scenarioClient(named name: String) -> (any ScenarioClient)? {
    switch name {
    case "Lupine": LupineClient()
    case "LupineClosure": LupineClosureClient()
    case "Engine": EngineClient()
    case "AHC": AHCClient()
    case "URLSession": URLSessionClient()
    default: nil
    }
}
