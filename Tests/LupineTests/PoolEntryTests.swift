import Foundation
@testable import Lupine
import NIOCore
import NIOEmbedded
import Testing

/// `PoolEntry` as a value: each event in, the one action out. The connections are stand-ins with
/// embedded channels; the pool that would carry the actions out is not involved.
@Suite struct PoolEntryTests {
    // MARK: Leasing

    @Test func aFirstRequestWaitsForOneNewConnection() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        let action = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        #expect(action.connects == .open(1))
        #expect(entry.waiters.count == 1)
        #expect(entry.connecting == 1)
    }

    @Test func aPlainOriginOpensConnectionsSideBySideUpToTheLimit() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        let connects = (0..<4).map { _ in entry.lease(fixture.exchange(), limit: 3, now: fixture.now).connects }
        #expect(connects == [.open(1), .open(1), .open(1), PoolEntry.Connects.none])
    }

    @Test func anOriginThatMaySpeakHTTP2OpensOneConnectionAtATimeUntilItIsKnown() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        let first = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        let second = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        #expect(first.connects == .open(1))
        #expect(second.connects == PoolEntry.Connects.none)

        // HTTP/1.1 it is: the waiting exchange gets the connection, and another opens for the next.
        let connection = fixture.connection()
        let opened = entry.connectionOpened(connection, limit: 6, now: fixture.now)
        guard case let .runAll(exchanges, on, then) = opened else {
            Issue.record("expected the first waiter to run, got \(opened)")
            return
        }
        #expect(exchanges.count == 1 && on === connection)
        #expect(then == .open(1))
    }

    @Test func aReleasedConnectionGoesToTheNextWaiterElseItIsParked() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        let first = fixture.exchange()
        let second = fixture.exchange()
        _ = entry.lease(first, limit: 1, now: fixture.now)
        _ = entry.lease(second, limit: 1, now: fixture.now)
        let connection = fixture.connection()
        _ = entry.connectionOpened(connection, limit: 1, now: fixture.now)

        guard case let .run(next, on) = entry.release(connection) else {
            Issue.record("expected the second waiter to run")
            return
        }
        #expect(next === second && on === connection)
        guard case let .park(parked) = entry.release(connection) else {
            Issue.record("expected the connection to be parked")
            return
        }
        #expect(parked === connection)
        // Idle, it serves the next lease at once.
        let third = fixture.exchange()
        guard case let .run(running, reused) = entry.lease(third, limit: 1, now: fixture.now) else {
            Issue.record("expected the idle connection to be reused")
            return
        }
        #expect(running === third && reused === connection)
    }

    @Test func aRetriedExchangeGoesFirstAndMayTakeThePlaceOfAnIdleConnection() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        _ = entry.lease(fixture.exchange(), limit: 1, now: fixture.now)
        let idle = fixture.connection()
        _ = entry.connectionOpened(idle, limit: 1, now: fixture.now)
        _ = entry.release(idle)

        let retried = fixture.exchange()
        let action = entry.requeueFirst(retried, limit: 1, now: fixture.now)
        guard case let .close(closed, then) = action else {
            Issue.record("expected the idle connection to make room, got \(action)")
            return
        }
        #expect(closed === idle && then == .open(1))
        #expect(entry.waiters.first === retried)
    }

    // MARK: Multiplexed connections

    @Test func aMultiplexedConnectionTakesWaitersUpToItsStreamLimit() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        let exchanges = (0..<3).map { _ in fixture.exchange() }
        for exchange in exchanges { _ = entry.lease(exchange, limit: 6, now: fixture.now) }
        let connection = fixture.multiplexedConnection()
        _ = entry.connectionOpened(connection, limit: 6, now: fixture.now)
        // All three took streams (100 until SETTINGS say otherwise); the peer now allows 4.
        #expect(entry.waiters.isEmpty)
        let newLimit = entry.streamLimitChanged(of: connection, to: 4)
        #expect(newLimit.isNone)
        guard case .run = entry.lease(fixture.exchange(), limit: 6, now: fixture.now) else {
            Issue.record("expected a fourth stream")
            return
        }
        // The fifth waits for a stream, without opening a connection.
        let fifth = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        #expect(fifth.connects == PoolEntry.Connects.none)
        guard case .run = entry.streamEnded(on: connection) else {
            Issue.record("expected the waiter to take the stream that ended")
            return
        }
    }

    @Test func streamsEndingAboveALoweredLimitAreNotHandedOver() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        for _ in 0..<3 { _ = entry.lease(fixture.exchange(), limit: 6, now: fixture.now) }
        let connection = fixture.multiplexedConnection()
        _ = entry.connectionOpened(connection, limit: 6, now: fixture.now)
        _ = entry.streamLimitChanged(of: connection, to: 1)
        _ = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)

        let firstEnd = entry.streamEnded(on: connection)
        #expect(firstEnd.isNone)
        let secondEnd = entry.streamEnded(on: connection)
        #expect(secondEnd.isNone)
        guard case .run = entry.streamEnded(on: connection) else {
            Issue.record("expected the waiter to run once below the limit")
            return
        }
    }

    @Test func goAwayOpensAReplacementAtOnceAndClosesTheOldConnectionWhenDrained() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        _ = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        let old = fixture.multiplexedConnection()
        _ = entry.connectionOpened(old, limit: 6, now: fixture.now)
        // A second request takes a stream of the old connection, which then goes away.
        _ = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        let goAway = entry.goingAway(old, limit: 6, now: fixture.now)
        #expect(goAway.connects == PoolEntry.Connects.none)

        // Nothing new goes to the old connection: a new request waits for a replacement, at once.
        let waiting = fixture.exchange()
        let afterGoAway = entry.lease(waiting, limit: 6, now: fixture.now)
        #expect(afterGoAway.connects == .open(1))
        #expect(entry.open == 0)

        let firstEnd = entry.streamEnded(on: old)
        #expect(firstEnd.isNone)
        guard case let .close(closed, _) = entry.streamEnded(on: old) else {
            Issue.record("expected the drained connection to close")
            return
        }
        #expect(closed === old)
        let replacement = fixture.multiplexedConnection()
        guard case let .runAll(exchanges, on, _) = entry.connectionOpened(replacement, limit: 6, now: fixture.now) else {
            Issue.record("expected the waiter to run on the replacement")
            return
        }
        #expect(exchanges.first === waiting && on === replacement)
    }

    @Test func goAwayOnAConnectionWithoutStreamsClosesItAtOnce() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        _ = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        let connection = fixture.multiplexedConnection()
        _ = entry.connectionOpened(connection, limit: 6, now: fixture.now)
        let ended = entry.streamEnded(on: connection)
        #expect(ended.isPark)
        guard case let .close(closed, then) = entry.goingAway(connection, limit: 6, now: fixture.now) else {
            Issue.record("expected the connection to close")
            return
        }
        #expect(closed === connection && then == PoolEntry.Connects.none)
        #expect(entry.isUnused(now: fixture.now))
    }

    @Test func anIdleMultiplexedConnectionIsTakenOnlyWithoutLeasedStreams() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        _ = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        let connection = fixture.multiplexedConnection()
        _ = entry.connectionOpened(connection, limit: 6, now: fixture.now)
        let takenWhileLeased = entry.takeIdle(connection)
        #expect(!takenWhileLeased)
        _ = entry.streamEnded(on: connection)
        let takenWhenIdle = entry.takeIdle(connection)
        #expect(takenWhenIdle)
        #expect(entry.open == 0 && entry.multiplexed.isEmpty)
    }

    // MARK: Failed connects

    @Test func aFailedConnectFailsTheWaitersItWasForAndTheNextOneBacksOff() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: true)
        let early = (0..<3).map { _ in fixture.exchange() }
        for exchange in early { _ = entry.lease(exchange, limit: 6, now: fixture.now) }
        let action = entry.connectFailed(limit: 6, now: fixture.now)
        guard case let .fail(failed, then) = action else {
            Issue.record("expected the waiters to fail, got \(action)")
            return
        }
        #expect(failed.count == 3 && zip(failed, early).allSatisfy { $0 === $1 })
        #expect(then == PoolEntry.Connects.none)

        // A request that comes during the backoff waits for its end.
        let late = fixture.exchange()
        let duringBackoff = entry.lease(late, limit: 6, now: fixture.now)
        #expect(duringBackoff.connects == .after(fixture.now + .milliseconds(100)))
        let alsoDuringBackoff = entry.lease(fixture.exchange(), limit: 6, now: fixture.now)
        #expect(alsoDuringBackoff.connects == PoolEntry.Connects.none)
        let afterBackoff = entry.connectsAfterBackoff(limit: 6, now: fixture.now + .milliseconds(100))
        #expect(afterBackoff == .open(1))

        // Another failure: the waiters fail, and the next backoff is twice as long.
        guard case let .fail(failedAgain, _) = entry.connectFailed(limit: 6, now: fixture.now + .milliseconds(150)) else {
            Issue.record("expected the later waiters to fail")
            return
        }
        #expect(failedAgain.count == 2)
        #expect(entry.backoffUntil == fixture.now + .milliseconds(350))
        #expect(!entry.isUnused(now: fixture.now + .milliseconds(200)))
        #expect(entry.isUnused(now: fixture.now + .milliseconds(350)))
    }

    @Test func aFailedConnectLeavesOneWaiterToEachConnectStillUnderWay() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        let exchanges = (0..<10).map { _ in fixture.exchange() }
        for exchange in exchanges { _ = entry.lease(exchange, limit: 3, now: fixture.now) }
        #expect(entry.connecting == 3)
        guard case let .fail(failed, then) = entry.connectFailed(limit: 3, now: fixture.now) else {
            Issue.record("expected the waiters to fail")
            return
        }
        // Two connects are still under way, each for one waiter: the newest two.
        #expect(failed.count == 8 && zip(failed, exchanges).allSatisfy { $0 === $1 })
        #expect(then == PoolEntry.Connects.none)
        #expect(entry.waiters.count == 2)
        guard case let .fail(second, _) = entry.connectFailed(limit: 3, now: fixture.now),
              case let .fail(third, _) = entry.connectFailed(limit: 3, now: fixture.now) else {
            Issue.record("expected the last waiters to fail")
            return
        }
        #expect(second.count == 1 && third.count == 1 && entry.waiters.isEmpty)
    }

    @Test func aFailedConnectLeavesWaitersToAConnectionThatIsOpen() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        _ = entry.lease(fixture.exchange(), limit: 2, now: fixture.now)
        let connection = fixture.connection()
        _ = entry.connectionOpened(connection, limit: 2, now: fixture.now)
        _ = entry.lease(fixture.exchange(), limit: 2, now: fixture.now)
        guard case let .fail(failed, _) = entry.connectFailed(limit: 2, now: fixture.now) else {
            Issue.record("expected a fail action")
            return
        }
        #expect(failed.isEmpty)
        #expect(entry.waiters.count == 1)
    }

    @Test func backoffDoublesFrom100MillisecondsUpTo10Seconds() {
        #expect(PoolEntry.backoff(afterFailures: 1) == .milliseconds(100))
        #expect(PoolEntry.backoff(afterFailures: 2) == .milliseconds(200))
        #expect(PoolEntry.backoff(afterFailures: 4) == .milliseconds(800))
        #expect(PoolEntry.backoff(afterFailures: 8) == .seconds(10))
        #expect(PoolEntry.backoff(afterFailures: 50) == .seconds(10))
    }

    @Test func anEntryWithAConnectionIsNotUnused() {
        var entry = PoolEntry()
        let fixture = Fixture(tls: false)
        #expect(entry.isUnused(now: fixture.now))
        _ = entry.lease(fixture.exchange(), limit: 1, now: fixture.now)
        let connection = fixture.connection()
        _ = entry.connectionOpened(connection, limit: 1, now: fixture.now)
        _ = entry.release(connection)
        #expect(!entry.isUnused(now: fixture.now))
        let taken = entry.takeIdle(connection)
        #expect(taken)
        let closed = entry.connectionClosed(connection, wasCounted: true, limit: 1, now: fixture.now)
        #expect(closed == PoolEntry.Connects.none)
        #expect(entry.isUnused(now: fixture.now))
    }
}

