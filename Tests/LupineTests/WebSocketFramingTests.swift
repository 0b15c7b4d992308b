import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

@Suite("WebSocket framing rules")
struct WebSocketFramingTests {
    private func summary(_ outcome: WebSocketMessageAssembler.Outcome) -> String {
        switch outcome {
        case let .message(message):
            switch message {
            case let .string(text): "text:\(text)"
            case let .data(data): "binary:\(data.count)"
            @unknown default: "unknown"
            }
        case .incomplete: "incomplete"
        case let .failure(code): "failure:\(code.rawValue)"
        }
    }

    @Test func reassemblesATextMessageFromFragments() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 100)
        let bytes = Array("héllo".utf8)
        // The split falls inside the two-byte é.
        #expect(summary(assembler.receive(.text, isFinal: false, payload: Data(bytes[0..<2]))) == "incomplete")
        #expect(summary(assembler.receive(.continuation, isFinal: false, payload: Data(bytes[2..<4]))) == "incomplete")
        #expect(summary(assembler.receive(.continuation, isFinal: true, payload: Data(bytes[4...]))) == "text:héllo")
        #expect(summary(assembler.receive(.binary, isFinal: true, payload: Data([1, 2, 3]))) == "binary:3")
    }

    @Test func refusesAMessageOverTheLimitAcrossFragments() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 10)
        #expect(summary(assembler.receive(.binary, isFinal: false, payload: Data(count: 6))) == "incomplete")
        #expect(summary(assembler.receive(.continuation, isFinal: true, payload: Data(count: 5))) == "failure:1009")
    }

    @Test func acceptsAMessageOfExactlyTheLimit() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 10)
        #expect(summary(assembler.receive(.binary, isFinal: true, payload: Data(count: 10))) == "binary:10")
    }

    @Test func refusesContinuationsOutOfOrder() {
        var orphan = WebSocketMessageAssembler(maximumMessageSize: 10)
        #expect(summary(orphan.receive(.continuation, isFinal: true, payload: Data())) == "failure:1002")
        var interleaved = WebSocketMessageAssembler(maximumMessageSize: 10)
        _ = interleaved.receive(.text, isFinal: false, payload: Data("a".utf8))
        #expect(summary(interleaved.receive(.binary, isFinal: true, payload: Data())) == "failure:1002")
    }

    @Test func refusesInvalidUTF8InATextMessage() {
        var assembler = WebSocketMessageAssembler(maximumMessageSize: 10)
        #expect(summary(assembler.receive(.text, isFinal: true, payload: Data([0xC3, 0x28]))) == "failure:1007")
    }

    @Test func parsesAndWritesClosePayloads() throws {
        let parsed = try #require(WebSocketClosePayload(parsing: Data([0x03, 0xE9]) + Data("bye".utf8)))
        #expect(parsed.closeCode == .goingAway)
        #expect(parsed.reason == Data("bye".utf8))
        #expect(WebSocketClosePayload(parsing: Data())?.closeCode == .noStatusReceived)
        #expect(WebSocketClosePayload(parsing: Data([0x03])) == nil)
        // Application codes have no CloseCode case in corelibs-foundation.
        let application = try #require(WebSocketClosePayload(parsing: Data([0x0F, 0xA0])))
        #expect(application.rawCode == 4000)
        #expect(application.closeCode == .invalid)
        #expect(WebSocketClosePayload(sending: .normalClosure, reason: nil).bytes == Data([0x03, 0xE8]))
        // Codes reserved for reporting are never sent.
        #expect(WebSocketClosePayload(sending: .abnormalClosure, reason: Data("x".utf8)).bytes.isEmpty)
    }
}
