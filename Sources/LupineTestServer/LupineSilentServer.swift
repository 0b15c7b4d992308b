import NIOCore
import NIOPosix
import Synchronization

/// A server for deadline tests that accepts connections and never sends a byte: a TLS client
/// waits in its handshake, an HTTP client for its response head. It reads and drops what it is
/// sent (or, for backpressure tests, reads nothing at all), listens on 127.0.0.1 only, and counts
/// the connections it accepted.
public final class LupineSilentServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let accepted: Accepted
    private let isShutDown = Mutex(false)

    /// The TCP port the server listens on.
    public let port: Int

    final class Accepted: Sendable {
        let count = Mutex(0)
    }

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, accepted: Accepted, port: Int) {
        self.group = group
        self.channel = channel
        self.accepted = accepted
        self.port = port
    }

    /// Starts on a free port of 127.0.0.1.
    ///
    /// - Parameter readsRequests: When false, the server never reads from its connections (and
    ///   keeps small receive buffers), so a client's writes soon stop being accepted.
    public static func start(readsRequests: Bool = true) async throws -> LupineSilentServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let accepted = Accepted()
        do {
            var bootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            if !readsRequests {
                bootstrap = bootstrap
                    .serverChannelOption(.socketOption(.so_rcvbuf), value: 16 * 1024)
                    .childChannelOption(.autoRead, value: false)
            }
            let channel = try await bootstrap
                .childChannelInitializer { channel in
                    accepted.count.withLock { $0 += 1 }
                    return channel.eventLoop.makeSucceededVoidFuture()
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                try? await channel.close().get()
                throw LupineTestServerError.noBoundPort
            }
            return LupineSilentServer(group: group, channel: channel, accepted: accepted, port: boundPort)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Connections accepted so far.
    public var acceptedConnections: Int { accepted.count.withLock { $0 } }

    /// Closes the listener and every connection. Calling it again does nothing.
    public func shutdown() async throws {
        let alreadyShutDown = isShutDown.withLock { flag in
            defer { flag = true }
            return flag
        }
        guard !alreadyShutDown else { return }
        try? await channel.close().get()
        try await group.shutdownGracefully()
    }
}
