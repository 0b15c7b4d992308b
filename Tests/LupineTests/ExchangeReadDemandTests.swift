import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

/// An exchange's read demand: `pauseReading()` and `resumeReading()` record the state asked for
/// and reach the handler's paused flag on its event loop, at once from there, with one hop from
/// elsewhere, whatever order those hops run in.
@Suite struct ExchangeReadDemandTests {
    /// Records the body parts as they arrive and lets the test act from inside each delivery.
    final class Consumer: TransportEvents, @unchecked Sendable {
        private let lock = NSLock()
        private var parts: [String] = []
        private var headArrived = false
        private var completion: URLError??
        /// Called on the event loop with each part, and how many came before it.
        var onBodyPart: (@Sendable (_ task: any TransportTask, _ index: Int) -> Void)?

        var received: [String] { lock.withLock { parts } }
        var hasHead: Bool { lock.withLock { headArrived } }
        var isComplete: Bool { lock.withLock { completion != nil } }
        var error: URLError? { lock.withLock { completion ?? nil } }

        func transportDidSendBodyBytes(_ task: any TransportTask, totalBytesSent: Int64, totalBytesExpectedToSend: Int64?) {}

        func transportDidSendRequest(_ task: any TransportTask) {}

        func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
            lock.withLock { headArrived = true }
        }

