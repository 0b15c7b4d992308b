import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// A server that sends bytes before any request (not a response to anything): the exchange the
/// new connection was opened for fails with `badServerResponse` whether the bytes were read before
/// or after it started there; an idle connection that receives them closes unused.
///
/// The order is forced on an `EmbeddedChannel` with the HTTP/1.1 handlers of a connection; the
/// fault matrix's `speaksFirst` cells cover the same over the network, where the order is timing.
@Suite struct ServerSpeaksFirstTests {
    /// Stands for the connection: says whether an exchange is promised to it.
    final class Owner: ExchangeHandlerOwner {
        let promisedToAnExchange: Bool
        private(set) var finishedExchanges = 0

        init(promisedToAnExchange: Bool) {
            self.promisedToAnExchange = promisedToAnExchange
        }

        func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool) {
            finishedExchanges += 1
        }

        func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade, switched: @escaping (Bool) -> Void) {
            switched(false)
        }

        func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool {
            promisedToAnExchange
        }

        func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool {
            false
        }
    }

    /// A connection's HTTP/1.1 handlers and its exchange handler, connected.
    struct Connection {
        let channel = EmbeddedChannel()
        let handler = ExchangeHandler(clock: SystemEngineClock())
        let owner: Owner

        init(promisedToAnExchange: Bool) throws {
            owner = Owner(promisedToAnExchange: promisedToAnExchange)
            handler.owner = owner
            try channel.pipeline.syncOperations.addHandlers([
                HTTPRequestEncoder(),
                ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes)),
                handler,
            ])
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        }

        /// Starts an exchange on the connection; returns what it reports.
        func startExchange(reused: Bool = false) throws -> EngineBodyTests.Recorder {
            let recorder = EngineBodyTests.Recorder()
            let request = TransportRequest(url: URL(string: "http://127.0.0.1:9/get")!, method: .get, headerFields: [])
            let key = try #require(ConnectionKey.make(for: request)).key
            let exchange = EngineExchange(request: request, events: recorder, key: key, shareable: true,
                                          pool: ConnectionPool(configuration: .init()))
            #expect(exchange.beginWaiting())
            handler.start(exchange, reused: reused)
            return recorder
        }
    }

    static let garbage = ByteBuffer(bytes: [0x00, 0x01, 0x02, 0xFF, 0xFE] + Array("garbage\r\n\r\n".utf8))
    static let unsolicitedResponse = ByteBuffer(string: "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n")

    @Test(arguments: [garbage, unsolicitedResponse])
    func bytesReadBeforeTheFirstExchangeStartsFailItAsABadServerResponse(_ bytes: ByteBuffer) throws {
        let connection = try Connection(promisedToAnExchange: true)
        try connection.channel.writeInbound(bytes)
        let recorder = try connection.startExchange()

        #expect(recorder.isComplete)
        #expect(recorder.error?.code == .badServerResponse)
        #expect(!connection.channel.isActive)
        #expect(connection.owner.finishedExchanges == 0)
    }

    /// The server spoke first, then closed: the bytes it sent are still the fault.
    @Test func bytesThenCloseBeforeTheFirstExchangeFailItAsABadServerResponse() throws {
        let connection = try Connection(promisedToAnExchange: true)
        try connection.channel.writeInbound(Self.garbage)
        connection.channel.pipeline.fireChannelInactive()
        let recorder = try connection.startExchange()

        #expect(recorder.error?.code == .badServerResponse)
    }

    @Test func bytesReadRightAfterTheFirstExchangeStartedFailItAsABadServerResponse() throws {
        let connection = try Connection(promisedToAnExchange: true)
        let recorder = try connection.startExchange()
        try connection.channel.writeInbound(Self.garbage)

        #expect(recorder.error?.code == .badServerResponse)
    }

    /// SwiftNIO's decoder reports a response that answers no request with an error of its own.
    @Test func responseToNoRequestMapsToBadServerResponse() {
        #expect(EngineErrors.code(for: NIOHTTPDecoderError.unsolicitedResponse) == .badServerResponse)
    }

    @Test func idleNewConnectionThatReceivesBytesClosesUnused() throws {
        let connection = try Connection(promisedToAnExchange: false)
        try connection.channel.writeInbound(Self.garbage)

        #expect(!connection.channel.isActive)
        #expect(!connection.handler.serverSpokeFirst)
    }

    @Test func reusedConnectionThatReceivesBytesWhileIdleCloses() throws {
        let connection = try Connection(promisedToAnExchange: true)
        let first = try connection.startExchange()
        try connection.channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        #expect(first.error == nil && first.isComplete)
        #expect(connection.channel.isActive)

        try connection.channel.writeInbound(Self.unsolicitedResponse)
        #expect(!connection.channel.isActive)
        #expect(!connection.handler.serverSpokeFirst)
    }
}
