import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPCompression

/// The engine's HTTP/1.1 response handling: arbitrary bytes from the server go through SwiftNIO's
/// response decoder, the decompressor and Lupine's `ExchangeHandler`, as on a connection of the
/// pool, on an `EmbeddedChannel`. The bytes arrive in arbitrary reads, while the consumer pauses
/// and resumes reading and time moves on.
///
/// Nothing crashes; the events follow the transport contract (one head, body parts after it,
/// nothing after completion); the exchange completes exactly once, at the latest when the
/// connection ends; a success has a head of a final status; an identity body framed by
/// Content-Length is delivered whole and exact; a connection offered for reuse is one whose
/// response ended where its framing said, and stray bytes on it close it.
@main
enum FuzzHTTP1ResponseMain {
    static func main() {
        exit(runFuzzer(fuzzHTTP1Response))
    }
}

/// A clock the fuzzer moves: the embedded loop's time.
struct EmbeddedClock: EngineClock {
    let loop: EmbeddedEventLoop
    var now: NIODeadline { loop.now }

    func schedule(on eventLoop: any EventLoop, at deadline: NIODeadline, _ task: @escaping @Sendable () -> Void) -> Scheduled<Void> {
        eventLoop.scheduleTask(deadline: deadline, task)
    }
}

/// Stands in for the pool's connection.
final class RecordingOwner: ExchangeHandlerOwner {
    var finished: [Bool] = []

    func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool) {
        finished.append(reusable)
    }

    func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade, switched: @escaping (Bool) -> Void) {
        // The request asked for no upgrade: a 101 must not switch the connection.
        fuzzRequire(false, "a connection switched protocols for a request that asked for no upgrade")
    }

    /// The connection was opened for the fuzzed exchange: bytes that come before its request
    /// fail that exchange, as on a new connection of the pool.
    func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool { true }

    /// An HTTP/1.1 connection has no stream refusal: no failure says the request went unprocessed.
    func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool { false }
}

final class ResponseRecorder: TransportEvents, @unchecked Sendable {
    var heads: [TransportResponseHead] = []
    var body: [UInt8] = []
    var completions = 0
    var error: URLError?
    var sent = false

    func transportDidSendRequest(_ task: any TransportTask) {
        fuzzRequire(!sent && completions == 0, "request sent twice or after completion")
        sent = true
    }

    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
        fuzzRequire(completions == 0, "a head after completion")
        fuzzRequire(heads.isEmpty, "a second head: \(heads.map(\.statusCode)) then \(head.statusCode)")
        heads.append(head)
    }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        fuzzRequire(completions == 0, "a body part after completion")
        fuzzRequire(heads.count == 1, "a body part before the head")
        body += bodyPart
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        completions += 1
        fuzzRequire(completions == 1, "completed twice")
        self.error = error
    }
}

