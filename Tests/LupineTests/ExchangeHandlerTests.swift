import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The exchange handler on an `EmbeddedChannel` with the HTTP/1.1 handlers of a connection: what
/// the server sends arrives in the order the test gives, and time is the embedded loop's.
@Suite struct ExchangeHandlerTests {
    /// Stands for the connection: records how exchanges finished and protocol switches, which
    /// it completes at once.
    final class Owner: ExchangeHandlerOwner {
        private(set) var finished: [Bool] = []
        private(set) var switches = 0

        func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool) {
            finished.append(reusable)
        }

        func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade, switched: @escaping (Bool) -> Void) {
            switches += 1
            switched(true)
        }

        func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool { false }

        func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool { false }
    }

    /// Counts the socket reads that get past the exchange handler.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        private(set) var reads = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// An upgrade to a made-up protocol; it accepts a 101 unless told why not.
    final class TestUpgrade: ProtocolUpgrade, @unchecked Sendable {
        // Touched on the embedded loop's thread only.
        let rejection: String?
        private(set) var switchedHeads: [HTTPResponseStatus] = []

        init(rejection: String? = nil) {
            self.rejection = rejection
        }

        func prepare(_ headers: inout NIOHTTP1.HTTPHeaders) {
            headers.replaceOrAdd(name: "Upgrade", value: "test")
            headers.replaceOrAdd(name: "Connection", value: "upgrade")
        }

        func rejection(of head: HTTPResponseHead) -> String? { rejection }

        func install(on channel: any Channel) throws {}

        func didSwitch(head: HTTPResponseHead) {
            switchedHeads.append(head.status)
        }

        func engineWillClose() {}
    }

    /// A test loop's time: an embedded loop's, or that of a testing loop with a thread of its own.
    struct LoopClock: EngineClock {
        private let readNow: @Sendable () -> NIODeadline
        var now: NIODeadline { readNow() }

        init(loop: EmbeddedEventLoop) { readNow = { loop.now } }
        init(loop: NIOAsyncTestingEventLoop) { readNow = { loop.now } }

        func schedule(on eventLoop: any EventLoop, at deadline: NIODeadline, _ task: @escaping @Sendable () -> Void) -> Scheduled<Void> {
            eventLoop.scheduleTask(deadline: deadline, task)
        }
    }

    /// A connection's HTTP/1.1 handlers and its exchange handler, connected.
    struct Connection {
        let channel = EmbeddedChannel()
        let handler: ExchangeHandler
        let owner = Owner()
        let readCounter = ReadCounter()

        init() throws {
            handler = ExchangeHandler(clock: LoopClock(loop: channel.embeddedEventLoop))
            handler.owner = owner
            try channel.pipeline.syncOperations.addHandlers([
                readCounter,
                HTTPRequestEncoder(),
                ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)),
                handler,
            ])
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        /// Starts an exchange; returns it and what it reports.
        func start(_ method: Lupine.HTTPMethod = .get, headerFields: [HTTPHeader] = [], body: Data? = nil,
                   idleTimeout: TimeInterval = 60, upgrade: TestUpgrade? = nil) throws -> (EngineExchange, EngineBodyTests.Recorder) {
            let recorder = EngineBodyTests.Recorder()
            let request = TransportRequest(url: URL(string: "http://127.0.0.1:9/anything")!, method: method, headerFields: headerFields,
                                           body: body.map { .data($0) }, idleTimeout: idleTimeout)
            let key = try #require(ConnectionKey.make(for: request)).key
            let exchange = EngineExchange(request: request, events: recorder, key: key, shareable: true,
                                          pool: ConnectionPool(configuration: .init()), upgrade: upgrade)
            #expect(exchange.beginWaiting())
            handler.start(exchange, reused: handler.startedExchanges > 0)
            channel.embeddedEventLoop.run()
            return (exchange, recorder)
        }

        /// The bytes written to the server since the last call.
        func sent() -> String {
            var text = ""
            while let buffer = try? channel.readOutbound(as: ByteBuffer.self) {
                text += String(buffer: buffer)
            }
            return text
        }

        func receive(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
            channel.embeddedEventLoop.run()
        }
    }

    @Test func requestWithABodyIsSentWholeAndReportedSent() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start(.post, body: Data("body".utf8))

        let sent = connection.sent()
        #expect(sent.hasPrefix("POST /anything HTTP/1.1\r\n"))
        #expect(sent.lowercased().contains("content-length: 4\r\n"))
        #expect(sent.hasSuffix("\r\n\r\nbody"))
        #expect(recorder.bytesSent == 4)
    }

    @Test func bodyThatContradictsItsContentLengthIsNotSent() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start(.post, headerFields: [HTTPHeader(name: "Content-Length", value: "5")],
                                                 body: Data("body".utf8))

        #expect(recorder.isComplete)
        #expect(recorder.error != nil)
        #expect(!connection.sent().contains("body"))
        #expect(!connection.channel.isActive)
    }

    @Test func wholeResponseLeavesTheConnectionReusableForTheNextExchange() throws {
        let connection = try Connection()
        let (_, first) = try connection.start()
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(first.isComplete && first.error == nil)
        #expect(first.received == Data("ok".utf8))
        #expect(connection.owner.finished == [true])

        let (_, second) = try connection.start()
        try connection.receive("HTTP/1.1 204 No Content\r\n\r\n")
        #expect(second.statusCode == 204 && second.error == nil)
        #expect(connection.owner.finished == [true, true])
        #expect(connection.channel.isActive)
    }

    @Test func interimResponseIsSkippedForTheFinalOne() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start()
        try connection.receive("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
        #expect(recorder.statusCode == nil)
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

        #expect(recorder.statusCode == 200)
        #expect(recorder.received == Data("ok".utf8))
        #expect(connection.owner.finished == [true])
    }

    /// Bytes the server sent past the response, in the same read, are not the next response.
    @Test func bytesPastTheEndOfTheResponseCloseTheConnection() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start()
        try? connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

        #expect(recorder.isComplete && recorder.error == nil)
        #expect(recorder.received == Data("ok".utf8))
        #expect(connection.owner.finished == [false])
        #expect(!connection.channel.isActive)
    }

    @Test func pausedConsumerGetsNothingUntilItResumesThenEverythingInOrder() throws {
        let connection = try Connection()
        let (exchange, recorder) = try connection.start()
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab")
        #expect(recorder.received == Data("ab".utf8))

        exchange.pauseReading()
        try connection.receive("cd")
        try connection.receive("ef")
        #expect(recorder.received == Data("ab".utf8))
        #expect(!recorder.isComplete)

        exchange.resumeReading()
        connection.channel.embeddedEventLoop.run()
        #expect(recorder.received == Data("abcdef".utf8))
        #expect(recorder.isComplete && recorder.error == nil)
        #expect(connection.owner.finished == [true])
    }

    /// Backpressure reaches the server: no socket read while the consumer has paused.
    @Test func pausedConsumerHoldsSocketReadsBackUntilItResumes() throws {
        let connection = try Connection()
        let (exchange, _) = try connection.start()
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab")
        let readsBefore = connection.readCounter.reads
        exchange.pauseReading()
        connection.channel.read()
        #expect(connection.readCounter.reads == readsBefore)

        exchange.resumeReading()
        connection.channel.embeddedEventLoop.run()
        #expect(connection.readCounter.reads == readsBefore + 1)
    }

    /// The server closed after a whole response the consumer had not taken yet: it is delivered
    /// on resume, and the connection is not offered again.
    @Test func wholeResponseHeldWhenTheConnectionEndsIsDeliveredOnResume() throws {
        let connection = try Connection()
        let (exchange, recorder) = try connection.start()
        exchange.pauseReading()
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        connection.channel.pipeline.fireChannelInactive()
        #expect(!recorder.isComplete)

        exchange.resumeReading()
        connection.channel.embeddedEventLoop.run()
        #expect(recorder.received == Data("ok".utf8))
        #expect(recorder.isComplete && recorder.error == nil)
        #expect(connection.owner.finished == [false])
    }

    @Test func connectionEndingMidResponseFailsTheExchange() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start()
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab")
        connection.channel.pipeline.fireChannelInactive()

        #expect(recorder.error?.code == .networkConnectionLost)
        #expect(connection.owner.finished.isEmpty)
    }

    @Test func quietServerTimesOutOnTheIdleGap() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start(idleTimeout: 2)
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab")
        connection.channel.embeddedEventLoop.advanceTime(by: .milliseconds(1500))
        #expect(!recorder.isComplete)

        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(recorder.error?.code == .timedOut)
        #expect(!connection.channel.isActive)
    }

    @Test func pausedConsumerDoesNotTimeOut() throws {
        let connection = try Connection()
        let (exchange, recorder) = try connection.start(idleTimeout: 2)
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nab")
        exchange.pauseReading()
        connection.channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(!recorder.isComplete)

        exchange.resumeReading()
        try connection.receive("cdef")
        #expect(recorder.isComplete && recorder.error == nil)
    }

    @Test func cancelWhileAwaitingTheHeadClosesTheConnection() throws {
        let connection = try Connection()
        let (exchange, recorder) = try connection.start()
        exchange.cancel()
        connection.channel.embeddedEventLoop.run()

        #expect(recorder.error?.code == .cancelled)
        #expect(!connection.channel.isActive)
        #expect(connection.owner.finished.isEmpty)
    }

    @Test func requestAskingToCloseIsNotFollowedOnItsConnection() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start(headerFields: [HTTPHeader(name: "Connection", value: "close")])
        try connection.receive("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")

        #expect(recorder.isComplete && recorder.error == nil)
        #expect(connection.owner.finished == [false])
        #expect(!connection.channel.isActive)
    }

    @Test func bodyThatCannotBeDecodedFailsAndClosesTheConnection() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start()
        try? connection.receive("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope")

        #expect(recorder.error?.code == .cannotDecodeContentData)
        #expect(!connection.channel.isActive)
    }

    /// The exchange ends in the new protocol: the 101 is reported once the connection has
    /// switched, and the exchange completes when the upgrade says so, not here.
    @Test func acceptedUpgradeSwitchesTheConnection() throws {
        let connection = try Connection()
        let upgrade = TestUpgrade()
        let (_, recorder) = try connection.start(upgrade: upgrade)
        let sent = connection.sent().lowercased()
        #expect(sent.contains("upgrade: test\r\n"))
        try connection.receive("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: upgrade\r\n\r\n")

        #expect(connection.owner.switches == 1)
        #expect(upgrade.switchedHeads == [.switchingProtocols])
        #expect(recorder.statusCode == 101)
        #expect(!recorder.isComplete)
        #expect(connection.handler.exchange == nil)
        #expect(connection.owner.finished.isEmpty)
    }

    @Test func rejectedUpgradeFailsAsABadServerResponse() throws {
        let connection = try Connection()
        let upgrade = TestUpgrade(rejection: "the server did not accept the key")
        let (_, recorder) = try connection.start(upgrade: upgrade)
        try connection.receive("HTTP/1.1 101 Switching Protocols\r\nUpgrade: test\r\nConnection: upgrade\r\n\r\n")

        #expect(recorder.statusCode == 101)
        #expect(recorder.error?.code == .badServerResponse)
        #expect(connection.owner.switches == 0)
        #expect(upgrade.switchedHeads.isEmpty)
        #expect(!connection.channel.isActive)
    }

    @Test func upgradeAnsweredWithAnOrdinaryResponseEndsLikeAnyExchange() throws {
        let connection = try Connection()
        let (_, recorder) = try connection.start(upgrade: TestUpgrade())
        try connection.receive("HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno")

        #expect(recorder.statusCode == 403 && recorder.error == nil)
        #expect(recorder.received == Data("no".utf8))
        #expect(connection.owner.switches == 0)
        #expect(connection.owner.finished == [true])
    }
}
