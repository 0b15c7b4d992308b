import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// The production `Transport`: one exchange is one AsyncHTTPClient delegate-based request.
///
/// AsyncHTTPClient's own redirect following is off (Session follows redirects so that every hop is
/// visible); its decompression is on for gzip and deflate, with a ratio limit so that a compression
/// bomb fails as `URLError(.cannotDecodeContentData)` instead of exhausting memory. An exchange with a
/// `TransportProxy` runs on a client of its own for that proxy. An https exchange with a
/// `TransportTLSPolicy` runs on `TLSConnectionPool` instead: AsyncHTTPClient has no hook for a
/// trust decision during the handshake, nor for a client certificate chosen per request.
final class AsyncHTTPClientTransport: Transport {
    /// Settings taken from the Session configuration.
    struct Options: Sendable {
        /// Connection establishment limit.
        var connectTimeout: TimeInterval = 60
        /// Per-host HTTP/1.1 connection soft limit.
        var maximumConnectionsPerHost: Int = 8
        /// Largest decompressed/compressed ratio accepted before a body is treated as a bomb.
        var decompressionRatioLimit: Int = 200
    }

    private let options: Options
    private let directClient: HTTPClient
    private let tlsConnections: TLSConnectionPool
    /// AsyncHTTPClient sets its proxy per client: one client per proxy (and its credentials), made
    /// on first use; nil once shut down.
    private let proxiedClients = NIOLockedValueBox<[TransportProxy: HTTPClient]?>([:])

    init(options: Options = Options()) {
        self.options = options
        directClient = Self.makeClient(options: options, proxy: nil)
        tlsConnections = TLSConnectionPool(maximumConnectionsPerKey: options.maximumConnectionsPerHost,
                                           connectTimeout: options.connectTimeout,
                                           decompressionRatioLimit: options.decompressionRatioLimit)
    }

    private static func makeClient(options: Options, proxy: TransportProxy?) -> HTTPClient {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Int64(max(options.connectTimeout, 0.001) * 1_000_000_000)), read: nil),
            connectionPool: .init(idleTimeout: .seconds(60),
                                  concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, options.maximumConnectionsPerHost)),
            proxy: proxy.map(clientProxy),
            decompression: .enabled(limit: .ratio(options.decompressionRatioLimit))
        )
        configuration.httpVersion = .automatic
        // URLSession fails a task as soon as its connection cannot be made (refused, host unknown).
        // AsyncHTTPClient's default instead retries with backoff until the connect timeout (60 s by
        // default), so a closed port would only fail after a minute, with every retry hidden.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
                          configuration: configuration)
    }

    /// AsyncHTTPClient's description of `proxy`. Its HTTP proxies take Basic and Bearer
    /// authorization only; another scheme is not sent.
    private static func clientProxy(_ proxy: TransportProxy) -> HTTPClient.Configuration.Proxy {
        switch proxy.kind {
        case .socks:
            return .socksServer(host: proxy.host, port: proxy.port)
        case .http:
            var authorization: HTTPClient.Authorization?
            if let value = proxy.authorization {
                let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
                if parts.count == 2, parts[0].lupineEqualsIgnoringASCIICase("Basic") {
                    authorization = .basic(credentials: parts[1].trimmingCharacters(in: .whitespaces))
                } else if parts.count == 2, parts[0].lupineEqualsIgnoringASCIICase("Bearer") {
                    authorization = .bearer(tokens: parts[1].trimmingCharacters(in: .whitespaces))
                }
            }
            return .server(host: proxy.host, port: proxy.port, authorization: authorization)
        }
    }

    /// The client for `proxy`, or nil after shutdown.
    private func client(for proxy: TransportProxy?) -> HTTPClient? {
        proxiedClients.withLockedValue { clients -> HTTPClient? in
            guard clients != nil else { return nil }
            guard let proxy else { return directClient }
            if let client = clients?[proxy] { return client }
            let client = Self.makeClient(options: options, proxy: proxy)
            clients?[proxy] = client
            return client
        }
    }

    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        let exchange = AsyncHTTPClientExchange(request: request, events: events)
        // AsyncHTTPClient writes the method into the request line unchecked: a method holding a
        // space or CR LF would smuggle a second request onto the connection. A method is a token,
        // like a header field name (RFC 9110 section 9.1).
        guard InvalidHTTPHeaderError.problem(name: request.method.rawValue, value: "") == nil else {
            exchange.failBeforeStart(URLError(.badURL, userInfo: [
                NSURLErrorFailingURLErrorKey: request.url,
                NSLocalizedDescriptionKey: "The HTTP method \(request.method.rawValue.debugDescription) is not a valid token; nothing was sent.",
            ]))
            return exchange
        }
        if let policy = request.tlsPolicy, request.url.scheme?.lowercased() == "https" {
            let exchange = TLSExchange(request: request, events: events)
            // Lupine's TLS connections do not tunnel through proxies; sending the request through
            // AsyncHTTPClient instead would skip the trust decision, so it fails.
            guard request.proxy == nil else {
                exchange.complete(error: URLError(.secureConnectionFailed, userInfo: [
                    NSURLErrorFailingURLErrorKey: request.url,
                    NSLocalizedDescriptionKey: "Server trust evaluation and client certificates are not supported through a proxy; nothing was sent.",
                ]))
                return exchange
            }
            tlsConnections.execute(exchange, policy: policy)
            return exchange
        }
        do {
            let clientRequest = try HTTPClient.Request(url: request.url,
                                                       method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                                                       headers: NIOHTTP1.HTTPHeaders(request.headerFields.map { ($0.name, $0.value) }),
                                                       body: request.body.map { exchange.makeClientBody($0) })
            let deadline = request.deadline.map { NIODeadline.now() + .nanoseconds(Int64(max(0, $0.timeIntervalSinceNow) * 1_000_000_000)) }
            guard let client = client(for: request.proxy) else { throw HTTPClientError.alreadyShutdown }
            let task = client.execute(request: clientRequest, delegate: exchange, deadline: deadline)
            exchange.start(task)
        } catch {
            exchange.failBeforeStart(error)
        }
        return exchange
    }

    /// How long the clients outlive `shutdown()`.
    ///
    /// AsyncHTTPClient 1.37.0 traps ("A connection that we don't know was released?",
    /// HTTPConnectionPool+HTTP1Connections.swift:502) when its pool shuts down while a connection
    /// that just finished a request is being handed back to it: the request's result is delivered
    /// before the connection returns to the pool, so a Session released right after its last
    /// response (a test, a command-line tool) could crash the process. Nothing new is accepted
    /// from the moment `shutdown()` is called; the clients themselves shut down a little later,
    /// once connections in the middle of being handed back have been.
    static let shutdownGrace: TimeAmount = .milliseconds(200)

    func shutdown(completion: @escaping @Sendable () -> Void) {
        tlsConnections.shutdown()
        let proxied = proxiedClients.withLockedValue { clients in
            defer { clients = nil }
            return clients.map { Array($0.values) } ?? []
        }
        let clients = proxied + [directClient]
        let remaining = NIOLockedValueBox(clients.count)
        MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: Self.shutdownGrace) {
            for client in clients {
                client.shutdown { _ in
                    let isLast = remaining.withLockedValue { count -> Bool in
                        count -= 1
                        return count == 0
                    }
                    if isLast { completion() }
                }
            }
        }
    }
}
