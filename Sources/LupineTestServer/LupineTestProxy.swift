import NIOCore
import NIOPosix
import Synchronization

/// A minimal proxy for tests: an HTTP forward proxy, or a SOCKS5 proxy without authentication.
/// It listens on 127.0.0.1 only, reaches only loopback targets, and records what each client
/// asked for (method, target, header fields such as `Proxy-Authorization`).
///
/// Like squid in its default configuration, the HTTP proxy serves absolute-form requests
/// (`GET http://origin/path HTTP/1.1`, forwarded with `Connection: close`) and opens `CONNECT`
/// tunnels only to port 443 unless told otherwise.
public final class LupineTestProxy: Sendable {
    /// The protocol the proxy speaks.
    public enum Kind: Sendable {
        /// HTTP `CONNECT` tunnels.
        case http
        /// SOCKS5 connect requests, no authentication.
        case socks5
    }

    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let log: ProxyLog
    private let isShutDown = Mutex(false)

    /// The TCP port the proxy listens on.
    public let port: Int
    /// The protocol the proxy speaks.
    public let kind: Kind

    private init(kind: Kind, group: MultiThreadedEventLoopGroup, channel: any Channel, log: ProxyLog, port: Int) {
        self.kind = kind
        self.group = group
        self.channel = channel
        self.log = log
        self.port = port
    }

    /// Starts a proxy on a free port of 127.0.0.1.
    ///
    /// - Parameters:
    ///   - kind: HTTP `CONNECT` or SOCKS5.
    ///   - user: With `password`, the Basic credentials an HTTP proxy requires: a `CONNECT`
    ///     without them is answered `407` with `Proxy-Authenticate: Basic realm="LupineTestProxy"`.
    ///   - password: See `user`.
    ///   - connectPorts: The ports an HTTP proxy opens `CONNECT` tunnels to (403 for others);
    ///     nil for any port.
    ///   - loopbackDomains: Domains whose host names the proxy reaches at 127.0.0.1, as if a
    ///     resolver answered so for each name equal to or under one of them: tests then use host
    ///     names of their choice ("a.example.invalid", "shop.example.co.uk") against a server on
    ///     loopback. Other names are refused, as before.
    public static func start(kind: Kind = .http, user: String? = nil, password: String? = nil,
                             connectPorts: Set<Int>? = [443], loopbackDomains: Set<String> = []) async throws -> LupineTestProxy {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let log = ProxyLog()
        let requiredAuthorization = user.map { "Basic " + Base64.encode(Array("\($0):\(password ?? "")".utf8)) }
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ProxyTunnelHandler(kind: kind, requiredAuthorization: requiredAuthorization,
                                               connectPorts: connectPorts, loopbackDomains: loopbackDomains, log: log))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let boundPort = channel.localAddress?.port else {
                try? await channel.close().get()
                throw LupineTestServerError.noBoundPort
            }
            return LupineTestProxy(kind: kind, group: group, channel: channel, log: log, port: boundPort)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// What clients asked for, oldest first.
    public var records: [ProxyRecord] {
        log.all
    }

    /// Closes the listener and every tunnel. Calling it again does nothing.
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
