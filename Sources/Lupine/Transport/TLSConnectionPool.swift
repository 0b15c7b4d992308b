import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Lupine's own HTTP/1.1-over-TLS connections, for the https exchanges that carry a
/// `TransportTLSPolicy` (a server-trust evaluator or a client certificate).
///
/// Connections are kept alive and reused per host, port, evaluator instance and client
/// credential: an exchange never runs on a connection whose handshake was judged by another
/// evaluator or that presented another client certificate. At most `maximumConnectionsPerKey`
/// are open per key; further exchanges wait for one to become idle.
final class TLSConnectionPool: Sendable {
    struct Key: Hashable, Sendable {
        var host: String
        var port: Int
        var evaluator: ObjectIdentifier?
        var client: ObjectIdentifier?
    }

    private struct Waiter {
        var promise: EventLoopPromise<TLSConnection>
        var connect: @Sendable () -> EventLoopFuture<TLSConnection>
    }

    private struct Entry {
        var idle: [TLSConnection] = []
        var open = 0
        var waiters: [Waiter] = []
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var isShutDown = false
    }

    private let maximumConnectionsPerKey: Int
    private let connectTimeout: TimeAmount
    private let decompressionRatioLimit: Int
    private let state = NIOLockedValueBox(State())

    init(maximumConnectionsPerKey: Int, connectTimeout: TimeInterval, decompressionRatioLimit: Int) {
        self.maximumConnectionsPerKey = max(1, maximumConnectionsPerKey)
        self.connectTimeout = .nanoseconds(Int64(max(connectTimeout, 0.001) * 1_000_000_000))
        self.decompressionRatioLimit = decompressionRatioLimit
    }

    /// Runs `exchange` on a pooled or new connection.
    func execute(_ exchange: TLSExchange, policy: TransportTLSPolicy) {
        let request = exchange.request
        guard let host = request.url.host, !host.isEmpty else {
            exchange.complete(error: exchange.failure(.badURL))
            return
        }
        let port = request.url.port ?? 443
        let context: NIOSSLContext
        do {
            context = try TLSClientContextCache.shared.context(for: policy.clientCredential)
        } catch {
            exchange.complete(error: TransportErrorMapping.urlError(for: error, url: request.url))
            return
        }
        let key = policy.evaluatorIdentity.map {
            Key(host: host, port: port, evaluator: $0, client: policy.clientCredential.map(ObjectIdentifier.init))
        }
        let trustCheck = ServerTrustCheck(evaluator: policy.evaluator, host: host)
        let (connectTimeout, ratio, url) = (connectTimeout, decompressionRatioLimit, request.url)
        let connect: @Sendable () -> EventLoopFuture<TLSConnection> = {
            TLSConnection.connect(host: host, port: port, url: url, key: key, trustCheck: trustCheck, context: context,
                                  connectTimeout: connectTimeout, decompressionRatioLimit: ratio)
        }
        acquire(key: key, connect: connect).whenComplete { result in
            switch result {
            case let .failure(error):
                exchange.complete(error: TransportErrorMapping.urlError(for: error, url: url))
            case let .success(connection):
                guard exchange.attach(to: connection) else {
                    self.release(connection)
                    return
                }
                connection.eventLoop.execute { connection.handler.value.start(exchange) }
            }
        }
    }

    private func acquire(key: Key?, connect: @escaping @Sendable () -> EventLoopFuture<TLSConnection>) -> EventLoopFuture<TLSConnection> {
        guard let key else { return connect().map { self.track($0); return $0 } }
        enum Decision { case reuse(TLSConnection), open, wait(EventLoopPromise<TLSConnection>), shutDown }
        let decision = state.withLockedValue { state -> Decision in
            guard !state.isShutDown else { return .shutDown }
            var entry = state.entries[key, default: Entry()]
            defer { state.entries[key] = entry }
            while let connection = entry.idle.popLast() {
                if connection.channel.isActive { return .reuse(connection) }
            }
            if entry.open < maximumConnectionsPerKey {
                entry.open += 1
                return .open
            }
            let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: TLSConnection.self)
            entry.waiters.append(Waiter(promise: promise, connect: connect))
            return .wait(promise)
        }
        switch decision {
        case let .reuse(connection):
            return connection.eventLoop.makeSucceededFuture(connection)
        case .open:
            return open(key: key, connect: connect)
        case let .wait(promise):
            return promise.futureResult
        case .shutDown:
            return MultiThreadedEventLoopGroup.singleton.next().makeFailedFuture(URLError(.cancelled))
        }
    }

    private func open(key: Key, connect: @escaping @Sendable () -> EventLoopFuture<TLSConnection>) -> EventLoopFuture<TLSConnection> {
        connect()
            .map { connection in
                self.track(connection)
                return connection
            }
            .flatMapErrorThrowing { error in
                self.connectionGone(key: key)
                throw error
            }
    }

    /// Hooks a new connection up to the pool: reuse after a complete exchange, removal on close.
    private func track(_ connection: TLSConnection) {
        connection.eventLoop.execute {
            connection.handler.value.onReusable = { self.release(connection) }
        }
        guard let key = connection.key else { return }
        connection.channel.closeFuture.whenComplete { _ in
            self.state.withLockedValue { state in
                state.entries[key]?.idle.removeAll { $0 === connection }
            }
            self.connectionGone(key: key)
        }
    }

    /// A connection of `key` closed or failed to open: a waiter, if any, gets a new one.
    private func connectionGone(key: Key) {
        let waiter = state.withLockedValue { state -> Waiter? in
            guard var entry = state.entries[key] else { return nil }
            defer { state.entries[key] = entry }
            entry.open -= 1
            guard !entry.waiters.isEmpty, !state.isShutDown else { return nil }
            entry.open += 1
            return entry.waiters.removeFirst()
        }
        guard let waiter else { return }
        open(key: key, connect: waiter.connect).cascade(to: waiter.promise)
    }

    /// An exchange ended and left the connection reusable.
    private func release(_ connection: TLSConnection) {
        guard let key = connection.key else {
            connection.channel.close(promise: nil)
            return
        }
        let waiter = state.withLockedValue { state -> Waiter? in
            guard !state.isShutDown, var entry = state.entries[key] else { return nil }
            defer { state.entries[key] = entry }
            if !entry.waiters.isEmpty { return entry.waiters.removeFirst() }
            entry.idle.append(connection)
            return nil
        }
        if let waiter {
            waiter.promise.succeed(connection)
        } else if state.withLockedValue({ $0.isShutDown }) {
            connection.channel.close(promise: nil)
        }
    }

    /// Closes idle connections and fails waiters; running exchanges end as their connections close.
    func shutdown() {
        let (idle, waiters) = state.withLockedValue { state in
            state.isShutDown = true
            defer { state.entries = [:] }
            return (state.entries.values.flatMap(\.idle), state.entries.values.flatMap(\.waiters))
        }
        idle.forEach { $0.channel.close(promise: nil) }
        waiters.forEach { $0.promise.fail(URLError(.cancelled)) }
    }
}