        func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
            let index = lock.withLock {
                parts.append(String(decoding: bodyPart, as: UTF8.self))
                return parts.count - 1
            }
            onBodyPart?(task, index)
        }

        func transportDidComplete(_ task: any TransportTask, error: URLError?) {
            lock.withLock { completion = .some(error) }
        }
    }

    /// A response whose body comes as three parts, "ab", "cd" and "ef", in one read.
    static let chunkedResponse = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n2\r\ncd\r\n2\r\nef\r\n0\r\n\r\n"

    /// An exchange for `events`, waiting for a handler as in its pool.
    static func waitingExchange(_ events: any TransportEvents) throws -> EngineExchange {
        let request = TransportRequest(url: URL(string: "http://127.0.0.1:9/anything")!, method: .get, headerFields: [], body: nil,
                                       idleTimeout: 60)
        let key = try #require(ConnectionKey.make(for: request)).key
        let exchange = EngineExchange(request: request, events: events, key: key, shareable: true,
                                      pool: ConnectionPool(configuration: .init()))
        #expect(exchange.beginWaiting())
        return exchange
    }

    /// Starts `consumer`'s exchange on `connection` (an `EmbeddedChannel`: every call is on its loop).
    static func start(_ consumer: Consumer, on connection: ExchangeHandlerTests.Connection,
                      pausedFirst: Bool = false) throws -> EngineExchange {
        let exchange = try waitingExchange(consumer)
        if pausedFirst { exchange.pauseReading() }
        connection.handler.start(exchange, reused: false)
        connection.channel.embeddedEventLoop.run()
        return exchange
    }

    // MARK: On the event loop: at once

    @Test func pauseFromADeliveryHoldsTheRestOfTheSameRead() throws {
        let connection = try ExchangeHandlerTests.Connection()
        let consumer = Consumer()
        consumer.onBodyPart = { task, index in if index == 0 { task.pauseReading() } }
        let exchange = try Self.start(consumer, on: connection)
        try connection.receive(Self.chunkedResponse)
        #expect(consumer.received == ["ab"])
        #expect(!consumer.isComplete)
        let reads = connection.readCounter.reads
        connection.channel.read()
        #expect(connection.readCounter.reads == reads)

        // On the loop the resume applies at once: no task to run.
        consumer.onBodyPart = nil
        exchange.resumeReading()
        #expect(consumer.received == ["ab", "cd", "ef"])
        #expect(consumer.isComplete && consumer.error == nil)
        #expect(connection.owner.finished == [true])
    }

    @Test func pauseAndResumeFromOneDeliveryChangeNothing() throws {
        let connection = try ExchangeHandlerTests.Connection()
        let consumer = Consumer()
        consumer.onBodyPart = { task, index in
            if index == 0 {
                task.pauseReading()
                task.resumeReading()
            }
        }
        _ = try Self.start(consumer, on: connection)
        try connection.receive(Self.chunkedResponse)
        #expect(consumer.received == ["ab", "cd", "ef"])
        #expect(consumer.isComplete && consumer.error == nil)
    }

    /// Held parts delivered on resume obey a pause asked for by one of them, and a pause and
    /// resume inside one of them leave the delivery going, in order.
    @Test func deliveryOfHeldPartsObeysAPauseFromOneOfThem() throws {
        let connection = try ExchangeHandlerTests.Connection()
        let consumer = Consumer()
        let exchange = try Self.start(consumer, on: connection, pausedFirst: true)
        try connection.receive(Self.chunkedResponse)
        #expect(!consumer.hasHead)
        consumer.onBodyPart = { task, index in
            switch index {
            case 0:
                task.pauseReading()
                task.resumeReading()
            case 1:
                task.pauseReading()
            default:
                break
            }
        }
        exchange.resumeReading()
        #expect(consumer.received == ["ab", "cd"])
        #expect(!consumer.isComplete)

        exchange.resumeReading()
        #expect(consumer.received == ["ab", "cd", "ef"])
        #expect(consumer.isComplete && consumer.error == nil)
    }

    // MARK: Before the handler

    @Test func pauseWhileWaitingInThePoolIsAppliedWhenTheExchangeStarts() throws {
        let connection = try ExchangeHandlerTests.Connection()
        let consumer = Consumer()
        let exchange = try Self.start(consumer, on: connection, pausedFirst: true)
        let reads = connection.readCounter.reads
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        connection.channel.read()
        #expect(!consumer.hasHead)
        #expect(connection.readCounter.reads == reads)

        exchange.resumeReading()
        #expect(consumer.received == ["ok"])
        #expect(consumer.isComplete && consumer.error == nil)
    }

    @Test func pauseStaysAcrossARetry() throws {
        let first = try ExchangeHandlerTests.Connection()
        let consumer = Consumer()
        let exchange = try Self.start(consumer, on: first)
        exchange.pauseReading()
        #expect(exchange.prepareRetry())
        #expect(exchange.wantsReadingPaused)

        let second = try ExchangeHandlerTests.Connection()
        second.handler.start(exchange, reused: false)
        second.channel.embeddedEventLoop.run()
        try second.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(!consumer.hasHead)

        exchange.resumeReading()
        #expect(consumer.received == ["ok"])
        #expect(consumer.isComplete && consumer.error == nil)
    }

    /// Only the last call counts, however many came while the exchange waited.
    @Test func waitingExchangeRecordsTheLastCallOnly() throws {
        let exchange = try Self.waitingExchange(Consumer())
        #expect(!exchange.wantsReadingPaused)
        exchange.pauseReading()
        exchange.resumeReading()
        exchange.pauseReading()
        #expect(exchange.wantsReadingPaused)
        exchange.resumeReading()
        #expect(!exchange.wantsReadingPaused)
    }

    // MARK: Off the event loop: one hop

    /// Counts the tasks handed to an embedded loop, and says whether the caller is on it as the
    /// test decides.
    final class HopCountingLoop: EventLoop, @unchecked Sendable {
        let base: EmbeddedEventLoop
        let isOnLoop = Atomic<Bool>(true)
        let hops = Atomic<Int>(0)

        init(base: EmbeddedEventLoop) {
            self.base = base
        }

        var inEventLoop: Bool { isOnLoop.load(ordering: .relaxed) }

        func execute(_ task: @escaping @Sendable () -> Void) {
            hops.add(1, ordering: .relaxed)
            base.execute(task)
        }

        func scheduleTask<T>(deadline: NIODeadline, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
            base.scheduleTask(deadline: deadline, task)
        }

        func scheduleTask<T>(in delay: TimeAmount, _ task: @escaping @Sendable () throws -> T) -> Scheduled<T> {
            base.scheduleTask(in: delay, task)
        }

        func preconditionInEventLoop(file: StaticString, line: UInt) {
            precondition(inEventLoop, file: file, line: line)
        }

        func preconditionNotInEventLoop(file: StaticString, line: UInt) {
            precondition(!inEventLoop, file: file, line: line)
        }

        func shutdownGracefully(queue: DispatchQueue, _ callback: @escaping @Sendable ((any Error)?) -> Void) {
            base.shutdownGracefully(queue: queue, callback)
        }
    }

    @Test func eachCallFromAnotherThreadHopsOnceAndOnTheLoopNone() throws {
        let loop = HopCountingLoop(base: EmbeddedEventLoop())
        let exchange = try Self.waitingExchange(Consumer())
        let handler = ExchangeHandler(clock: ExchangeHandlerTests.LoopClock(loop: loop.base))
        exchange.pauseReading()
        #expect(loop.hops.load(ordering: .relaxed) == 0)
        #expect(exchange.attach(to: NIOLoopBound(handler, eventLoop: loop)) == true)

        loop.isOnLoop.store(false, ordering: .relaxed)
        exchange.resumeReading()
        #expect(loop.hops.load(ordering: .relaxed) == 1)
        exchange.pauseReading()
        exchange.resumeReading()
        #expect(loop.hops.load(ordering: .relaxed) == 3)

        loop.isOnLoop.store(true, ordering: .relaxed)
        exchange.pauseReading()
        exchange.resumeReading()
        #expect(loop.hops.load(ordering: .relaxed) == 3)
        loop.base.run()
        #expect(loop.hops.load(ordering: .relaxed) == 3)
    }

    /// Once the connection switched protocols the handler runs no exchange: a WebSocket
    /// connection's calls passed on to its handshake's exchange make no hop, nor does a cancel.
    @Test func callsAfterTheSwitchMakeNoHop() throws {
        let loop = HopCountingLoop(base: EmbeddedEventLoop())
        let exchange = try Self.waitingExchange(Consumer())
        let handler = ExchangeHandler(clock: ExchangeHandlerTests.LoopClock(loop: loop.base))
        #expect(exchange.attach(to: NIOLoopBound(handler, eventLoop: loop)) == false)
        exchange.handOver()

        loop.isOnLoop.store(false, ordering: .relaxed)
        exchange.pauseReading()
        exchange.resumeReading()
        exchange.cancel()
        #expect(loop.hops.load(ordering: .relaxed) == 0)
        #expect(!exchange.prepareRetry())
        loop.isOnLoop.store(true, ordering: .relaxed)
    }

    @Test func switchingProtocolsHandsTheExchangeOver() throws {
        let connection = try ExchangeHandlerTests.Connection()
        let (exchange, recorder) = try connection.start(upgrade: ExchangeHandlerTests.TestUpgrade())
        try connection.receive("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: upgrade\r\n\r\n")
        #expect(recorder.statusCode == 101)
        // Running, it could go back to its pool; handed over, it cannot.
        #expect(!exchange.prepareRetry())
    }

    // MARK: Off the event loop, on a loop of its own thread

    /// A connection's HTTP/1.1 handlers and its exchange handler on a loop with a thread of its
    /// own, so that the test's calls come from another thread, as a consumer's do.
    struct ThreadedConnection {
        let channel: NIOAsyncTestingChannel
        let loop: NIOAsyncTestingEventLoop
        let handler: NIOLoopBound<ExchangeHandler>

        init() async throws {
            let loop = NIOAsyncTestingEventLoop()
            let channel = NIOAsyncTestingChannel(loop: loop)
            handler = try await loop.executeInContext {
                let handler = ExchangeHandler(clock: ExchangeHandlerTests.LoopClock(loop: loop))
                try channel.pipeline.syncOperations.addHandlers([
                    HTTPRequestEncoder(),
                    ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)),
                    handler,
                ])
                return NIOLoopBound(handler, eventLoop: loop)
            }
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
            self.channel = channel
            self.loop = loop
        }

        func start(_ exchange: EngineExchange) async throws {
            let handler = handler
            try await loop.executeInContext { handler.value.start(exchange, reused: false) }
            await loop.run()
        }

        /// The server's bytes, read on the loop after every task queued before.
        func receive(_ text: String) async throws {
            await loop.run()
            try await channel.writeInbound(ByteBuffer(string: text))
        }

        func close() async throws {
            _ = try? await channel.finish()
            await loop.shutdownGracefully()
        }
    }

    @Test func pauseFromAnotherThreadTakesEffectWithItsHop() async throws {
        let connection = try await ThreadedConnection()
        let consumer = Consumer()
        let exchange = try Self.waitingExchange(consumer)
        try await connection.start(exchange)
        try await connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab")
        #expect(consumer.received == ["ab"])

        exchange.pauseReading()
        try await connection.receive("cd")
        #expect(consumer.received == ["ab"])

        exchange.resumeReading()
        try await connection.receive("ef")
        #expect(consumer.received == ["ab", "cd", "ef"])
        #expect(consumer.isComplete && consumer.error == nil)
        try await connection.close()
    }

    /// A pause from another thread whose hop runs after a resume made on the loop since: the
    /// hop applies the state asked for last, running.
    @Test func resumeOnTheLoopOvertakingAPauseHopLeavesTheExchangeRunning() async throws {
        let connection = try await ThreadedConnection()
        let consumer = Consumer()
        let exchange = try Self.waitingExchange(consumer)
        try await connection.start(exchange)
        try await connection.loop.executeInContext {
            // The pause's hop queues behind this task; the resume applies at once.
            Self.callFromAnotherThread { exchange.pauseReading() }
            exchange.resumeReading()
        }
        try await connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(consumer.received == ["ok"])
        #expect(consumer.isComplete && consumer.error == nil)
        try await connection.close()
    }

    /// A resume from another thread whose hop runs after a pause made on the loop since: the
    /// exchange stays paused until the next resume.
    @Test func pauseOnTheLoopOvertakingAResumeHopLeavesTheExchangePaused() async throws {
        let connection = try await ThreadedConnection()
        let consumer = Consumer()
        let exchange = try Self.waitingExchange(consumer)
        exchange.pauseReading()
        try await connection.start(exchange)
        try await connection.loop.executeInContext {
            Self.callFromAnotherThread { exchange.resumeReading() }
            exchange.pauseReading()
        }
        try await connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(!consumer.hasHead)

        exchange.resumeReading()
        await connection.loop.run()
        try await connection.loop.executeInContext {}
        #expect(consumer.received == ["ok"])
        #expect(consumer.isComplete && consumer.error == nil)
        try await connection.close()
    }

    /// Runs `call` on another thread and waits for it to return.
    static func callFromAnotherThread(_ call: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        Thread {
            call()
            done.signal()
        }.start()
        done.wait()
    }
}
