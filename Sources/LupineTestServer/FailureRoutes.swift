import NIOCore
import NIOHTTP1
import Synchronization

/// `/fail/N?key=K&status=S&mode=M`: fails the first N requests carrying key K, then answers every
/// later one with the `/anything` echo. Made for testing retries: each test picks its own key
/// (a UUID), so tests running in parallel never share a count.
///
/// How a request fails depends on `mode`:
/// - `status` (the default): a response with status S (400...599, default 503);
/// - `close`: the connection is closed without any response;
/// - `reset`: the connection is reset (TCP RST) without any response.
enum FailureRoutes {
    static let maximumFailureCount = 1_000

    /// Requests seen per key, across every server of the process (keys are unique per test).
    static let attempts = FailureCounter()

    static func plan(_ request: TestRequest, count text: String) -> ResponsePlan {
        guard let failures = Int(text), (0...maximumFailureCount).contains(failures) else {
            return .response(.error(.badRequest, "the failure count must be 0...\(maximumFailureCount)"))
        }
        guard let key = request.queryValue("key"), !key.isEmpty else {
            return .response(.error(.badRequest, "key is required"))
        }
        guard let failure = failure(for: request) else {
            return .response(.error(.badRequest, "mode must be status, close or reset; status must be 400...599"))
        }
        let attempt = attempts.record(key)
        guard attempt <= failures else {
            return EchoRoutes.echo(request, allowing: nil)
        }
        switch failure {
        case let .status(status):
            var response = TestResponse.error(status, "failure \(attempt) of \(failures)")
            response.headers.add(name: "X-Failure-Attempt", value: String(attempt))
            return .response(response)
        case .close:
            return .fault(.rawBytesThenClose(ByteBuffer()))
        case .reset:
            return .fault(.reset)
        }
    }

    private enum Failure {
        case status(HTTPResponseStatus)
        case close
        case reset
    }

    /// The failure the query asks for; nil when the query is invalid.
    private static func failure(for request: TestRequest) -> Failure? {
        switch request.queryValue("mode") ?? "status" {
        case "status":
            guard let text = request.queryValue("status") else { return .status(.serviceUnavailable) }
            guard let code = Int(text), (400...599).contains(code) else { return nil }
            return .status(HTTPResponseStatus(statusCode: code))
        case "close":
            return .close
        case "reset":
            return .reset
        default:
            return nil
        }
    }
}

/// Counts requests per key; event loops write while test threads read.
final class FailureCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts one more request for `key` and returns the new count.
    func record(_ key: String) -> Int {
        counts.withLock { counts in
            counts[key, default: 0] += 1
            return counts[key, default: 0]
        }
    }

    func count(for key: String) -> Int {
        counts.withLock { $0[key] ?? 0 }
    }
}

extension LupineTestServer {
    /// How many requests to `/fail/N` carried `key`, failed or answered.
    public func failureRouteHits(forKey key: String) -> Int {
        FailureRoutes.attempts.count(for: key)
    }
}
