import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOCore
import NIOPosix

extension ConnectionEngine {
    /// The settings of a `ConnectionEngine`.
    public struct Configuration: Sendable {
        /// Longest time for the TCP connection to be made, and separately for the proxy and TLS
        /// handshakes that follow; past it the connection attempt fails with `URLError(.timedOut)`.
        public var connectTimeout: TimeInterval
        /// Most connections open at once per origin (and proxy and TLS policy); further exchanges
        /// wait for one. An HTTP/2 connection counts once, whatever its streams.
        public var maximumConnectionsPerHost: Int
        /// How long a kept-alive connection (HTTP/1.1, or HTTP/2 with no stream) may stay unused
        /// before it is closed.
        public var idleConnectionTimeout: TimeInterval
        /// Largest decoded/received ratio accepted for an encoded response body (br, zstd, gzip,
        /// deflate, or several stacked) before it is treated as a decompression bomb
        /// (`URLError(.cannotDecodeContentData)`). `Int.max` turns the check off.
        public var decompressionRatioLimit: Int
        /// How often an HTTP/2 connection sends a PING to check that its server is still there, or
        /// nil (the default) for never. A PING left unanswered for as long (at least five
        /// seconds) closes the connection; its requests fail with `URLError(.networkConnectionLost)`.
        public var http2PingInterval: TimeInterval?
        /// Receives connection events: opened, reused, closed, TLS handshakes, proxy tunnels.
        /// By default nothing is logged.
        public var logger: Logger

        /// Where the engine reads the time and arms its timers (replaced in tests).
        var clock: any EngineClock = SystemEngineClock()
        /// The threads connections run on.
        var eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - connectTimeout: Bound of the TCP connect, and of the proxy and TLS handshakes.
        ///   - maximumConnectionsPerHost: Connections open at once per origin; at least 1.
        ///   - idleConnectionTimeout: How long an unused kept-alive connection stays open.
        ///   - decompressionRatioLimit: Largest accepted decompression ratio.
        ///   - http2PingInterval: How often HTTP/2 connections send a PING; nil for never.
        ///   - logger: Where connection events go; a logger that drops everything by default.
        public init(connectTimeout: TimeInterval = 60,
                    maximumConnectionsPerHost: Int = 6,
                    idleConnectionTimeout: TimeInterval = 60,
                    decompressionRatioLimit: Int = 200,
                    http2PingInterval: TimeInterval? = nil,
                    logger: Logger = ConnectionEngine.Configuration.silentLogger) {
            self.connectTimeout = connectTimeout
            self.maximumConnectionsPerHost = max(1, maximumConnectionsPerHost)
            self.idleConnectionTimeout = idleConnectionTimeout
            self.decompressionRatioLimit = decompressionRatioLimit
            self.http2PingInterval = http2PingInterval
            self.logger = logger
        }

        /// The settings a Session takes from its URLSessionConfiguration: the connect timeout is
        /// `timeoutIntervalForRequest`, the per-host limit `httpMaximumConnectionsPerHost`.
        ///
        /// - Parameters:
        ///   - sessionConfiguration: The Session's configuration.
        ///   - logger: Where connection events go.
        public init(sessionConfiguration: URLSessionConfiguration, logger: Logger = ConnectionEngine.Configuration.silentLogger) {
            let requestTimeout = sessionConfiguration.timeoutIntervalForRequest
            self.init(connectTimeout: requestTimeout > 0 ? requestTimeout : 60,
                      maximumConnectionsPerHost: sessionConfiguration.httpMaximumConnectionsPerHost,
                      logger: logger)
        }

        /// A logger that drops every message.
        public static let silentLogger = Logger(label: "lupine.engine", factory: { _ in SwiftLogNoOpLogHandler() })
    }
}
