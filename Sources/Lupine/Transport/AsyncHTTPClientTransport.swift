import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import NIOPosix

/// The production `Transport`: one exchange is one AsyncHTTPClient delegate-based request.
///
/// AsyncHTTPClient's own redirect following is off (Session follows redirects so that every hop is
/// visible); its decompression is on for gzip and deflate, with a ratio limit so that a compression
/// bomb fails as `URLError(.cannotDecodeContentData)` instead of exhausting memory.
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

    private let client: HTTPClient

    init(options: Options = Options()) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(Int64(max(options.connectTimeout, 0.001) * 1_000_000_000)), read: nil),
            connectionPool: .init(idleTimeout: .seconds(60),
                                  concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, options.maximumConnectionsPerHost)),
            decompression: .enabled(limit: .ratio(options.decompressionRatioLimit))
        )
        configuration.httpVersion = .automatic
        // URLSession fails a task as soon as its connection cannot be made (refused, host unknown).
        // AsyncHTTPClient's default instead retries with backoff until the connect timeout (60 s by
        // default), so a closed port would only fail after a minute, with every retry hidden.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
                            configuration: configuration)
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
        do {
            let clientRequest = try HTTPClient.Request(url: request.url,
                                                       method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                                                       headers: NIOHTTP1.HTTPHeaders(request.headerFields.map { ($0.name, $0.value) }),
                                                       body: request.body.map { exchange.makeClientBody($0) })
            let deadline = request.deadline.map { NIODeadline.now() + .nanoseconds(Int64(max(0, $0.timeIntervalSinceNow) * 1_000_000_000)) }
            let task = client.execute(request: clientRequest, delegate: exchange, deadline: deadline)
            exchange.start(task)
        } catch {
            exchange.failBeforeStart(error)
        }
        return exchange
    }

    func shutdown(completion: @escaping @Sendable () -> Void) {
        client.shutdown { _ in completion() }
    }
}
