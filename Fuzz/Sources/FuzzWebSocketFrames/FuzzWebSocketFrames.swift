import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine
import NIOCore
import NIOEmbedded
import NIOWebSocket

/// WebSocket frame parsing and message assembly, as an open connection runs them: the bytes a
/// server sends after the 101 go through SwiftNIO's frame decoder and Lupine's frame handler in an
/// `EmbeddedChannel`.
///
/// - Raw bytes: no input crashes; no message is over the size limit; every frame Lupine writes is
///   masked; the exchange completes exactly once when the connection ends; nothing is delivered
///   after the connection failed; the outcome does not depend on how the bytes are cut into reads.
/// - Valid frame sequences (messages split into fragments, pings and pongs between them): exactly
///   the messages sent arrive, in order, until one is over the limit, which fails with 1009.
@main
enum FuzzWebSocketFramesMain {
    static func main() {
        exit(runFuzzer(fuzzWebSocketFrames))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limits = [0, 1, 7, 125, 126, 300, 65_536, 1 << 20]
    let limit = limits[Int(input.byte()) % limits.count]
    if input.bool() {
        checkRawBytes(&input, limit: limit)
    } else {
        checkValidSequence(&input, limit: limit)
    }
    return 0
}

// MARK: Raw bytes

func checkRawBytes(_ input: inout FuzzInput, limit: Int) {
    let cuts = input.chunk()
    let bytes = input.rest()
    let whole = WebSocketHarness(limit: limit)
    whole.feed(bytes, cuts: [])
    whole.end()
    let pieces = WebSocketHarness(limit: limit)
    pieces.feed(bytes, cuts: cuts)
    pieces.end()
    for harness in [whole, pieces] {
        fuzzRequire(harness.recorder.completions == 1, "\(harness.recorder.completions) completions")
        fuzzRequire(harness.recorder.messages.allSatisfy { $0.count <= limit }, "a message over the limit \(limit)")
    }
    fuzzRequire(whole.recorder.log == pieces.recorder.log,
                "outcome depends on the cuts \(cuts): \(whole.recorder.log) vs \(pieces.recorder.log)")
}

// MARK: Valid sequences

/// One message as the server sends it.
struct SentMessage {
    var isText: Bool
    var payload: [UInt8]
    /// Where the payload is cut into fragments.
    var cuts: [UInt8]
    /// Control frames sent before each fragment: 0 none, 1 a ping, 2 a pong.
    var controls: [UInt8]
}

func checkValidSequence(_ input: inout FuzzInput, limit: Int) {
    var sent: [SentMessage] = []
    for _ in 0..<Int(input.byte() % 6) {
        let isText = input.bool()
        let payload = isText ? Array(input.string().utf8) : input.chunk()
        sent.append(SentMessage(isText: isText, payload: payload, cuts: input.chunk(), controls: input.chunk()))
    }
    let closeAtEnd = input.bool()
    var bytes: [UInt8] = []
    var pings = 0
    for message in sent {
        var fragments: [[UInt8]] = []
        var rest = message.payload[...]
        for cut in message.cuts where !rest.isEmpty {
            let length = min(rest.count, Int(cut % 64) + 1)
            fragments.append(Array(rest.prefix(length)))
            rest = rest.dropFirst(length)
        }
        if !rest.isEmpty || fragments.isEmpty { fragments.append(Array(rest)) }
        for (index, fragment) in fragments.enumerated() {
            let control = index < message.controls.count ? message.controls[index] % 3 : 0
            if control == 1 {
                bytes += serverFrame(opcode: 0x9, fin: true, payload: [UInt8(truncatingIfNeeded: index)])
                pings += 1
            }
            if control == 2 { bytes += serverFrame(opcode: 0xA, fin: true, payload: []) }
            let opcode: UInt8 = index == 0 ? (message.isText ? 0x1 : 0x2) : 0x0
            bytes += serverFrame(opcode: opcode, fin: index == fragments.count - 1, payload: fragment)
        }
    }
    if closeAtEnd { bytes += serverFrame(opcode: 0x8, fin: true, payload: [0x03, 0xE8]) }

    let harness = WebSocketHarness(limit: limit)
    defer { harness.end() }
    harness.feed(bytes, cuts: input.chunk())
    let recorder = harness.recorder
    // The frame decoder refuses a frame over max(limit, 125); the assembler a message over limit.
    let frameLimit = max(limit, 125)
    var expected: [String] = []
    var failedWith: UInt16?
    for message in sent {
        let longestFragment = fragmentLengths(message).max() ?? 0
        if longestFragment > frameLimit || message.payload.count > limit {
            failedWith = 1009
            break
        }
        expected.append(describe(isText: message.isText, message.payload))
    }
    fuzzRequire(recorder.messages.map(\.description) == expected,
                "messages \(recorder.messages.map(\.description)) expected \(expected)")
    if let failedWith {
        fuzzRequire(recorder.closeCodesSent.first == failedWith, "sent \(recorder.closeCodesSent), expected \(failedWith)")
        fuzzRequire(recorder.completions == 1, "the failed connection did not complete")
        fuzzRequire(recorder.completionError?.code == .dataLengthExceedsMaximum, "completed with \(String(describing: recorder.completionError))")
    } else if closeAtEnd {
        fuzzRequire(recorder.closeCodesSent == [1000], "the server's close was answered with \(recorder.closeCodesSent)")
        fuzzRequire(recorder.completions == 1 && recorder.completionError == nil,
                    "a clean close completed with \(String(describing: recorder.completionError))")
    } else {
        fuzzRequire(recorder.completions == 0, "an open connection completed")
        harness.end()
        fuzzRequire(recorder.completions == 1 && recorder.completionError?.code == .networkConnectionLost,
                    "an abrupt end completed with \(String(describing: recorder.completionError))")
    }
    // Every ping is answered while the connection is open; none after it failed.
    fuzzRequire(failedWith == nil ? recorder.pongsSent == pings : recorder.pongsSent <= pings,
                "\(pings) pings, \(recorder.pongsSent) pongs")
}

func fragmentLengths(_ message: SentMessage) -> [Int] {
    var lengths: [Int] = []
    var rest = message.payload.count
    for cut in message.cuts where rest > 0 {
        let length = min(rest, Int(cut % 64) + 1)
        lengths.append(length)
        rest -= length
    }
    if rest > 0 || lengths.isEmpty { lengths.append(rest) }
    return lengths
}

func describe(isText: Bool, _ payload: [UInt8]) -> String {
    isText ? "text:\(String(decoding: payload, as: UTF8.self))" : "binary:\(payload)"
}

/// An unmasked server frame.
func serverFrame(opcode: UInt8, fin: Bool, payload: [UInt8]) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    switch payload.count {
    case ..<126:
        frame.append(UInt8(payload.count))
    case ..<65_536:
        frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
        frame.append(127)
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    return frame + payload
}

// MARK: Harness

/// A WebSocket connection after its upgrade, on an `EmbeddedChannel`: the decoder the upgrader
/// installs, then Lupine's frame handler.
final class WebSocketHarness {
    let channel = EmbeddedChannel()
    let recorder = WebSocketRecorder()
    private let connection: WebSocketConnection

