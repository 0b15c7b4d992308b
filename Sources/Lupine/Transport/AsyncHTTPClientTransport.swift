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
        client = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
                            configuration: configuration)
    }

    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        let exchange = AsyncHTTPClientExchange(request: request, events: events)
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