/// One configuration of the engine for the whole run: the pool only lends its clock and loop.
let pool = ConnectionPool(configuration: ConnectionEngine.Configuration())

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP1Response(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let methods: [Lupine.HTTPMethod] = [.get, .head, .post, .put, .delete]
    let method = methods[Int(input.byte()) % methods.count]
    let options = input.byte()
    let operations = input.chunk()
    let bytes = responseBytes(&input)

    let channel = EmbeddedChannel()
    let loop = channel.embeddedEventLoop
    defer {
        // Timers still queued on the embedded loop hold the handler: dropped with the loop.
        _ = try? channel.finish()
        try? loop.syncShutdownGracefully()
    }
    let handler = ExchangeHandler(clock: EmbeddedClock(loop: loop))
    let owner = RecordingOwner()
    handler.owner = owner
    do {
        try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .forwardBytes)
        try channel.pipeline.syncOperations.addHandler(NIOHTTPResponseDecompressor(limit: .ratio(200)))
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
    } catch {
        fuzzRequire(false, "harness setup failed: \(error)")
    }
    guard let url = URL(string: "http://127.0.0.1:9/resource?q=1") else { return 0 }
    let body: TransportRequestBody? = method == .post || method == .put ? .data(Data("body".utf8)) : nil
    let request = TransportRequest(url: url, method: method, headerFields: [HTTPHeader(name: "Accept-Encoding", value: "gzip, deflate")],
                                   body: body, idleTimeout: 2)
    guard let (key, _) = ConnectionKey.make(for: request) else { return 0 }
    let recorder = ResponseRecorder()
    let exchange = EngineExchange(request: request, events: recorder, key: key, shareable: true, pool: pool)
    _ = exchange.beginWaiting()
    // A first exchange: on a reused connection a lost connection sends the request again through the
    // pool, over the network (the fault matrix tests that).
    handler.start(exchange, reused: false)
    loop.run()
    // The request went out as one well-formed head.
    let sentHead = readOutbound(channel)
    fuzzRequire(sentHead.hasPrefix("\(method.rawValue) /resource?q=1 HTTP/1.1\r\n"), "request line \(sentHead.prefix(80).debugDescription)")

    var rest = bytes[...]
    var paused = false
    var operationIndex = 0
    while !rest.isEmpty, channel.isActive {
        let operation = operationIndex < operations.count ? operations[operationIndex] : 0xFF
        operationIndex += 1
        switch operation % 8 {
        case 0:
            paused.toggle()
            if paused { exchange.pauseReading() } else { exchange.resumeReading() }
        case 1:
            // Time passes; the idle timeout may end the exchange.
            loop.advanceTime(by: .milliseconds(Int64(operation)))
        default:
            let length = Int(operation) * 3 + 1
            let piece = rest.prefix(length)
            rest = rest.dropFirst(length)
            _ = try? channel.writeInbound(ByteBuffer(bytes: piece))
        }
        loop.run()
        _ = readOutbound(channel)
    }
    if paused {
        exchange.resumeReading()
        loop.run()
    }
    let completedBeforeEnd = recorder.completions == 1
    let endsQuietly = options & 2 == 2
    if endsQuietly, recorder.completions == 0 {
        // The server goes quiet: the idle timeout ends the exchange.
        loop.advanceTime(by: .seconds(3))
        fuzzRequire(recorder.completions == 1 && recorder.error?.code == .timedOut,
                    "a quiet server did not time out: \(String(describing: recorder.error))")
    }
    let reusable = owner.finished.last ?? false
    if reusable, channel.isActive {
        // A whole response arriving unasked on an idle connection closes it.
        _ = try? channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
        loop.run()
        fuzzRequire(!channel.isActive, "an unasked response left the connection open")
    }
    _ = try? channel.close().wait()
    loop.run()
    fuzzRequire(recorder.completions == 1, "\(recorder.completions) completions after the connection ended")
    fuzzRequire(owner.finished.count <= 1, "finished \(owner.finished.count) times")

    if recorder.error == nil {
        guard let head = recorder.heads.first else {
            fuzzRequire(false, "success without a head")
            return 0
        }
        // Interim answers are not the response (a status under 100 is passed on: the request refuses it).
        fuzzRequire(!(100..<200).contains(head.statusCode) || head.statusCode == 101, "success with status \(head.statusCode)")
        let lengths = head.headerFields.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        let encoded = head.headerFields.contains { ["content-encoding", "transfer-encoding"].contains($0.name.lowercased()) }
        let hasBody = method != .head && head.statusCode != 204 && head.statusCode != 304 && head.statusCode >= 200
        if completedBeforeEnd, lengths.count == 1, let length = Int(lengths[0]), !encoded, hasBody {
            fuzzRequire(recorder.body.count == length, "Content-Length \(length), body \(recorder.body.count) bytes")
        }
        if method == .head { fuzzRequire(recorder.body.isEmpty, "a body for HEAD") }
    }
    if reusable {
        fuzzRequire(completedBeforeEnd && recorder.error == nil, "a failed exchange left its connection reusable")
    }
    return 0
}

func readOutbound(_ channel: EmbeddedChannel) -> String {
    var text = ""
    while let buffer = try? channel.readOutbound(as: ByteBuffer.self) {
        text += String(decoding: buffer.readableBytesView, as: UTF8.self)
    }
    return text
}

/// Either raw bytes, or a response built from parts (status line, fields, framing, body) so that
/// the fuzzer reaches past the status line often.
func responseBytes(_ input: inout FuzzInput) -> [UInt8] {
    guard input.bool() else { return input.rest() }
    var bytes: [UInt8] = []
    for _ in 0..<Int(input.byte() % 3 + 1) {
        let statuses = ["200 OK", "204 No Content", "304 Not Modified", "100 Continue", "101 Switching Protocols",
                        "103 Early Hints", "407 Proxy Authentication Required", "500 Oops", "999 X", "20 Short"]
        let versions = ["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1 ", "http/1.1"]
        var head = "\(versions[Int(input.byte()) % versions.count]) \(statuses[Int(input.byte()) % statuses.count])\r\n"
        let body = input.chunk()
        switch input.byte() % 6 {
        case 0: head += "Content-Length: \(body.count)\r\n"
        case 1: head += "Content-Length: \(Int(input.byte()))\r\n"
        case 2: head += "Transfer-Encoding: chunked\r\n"
        case 3: head += "Content-Length: \(body.count)\r\nContent-Length: \(body.count + 1)\r\n"
        case 4: head += "Content-Encoding: gzip\r\nContent-Length: \(body.count)\r\n"
        default: break
        }
        if input.bool() { head += "Connection: close\r\n" }
        if input.bool() { head += input.string() + "\r\n" }
        head += "\r\n"
        bytes += Array(head.utf8)
        if head.contains("chunked") {
            var rest = body[...]
            while !rest.isEmpty {
                let length = min(rest.count, Int(input.byte() % 64) + 1)
                bytes += Array(String(length, radix: 16).utf8) + [13, 10] + rest.prefix(length) + [13, 10]
                rest = rest.dropFirst(length)
            }
            bytes += Array("0\r\n\r\n".utf8)
        } else {
            bytes += body
        }
    }
    return bytes + input.rest()
}
