import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
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

enum LoopbackPortError: Error {
    case socketCallFailed(String, errno: CInt)
}

/// A 127.0.0.1 port nothing listens on: a socket is bound to a free port, which is read back, and
/// closed without ever listening.
func closedLoopbackPort() throws -> Int {
    #if canImport(Darwin)
    let descriptor = socket(AF_INET, SOCK_STREAM, 0)
    #else
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #endif
    guard descriptor >= 0 else { throw LoopbackPortError.socketCallFailed("socket", errno: errno) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0 else { throw LoopbackPortError.socketCallFailed("bind", errno: errno) }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard named == 0 else { throw LoopbackPortError.socketCallFailed("getsockname", errno: errno) }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// The process's resident set size in bytes (`VmRSS` of /proc/self/status), nil where unavailable.
func residentMemoryBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return nil }
    let kibibytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    return kibibytes.map { $0 * 1024 }
}
