import Foundation
import Lupine
import LupineTestServer

/// One LupineTestServer for this test process, started on first use on a free loopback port.
actor SharedTestServer {
    static let instance = SharedTestServer()

    private var starting: Task<LupineTestServer, any Error>?

    func server() async throws -> LupineTestServer {
        if let starting { return try await starting.value }
        let task = Task { try await LupineTestServer.start() }
        starting = task
        return try await task.value
    }
}

/// The shared test server.
func testServer() async throws -> LupineTestServer {
    try await SharedTestServer.instance.server()
}

/// A value shared between a test and the closures it hands to Lupine.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    var current: Value { lock.withLock { value } }

    @discardableResult
    func withValue<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.withLock { body(&value) }
    }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `timeout` seconds. Events
/// reach monitors asynchronously, after the response has reached the caller.
/// The default is generous because it only bounds a failure: on a loaded machine (a test run
/// beside builds) what takes milliseconds on a quiet one can take seconds.
func waitUntil(timeout: TimeInterval = 30, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

extension AFError {
    /// The code of the `URLError` inside `.sessionTaskFailed`; nil for every other case.
    var sessionTaskURLErrorCode: URLError.Code? {
        guard case let .sessionTaskFailed(error) = self else { return nil }
        return (error as? URLError)?.code
    }
}
