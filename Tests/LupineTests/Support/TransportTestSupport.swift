import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer

extension AFError {
    /// The code of the `URLError` inside `.sessionTaskFailed`; nil for every other case.
    var sessionTaskURLErrorCode: URLError.Code? {
        guard case let .sessionTaskFailed(error) = self else { return nil }
        return (error as? URLError)?.code
    }
}

extension Session {
    /// Whether a plain GET of `/get` still succeeds: a fault left this Session usable.
    func performsNormalRequest(on server: LupineTestServer) async -> Bool {
        let response = await request(server.url("/get")).serializingData().response
        return response.error == nil && response.response?.statusCode == 200
    }
}

/// Seconds `body` took.
func secondsElapsed(_ body: () async throws -> Void) async rethrows -> Double {
    let duration = try await ContinuousClock().measure(body)
    return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// The process's resident set size in bytes (`VmRSS` of /proc/self/status), nil where unavailable.
func residentMemoryBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return nil }
    let kibibytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    return kibibytes.map { $0 * 1024 }
}
