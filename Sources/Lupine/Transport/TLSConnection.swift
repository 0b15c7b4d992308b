import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL

/// An HTTP/1.1 connection over TLS whose server was accepted by a `ServerTrustCheck` during the
/// handshake. It carries one exchange at a time and goes back to its pool between exchanges.
final class TLSConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<TLSConnectionHandler>
    /// The connection's pool key; nil when it must not be reused.
    let key: TLSConnectionPool.Key?
    /// Holds the evaluator (and so its identity in `key`) alive while the connection lives.
    let trustCheck: ServerTrustCheck

    var eventLoop: any EventLoop { channel.eventLoop }

    private init(channel: any Channel, handler: NIOLoopBound<TLSConnectionHandler>, key: TLSConnectionPool.Key?, trustCheck: ServerTrustCheck) {
        self.channel = channel
        self.handler = handler
        self.key = key
        self.trustCheck = trustCheck
    }

    /// Connects, and succeeds once the TLS handshake (with the trust decision) has completed.
    ///
    /// - Parameters:
    ///   - host: The host to connect to; also the SNI name unless it is an IP address.
    ///   - trustCheck: The evaluator run during the handshake.
    ///   - context: The TLS context (client certificate, if any).
    ///   - decompressionRatioLimit: As for AsyncHTTPClient's decompression.
    /// - Returns: The connection; a failure is already the URLError to report.
    static func connect(host: String, port: Int, url: URL, key: TLSConnectionPool.Key?, trustCheck: ServerTrustCheck,
                        context: NIOSSLContext, connectTimeout: TimeAmount, decompressionRatioLimit: Int) -> EventLoopFuture<TLSConnection> {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let handshake = eventLoop.makePromise(of: Void.self)
        let isIPAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLClientHandler(context: context,
                                                                serverHostname: isIPAddress ? nil : host,
                                                                customVerificationCallback: trustCheck.verify))
                    try pipeline.addHTTPClientHandlers(leftOverBytesStrategy: .dropBytes)
                    try pipeline.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(decompressionRatioLimit)))
                    try pipeline.addHandler(TLSConnectionHandler(handshake: handshake, trustCheck: trustCheck, url: url))
                }
            }
        return bootstrap.connect(host: host, port: port)
            .flatMap { channel in
                handshake.futureResult.flatMapThrowing {
                    let handler = try channel.pipeline.syncOperations.handler(type: TLSConnectionHandler.self)
                    return TLSConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop),
                                         key: key, trustCheck: trustCheck)
                }
                .flatMapError { error in
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
            .flatMapErrorThrowing { error in
                handshake.fail(error)
                throw trustCheck.urlError(for: error, url: url)
            }
    }
}