/// Exchanges and stand-in connections for one key.
private struct Fixture {
    let key: ConnectionKey
    let url: URL
    let pool = ConnectionPool(configuration: ConnectionEngine.Configuration())
    let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
    private let ids = IDSource()

    init(tls: Bool) {
        url = URL(string: tls ? "https://example.test/" : "http://example.test/")!
        key = ConnectionKey.make(for: TransportRequest(url: url, method: .get, headerFields: []))!.key
    }

    func exchange() -> EngineExchange {
        EngineExchange(request: TransportRequest(url: url, method: .get, headerFields: []), events: IgnoredEvents(), key: key,
                       shareable: true, pool: pool)
    }

    func connection() -> StandInConnection {
        StandInConnection(id: ids.next(), key: key)
    }

    func multiplexedConnection() -> StandInMultiplexedConnection {
        StandInMultiplexedConnection(id: ids.next(), key: key)
    }
}

private final class IDSource: @unchecked Sendable {
    private var last = 0
    func next() -> Int {
        last += 1
        return last
    }
}

/// An HTTP/1.1 connection as the pool entry sees it: an open channel and an identity.
final class StandInConnection: PooledConnection, @unchecked Sendable {
    let id: Int
    let key: ConnectionKey
    let channel: any Channel
    let isDedicated = false

