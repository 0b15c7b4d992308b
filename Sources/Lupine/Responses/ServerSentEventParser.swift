import Foundation

/// Parses a `text/event-stream` body fed in arbitrary chunks, following the WHATWG rules
/// (HTML section 9.2.6, "Interpreting an event stream"):
///
/// - the stream is UTF-8 (invalid sequences become U+FFFD); one leading byte order mark is skipped;
/// - lines end with CR LF, LF or CR (a CR LF split across two chunks counts once);
/// - a line starting with ":" is a comment; otherwise the field name runs to the first ":" and
///   one space after it is dropped from the value; a line without ":" is a field with an empty value;
/// - `data` appends its value and a newline to the data buffer; `event` sets the type; `id` sets
///   the last event ID unless the value contains U+0000; `retry` sets the reconnection time when
///   the value is ASCII digits only; other fields are ignored;
/// - an empty line dispatches the event, unless the data buffer is empty (the type is then reset);
/// - an event not ended by an empty line when the stream ends is discarded.
///
/// A pure value: it performs no I/O, so each rule is tested on its own.
public struct ServerSentEventParser: Sendable {
    private var pendingLine: [UInt8] = []
    private var skipsLineFeed = false
    private var isAtStreamStart = true
    private var dataBuffer = ""
    private var hasData = false
    private var eventType = ""
    /// The last event ID set by the stream (nil until an `id` field is seen).
    public private(set) var lastEventID: String?
    /// The reconnection time in milliseconds set by the stream, if any.
    public private(set) var reconnectionTime: Int?

    /// Creates a parser at the start of a stream.
    public init() {}

    /// Takes the next chunk of the body; returns the events it completes, in order.
    public mutating func parse(_ chunk: Data) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in chunk {
            if skipsLineFeed {
                skipsLineFeed = false
                if byte == UInt8(ascii: "\n") { continue }
            }
            switch byte {
            case UInt8(ascii: "\r"):
                skipsLineFeed = true
                endLine(into: &events)
            case UInt8(ascii: "\n"):
                endLine(into: &events)
            default:
                pendingLine.append(byte)
            }
        }
        return events
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        var bytes = pendingLine[...]
        pendingLine.removeAll(keepingCapacity: true)
        if isAtStreamStart {
            isAtStreamStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        let line = String(decoding: bytes, as: UTF8.self)
        if line.isEmpty {
            dispatch(into: &events)
            return
        }
        if line.hasPrefix(":") { return }
        let field: Substring
        var value: Substring
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = line[...]
            value = ""
        }
        process(field: field, value: value)
    }

    private mutating func process(field: Substring, value: Substring) {
        switch field {
        case "event":
            eventType = String(value)
        case "data":
            dataBuffer += value
            dataBuffer += "\n"
            hasData = true
        case "id":
            if !value.contains("\u{0}") { lastEventID = String(value) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0.isASCII && $0.isNumber }), let milliseconds = Int(value) {
                reconnectionTime = milliseconds
            }
        default:
            break
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            dataBuffer = ""
            hasData = false
            eventType = ""
        }
        guard hasData else { return }
        var data = dataBuffer
        if data.hasSuffix("\n") { data.removeLast() }
        events.append(ServerSentEvent(id: lastEventID, event: eventType.isEmpty ? "message" : eventType,
                                      data: data, retry: reconnectionTime))
    }
}