    init(limit: Int) {
        let url = URL(string: "ws://127.0.0.1:9/socket")!
        let request = TransportRequest(url: url, method: .get, headerFields: [])
        let settings = WebSocketConnection.Settings(maximumMessageSize: limit, pingInterval: nil)
        connection = WebSocketConnection(request: request, settings: settings, events: recorder, delegate: recorder)
        let maxFrameSize = min(max(limit, 125), Int(UInt32.max))
        do {
            // Records frames as they are written, in order with what the handler reports.
            try channel.pipeline.syncOperations.addHandler(OutboundFrameRecorder(recorder: recorder))
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: maxFrameSize)))
            try channel.pipeline.syncOperations.addHandler(WebSocketFrameHandler(connection: connection, settings: settings))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        } catch {
            fuzzRequire(false, "harness setup failed: \(error)")
        }
    }

    func feed(_ bytes: [UInt8], cuts: [UInt8]) {
        var rest = bytes[...]
        var cutIndex = 0
        while !rest.isEmpty, channel.isActive {
            let length = cutIndex < cuts.count ? Int(cuts[cutIndex]) + 1 : rest.count
            cutIndex += 1
            let piece = rest.prefix(length)
            rest = rest.dropFirst(length)
            _ = try? channel.writeInbound(ByteBuffer(bytes: piece))
            drainOutbound()
        }
    }

    /// The server goes away (again: ending twice is harmless).
    func end() {
        _ = try? channel.close().wait()
        drainOutbound()
        _ = try? channel.finish()
        // Timers still queued on the embedded loop hold the handler: dropped with the loop.
        try? channel.embeddedEventLoop.syncShutdownGracefully()
    }

    private func drainOutbound() {
        while (try? channel.readOutbound(as: WebSocketFrame.self)) != nil {}
    }
}

