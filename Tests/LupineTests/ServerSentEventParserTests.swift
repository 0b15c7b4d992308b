import Foundation
import Lupine
import Testing

@Suite("ServerSentEventParser")
struct ServerSentEventParserTests {
    private func parse(_ chunks: [String]) -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        return chunks.flatMap { parser.parse(Data($0.utf8)) }
    }

    @Test func joinsDataLinesAndKeepsIdAndType() {
        let events = parse(["id: 7\nevent: tick\ndata: first\ndata: second\n\n"])
        #expect(events == [ServerSentEvent(id: "7", event: "tick", data: "first\nsecond")])
    }

    @Test func acceptsEveryLineEndingEvenSplitAcrossChunks() {
        let events = parse(["data: a\r", "\ndata: b\rdata: c\n\r", "\n", "data: d\n\n"])
        #expect(events.map(\.data) == ["a\nb\nc", "d"])
    }

    @Test func reassemblesEventsSplitAnywhereIncludingInsideACharacter() {
        let bytes = Array("data: héllo\n\n".utf8)
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        for byte in bytes { events += parser.parse(Data([byte])) }
        #expect(events.map(\.data) == ["héllo"])
    }

    @Test func ignoresCommentsUnknownFieldsAndEmptyEvents() {
        let events = parse([": comment\nfoo: bar\n\nevent: lonely\n\ndata\n\n"])
        // "data" without a colon is a data field with an empty value; the lonely type was reset.
        #expect(events == [ServerSentEvent(event: "message", data: "")])
    }

    @Test func dropsOneLeadingSpaceOnlyAndOneByteOrderMark() {
        let events = parse(["\u{FEFF}data:  two spaces\n\ndata:none\n\n"])
        #expect(events.map(\.data) == [" two spaces", "none"])
    }

    @Test func theLastEventIDCarriesOverAndAnEmptyIdResetsIt() {
        let events = parse(["id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: x\u{0}y\ndata: d\n\n"])
        #expect(events.map(\.id) == ["1", "1", "", ""])
    }

    @Test func retryAcceptsDigitsOnly() {
        var parser = ServerSentEventParser()
        _ = parser.parse(Data("retry: 1500\n\nretry: 2s\n\nretry: -1\n\n".utf8))
        #expect(parser.reconnectionTime == 1500)
        #expect(parser.parse(Data("data: x\n\n".utf8)).first?.retry == 1500)
    }

    @Test func discardsAnUnfinishedEvent() {
        var parser = ServerSentEventParser()
        #expect(parser.parse(Data("data: complete\n\ndata: unfinished\n".utf8)).map(\.data) == ["complete"])
    }
}
