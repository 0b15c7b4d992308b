import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum LoopbackPortError: Error {
    case socketCallFailed(String, errno: CInt)
}

/// A 127.0.0.1 port that refuses connections for as long as this value is open.
///
/// A socket is bound to a free port and never listens: the kernel answers a connect with a reset
/// (`ECONNREFUSED`), so a request fails with `.cannotConnectToHost`, and no other socket (another
/// test's server, another process) can take the port meanwhile, as it could once a probed port was
/// closed again. Close it when the test ends (`defer { refusing.close() }`), so that the test
/// leaves no socket behind; the deinit closes it too, as a backstop.
///
/// The same type as LupineTests' `Support/RefusingLoopbackPort.swift`: the test targets share no
/// support module.
final class RefusingLoopbackPort: Sendable {
    /// The bound port.
    let port: Int
    /// The bound socket; nil once closed.
    private let descriptor: Locked<CInt?>

    init() throws {
        #if canImport(Darwin)
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #else
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard descriptor >= 0 else { throw LoopbackPortError.socketCallFailed("socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let failure = errno
            closeSocket(descriptor)
            throw LoopbackPortError.socketCallFailed("bind", errno: failure)
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else {
            let failure = errno
            closeSocket(descriptor)
            throw LoopbackPortError.socketCallFailed("getsockname", errno: failure)
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.descriptor = Locked(descriptor)
    }

    deinit { close() }

    /// `http://127.0.0.1:<port><path>`; `path` is empty or starts with a slash.
    func url(_ path: String, scheme: String = "http") -> String {
        "\(scheme)://127.0.0.1:\(port)\(path)"
    }

    /// Closes the socket, releasing the port; closing again does nothing.
    func close() {
        guard let open = descriptor.withValue({ value -> CInt? in
            defer { value = nil }
            return value
        }) else { return }
        closeSocket(open)
    }
}

/// `close(2)`, named apart from `RefusingLoopbackPort.close()`.
private func closeSocket(_ descriptor: CInt) {
    _ = close(descriptor)
}