/// Passes frames on, recording each as it is written.
final class OutboundFrameRecorder: ChannelOutboundHandler {
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let recorder: WebSocketRecorder

    init(recorder: WebSocketRecorder) {
        self.recorder = recorder
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        recorder.sent(unwrapOutboundIn(data))
        context.write(data, promise: promise)
    }
}

/// Records what the connection reports, and checks the order as it goes.
final class WebSocketRecorder: WebSocketConnectionDelegate, TransportEvents, @unchecked Sendable {
    var messages: [RecordedMessage] = []
    var closeCodesSent: [UInt16] = []
    var pongsSent = 0
    var completions = 0
    var completionError: URLError?
    var log: [String] = []

    enum RecordedMessage: CustomStringConvertible {
        case text(String)
        case binary([UInt8])

        var count: Int {
            switch self {
            case let .text(text): text.utf8.count
            case let .binary(bytes): bytes.count
            }
        }

        var description: String {
            switch self {
            case let .text(text): "text:\(text)"
            case let .binary(bytes): "binary:\(bytes)"
            }
        }
    }

    func sent(_ frame: WebSocketFrame) {
        fuzzRequire(frame.maskKey != nil, "an unmasked client frame")
        // The frame holds its payload unmasked: the encoder masks it on the way out.
        let payload = Array(frame.data.readableBytesView)
        switch frame.opcode {
        case .pong:
            pongsSent += 1
            log.append("pong:\(payload)")
        case .connectionClose:
            closeCodesSent.append(payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005)
            log.append("close-sent:\(payload)")
        default:
            log.append("sent:\(frame.opcode)")
        }
    }

    func connectionDidOpen(_ connection: WebSocketConnection, protocol: String?) {}

    func connection(_ connection: WebSocketConnection, didReceive message: URLSessionWebSocketTask.Message) {
        fuzzRequire(completions == 0, "a message after completion")
        fuzzRequire(closeCodesSent.isEmpty, "a message after the client sent a close frame")
        switch message {
        case let .string(text): messages.append(.text(text))
        case let .data(data): messages.append(.binary(Array(data)))
        @unknown default: fuzzRequire(false, "unknown message kind")
        }
        log.append(messages[messages.count - 1].description)
    }

    func connection(_ connection: WebSocketConnection, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        log.append("closed:\(closeCode.rawValue)")
    }

    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
        fuzzRequire(false, "a response head after the upgrade")
    }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        fuzzRequire(false, "a body part after the upgrade")
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        completions += 1
        completionError = error
        fuzzRequire(completions == 1, "completed twice")
        log.append("complete:\(error.map { "\($0.code.rawValue)" } ?? "nil")")
    }
}
