import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore

/// Lupine's connection engine: the `Transport` every Session uses unless given another.
///
/// Built on SwiftNIO, it keeps a pool of connections per origin, proxy and TLS policy (HTTP/1.1
/// kept alive, or HTTP/2 when ALPN chooses it), runs the server-trust evaluators inside each TLS
/// handshake, goes through HTTP proxies (absolute-form requests for http, `CONNECT` tunnels for
/// https and wss) and SOCKS5 proxies, and bounds every phase of an exchange by a deadline: the
/// connect, the proxy and TLS handshakes, the wait for a pooled connection, each idle gap and the
/// resource deadline. Response bodies in gzip or deflate are decompressed, up to a ratio limit.
/// WebSocket opening handshakes are exchanges of the engine too.
///
/// A Session makes its engine from its configuration. Make one yourself to pass a `Logger` for
/// connection events:
///
/// ```swift
/// let configuration = URLSessionConfiguration.af.default
/// let engine = ConnectionEngine(configuration: .init(sessionConfiguration: configuration, logger: logger))
/// let session = Session(transport: engine, configuration: configuration)
/// ```
public final class ConnectionEngine: Transport {
    private let pool: ConnectionPool

    /// Creates an engine.
    ///
    /// - Parameter configuration: Timeouts, connection limits, decompression limit and logger.
    public init(configuration: Configuration = Configuration()) {
        pool = ConnectionPool(configuration: configuration)
    }

    public func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        start(request, upgrade: nil, events: events)
    }

    /// Starts an exchange that asks to switch protocols (see `ProtocolUpgrade`), on an HTTP/1.1
    /// connection of its own made like any other (proxy, TLS and trust, deadlines). After a 101 the
    /// connection carries the new protocol until it closes; after any other answer it closes.
    func execute(_ request: TransportRequest, upgrade: any ProtocolUpgrade, events: any TransportEvents) -> any TransportTask {
        start(request, upgrade: upgrade, events: events)
    }

    private func start(_ request: TransportRequest, upgrade: (any ProtocolUpgrade)?, events: any TransportEvents) -> any TransportTask {
        guard let (key, shareable) = ConnectionKey.make(for: request, http1Only: upgrade != nil) else {
            return FailedExchange.report(URLError(.unsupportedURL, userInfo: [
                NSURLErrorFailingURLErrorKey: request.url,
                NSLocalizedDescriptionKey: "The URL \(request.url.absoluteString.debugDescription) has no host or a scheme other than http, https, ws or wss; nothing was sent.",
            ]), events: events)
        }
        // The method goes into the request line as is: one holding a space or CR LF would smuggle a
        // second request onto the connection. A method is a token (RFC 9110 section 9.1).
        guard InvalidHTTPHeaderError.problem(name: request.method.rawValue, value: "") == nil else {
            return FailedExchange.report(URLError(.badURL, userInfo: [
                NSURLErrorFailingURLErrorKey: request.url,
                NSLocalizedDescriptionKey: "The HTTP method \(request.method.rawValue.debugDescription) is not a valid token; nothing was sent.",
            ]), events: events)
        }
        // An upgrade runs on a connection of its own, as browsers open one per WebSocket: a server
        // may take an upgrade only as the first request of a connection, and a refused one must
        // not leave its connection to the next request.
        let exchange = EngineExchange(request: request, events: events, key: key, shareable: shareable && upgrade == nil,
                                      pool: pool, upgrade: upgrade)
        pool.execute(exchange)
        return exchange
    }

    public func shutdown(completion: @escaping @Sendable () -> Void) {
        pool.shutdown(completion: completion)
    }

    // MARK: Connection counts (for metrics)

    /// The engine's connections right now: open, and opened and closed since it was made.
    ///
    /// A small hook for gauges: read it, or add an observer with `observeConnectionCounts` to be told.
    var connectionCounts: ConnectionCounts {
        pool.counts
    }

    /// The origins (with proxy and TLS policy) the pool keeps an entry for.
    var poolEntryCount: Int {
        pool.entryCount
    }

    /// Adds `observer`, called on an event loop with the new counts each time a connection opens
    /// or closes, for as long as the engine lives.
    func observeConnectionCounts(_ observer: @escaping @Sendable (ConnectionCounts) -> Void) {
        pool.observeCounts(observer)
    }
}

/// The handle of an exchange refused before it started: it reports its failure once, at once.
final class FailedExchange: TransportTask {
    static func report(_ error: URLError, events: any TransportEvents) -> FailedExchange {
        let task = FailedExchange()
        events.transportDidComplete(task, error: error)
        return task
    }

    func cancel() {}
    func pauseReading() {}
    func resumeReading() {}
}