    init(id: Int, key: ConnectionKey) {
        self.id = id
        self.key = key
        let channel = EmbeddedChannel()
        if let address = try? SocketAddress(ipAddress: "127.0.0.1", port: 9) { _ = channel.connect(to: address) }
        self.channel = channel
    }

    func run(_ exchange: EngineExchange) {}
    func becameIdle() {}
    func cancelRunningExchanges() {}
}

/// A multiplexed connection as the pool entry sees it.
final class StandInMultiplexedConnection: MultiplexedConnection, @unchecked Sendable {
    let id: Int
    let key: ConnectionKey
    let channel: any Channel = EmbeddedChannel()
    let isDedicated = false

    init(id: Int, key: ConnectionKey) {
        self.id = id
        self.key = key
    }

    func run(_ exchange: EngineExchange) {}
    func becameIdle() {}
    func cancelRunningExchanges() {}
}

private final class IgnoredEvents: TransportEvents {
    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {}
    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {}
    func transportDidComplete(_ task: any TransportTask, error: URLError?) {}
}

extension PoolEntry.Action {
    /// The connects the action asks for.
    var connects: PoolEntry.Connects {
        switch self {
        case let .connect(connects), let .runAll(_, _, connects), let .close(_, connects), let .fail(_, connects): connects
        case .none, .run, .park: .none
        }
    }

    var isNone: Bool {
        if case .none = self { true } else { false }
    }

    var isPark: Bool {
        if case .park = self { true } else { false }
    }
}
