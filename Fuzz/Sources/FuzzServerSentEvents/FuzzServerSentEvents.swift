import Foundation
import FuzzSupport
import Lupine

/// The `text/event-stream` parser: the events of a stream do not depend on how the body is cut
/// into chunks (a CR LF or a UTF-8 sequence split across two chunks included), and no input
/// crashes it.
@main
enum FuzzServerSentEventsMain {
    static func main() {
        exit(runFuzzer(fuzzServerSentEvents))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerSentEvents(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let cuts = input.chunk()
    let body = input.rest()

    var whole = ServerSentEventParser()
    let expected = whole.parse(Data(body))

    var pieces = ServerSentEventParser()
    var events: [ServerSentEvent] = []
    var position = 0
    for cut in cuts where position < body.count {
        let end = min(body.count, position + Int(cut))
        events += pieces.parse(Data(body[position..<end]))
        position = end
    }
    events += pieces.parse(Data(body[position...]))

    fuzzRequire(events.map(describe) == expected.map(describe), "events depend on chunking: \(expected.map(describe)) vs \(events.map(describe))")
    fuzzRequire(whole.lastEventID == pieces.lastEventID, "last event ID depends on chunking")
    fuzzRequire(whole.reconnectionTime == pieces.reconnectionTime, "retry depends on chunking")
    return 0
}

func describe(_ event: ServerSentEvent) -> String {
    String(describing: event)
}
