import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// A `URLProtocol` calling its client in any order, from any thread: responses, data, finishing,
/// failing, redirects, cached responses, challenges, calls after it finished and calls from a
/// stopped instance, while the consumer pauses and resumes reading.
///
/// The exchange reports its events in the order of the transport contract (a head before body
/// parts, nothing after completion) and completes exactly once: as the first terminal callback
/// says, with `.badServerResponse` for data or a finish before any response, or with
/// `.cancelled` when the consumer gives up on a protocol that never ends. The body delivered is
/// the data sent after the response.
@main
enum FuzzURLProtocolClientMain {
    static func main() {
        exit(runFuzzer(fuzzURLProtocolClient))
    }
}

enum Step {
    case httpResponse(status: Int, fields: [String: String])
    case plainResponse(mimeType: String?, length: Int)
    case data([UInt8])
    case finish
    case fail(URLError.Code)
    case failWithOtherError
    case redirect(status: Int)
    case cachedResponseIsValid([UInt8])
    case challenge
    /// Goes on from another thread.
    case hop
    /// The consumer pauses or resumes reading (alternating).
    case toggleReading
    /// A callback from another, never-started instance of the protocol.
    case strayCall
}

/// What the script of the current input is; one input runs at a time.
final class Script: @unchecked Sendable {
    static let current = Script()
    var steps: [Step] = []
    var exchange: (any TransportTask)?
    var isPaused = false
    let lock = NSLock()
    let done = DispatchSemaphore(value: 0)
}

final class ScriptedProtocol: URLProtocol {
    private let stops = NSLock()
    private var stopCount = 0

    override class func canInit(with request: URLRequest) -> Bool { true }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        run(Script.current.steps[...])
    }

    private func run(_ steps: ArraySlice<Step>) {
        var rest = steps
        while let step = rest.popFirst() {
            guard let client, let url = request.url else { return }
            switch step {
            case let .httpResponse(status, fields):
                if let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields) {
                    client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
                }
            case let .plainResponse(mimeType, length):
                let response = URLResponse(url: url, mimeType: mimeType, expectedContentLength: length, textEncodingName: nil)
                client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            case let .data(bytes):
                client.urlProtocol(self, didLoad: Data(bytes))
            case .finish:
                client.urlProtocolDidFinishLoading(self)
            case let .fail(code):
                client.urlProtocol(self, didFailWithError: URLError(code))
            case .failWithOtherError:
                client.urlProtocol(self, didFailWithError: CocoaError(.fileReadCorruptFile))
            case let .redirect(status):
                guard let target = URL(string: "http://127.0.0.1:9/redirected"),
                      let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])
                else { continue }
                client.urlProtocol(self, wasRedirectedTo: URLRequest(url: target), redirectResponse: response)
            case let .cachedResponseIsValid(bytes):
                let response = URLResponse(url: url, mimeType: "text/plain", expectedContentLength: bytes.count, textEncodingName: nil)
                client.urlProtocol(self, cachedResponseIsValid: CachedURLResponse(response: response, data: Data(bytes)))
            case .challenge:
                let space = URLProtectionSpace(host: "127.0.0.1", port: 9, protocol: "http", realm: "r",
                                               authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
                let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                           failureResponse: nil, error: nil, sender: NoSender())
                client.urlProtocol(self, didReceive: challenge)
            case .hop:
                let remaining = rest
                rest = []
                // URLProtocol is not Sendable; the script goes on from one thread at a time.
                nonisolated(unsafe) let loader = self
                DispatchQueue.global().async { loader.run(remaining) }
                return
            case .toggleReading:
                let script = Script.current
                script.lock.lock()
                // Before the harness knows the exchange, there is nothing to pause.
                let exchange = script.exchange
                let pausing = !script.isPaused
                if exchange != nil { script.isPaused = pausing }
                script.lock.unlock()
                if pausing { exchange?.pauseReading() } else { exchange?.resumeReading() }
            case .strayCall:
                let stray = ScriptedProtocol(request: request, cachedResponse: nil, client: client)
                client.urlProtocol(stray, didLoad: Data("stray".utf8))
                client.urlProtocolDidFinishLoading(stray)
            }
        }
        Script.current.done.signal()
    }

    override func stopLoading() {
        stops.lock()
        stopCount += 1
        let count = stopCount
        stops.unlock()
        fuzzRequire(count == 1, "stopLoading called \(count) times")
    }
}

final class NoSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

/// Records the events and checks their order as they come.
final class EventRecorder: TransportEvents, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var heads: [TransportResponseHead] = []
    private(set) var body: [UInt8] = []
    private(set) var completions = 0
    private(set) var error: URLError?
    private(set) var sentRequest = false
    let completed = DispatchSemaphore(value: 0)

    func transportDidSendRequest(_ task: any TransportTask) {
        lock.withLock {
            fuzzRequire(!sentRequest && heads.isEmpty && completions == 0, "request sent out of order")
            sentRequest = true
        }
    }

    func transportDidReceive(_ task: any TransportTask, head: TransportResponseHead) {
        lock.withLock {
            fuzzRequire(completions == 0, "a head after completion")
            fuzzRequire(heads.isEmpty, "a second head")
            heads.append(head)
        }
    }

    func transportDidReceive(_ task: any TransportTask, bodyPart: Data) {
        lock.withLock {
            fuzzRequire(completions == 0, "a body part after completion")
            fuzzRequire(heads.count == 1, "a body part before the head")
            body += bodyPart
        }
    }

    func transportDidComplete(_ task: any TransportTask, error: URLError?) {
        lock.withLock {
            completions += 1
            fuzzRequire(completions == 1, "completed twice")
            self.error = error
            if error == nil { fuzzRequire(heads.count == 1, "completed without error and without a head") }
        }
        completed.signal()
    }
}

func readScript(_ input: inout FuzzInput) -> [Step] {
    var steps: [Step] = []
    for _ in 0..<Int(input.byte() % 12) {
        switch input.byte() % 14 {
        case 0, 1:
            var fields: [String: String] = [:]
            if input.bool() { fields["Content-Type"] = "text/plain" }
            if input.bool() { fields["Location"] = input.string() }
            if input.bool() { fields[input.string()] = input.string() }
            steps.append(.httpResponse(status: [200, 204, 301, 304, 404, 500, 100, 0, 999][Int(input.byte()) % 9], fields: fields))
        case 2:
            steps.append(.plainResponse(mimeType: input.bool() ? "application/json" : nil, length: Int(Int8(bitPattern: input.byte()))))
        case 3, 4:
            steps.append(.data(input.chunk()))
        case 5:
            steps.append(.finish)
        case 6:
            steps.append(.fail([.timedOut, .notConnectedToInternet, .cancelled, .badServerResponse][Int(input.byte()) % 4]))
        case 7:
            steps.append(.failWithOtherError)
        case 8:
            steps.append(.redirect(status: [301, 302, 307, 200][Int(input.byte()) % 4]))
        case 9:
            steps.append(.cachedResponseIsValid(input.chunk()))
        case 10:
            steps.append(.challenge)
        case 11:
            steps.append(.hop)
        case 12:
            steps.append(.toggleReading)
        default:
            steps.append(.strayCall)
        }
    }
    return steps
}

/// What the first terminal callback makes of the exchange: the error code (nil for success) and
/// the body delivered; nil when the script never ends the exchange.
func expectedOutcome(_ steps: [Step]) -> (code: URLError.Code?, body: [UInt8])? {
    var sawResponse = false
    var body: [UInt8] = []
    for step in steps {
        switch step {
        case .httpResponse, .plainResponse:
            // A second response is passed on by corelibs' clients too; the recorder refuses it.
            sawResponse = true
        case let .data(bytes):
            guard sawResponse else { return (.badServerResponse, []) }
            body += bytes
        case .finish:
            return sawResponse ? (nil, body) : (.badServerResponse, [])
        case let .fail(code):
            return (code, [])
        case .failWithOtherError:
            return (.unknown, [])
        case .redirect:
            // A redirect after a response is a second response.
            return sawResponse ? (.badServerResponse, []) : (nil, body)
        case let .cachedResponseIsValid(bytes):
            return sawResponse ? (.badServerResponse, []) : (nil, body + bytes)
        case .challenge:
            return (.userAuthenticationRequired, [])
        case .hop, .toggleReading, .strayCall:
            continue
        }
    }
    return nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzURLProtocolClient(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var steps = readScript(&input)
    // At most one response per script: a protocol sending two is outside URLProtocol's contract.
    var seenResponse = false
    steps = steps.filter { step in
        switch step {
        case .httpResponse, .plainResponse:
            defer { seenResponse = true }
            return !seenResponse
        default:
            return true
        }
    }
    guard let url = URL(string: "http://127.0.0.1:9/resource") else { return 0 }
    let script = Script.current
    script.steps = steps
    script.isPaused = false
    let recorder = EventRecorder()
    let transport = URLProtocolTransport(protocolClass: ScriptedProtocol.self, urlRequest: URLRequest(url: url),
                                         cachedResponse: nil, task: nil)
    let request = TransportRequest(url: url, method: .get, headerFields: [], idleTimeout: 600)
    script.lock.withLock { script.exchange = nil }
    let exchange = transport.execute(request, events: recorder)
    script.lock.withLock { script.exchange = exchange }
    // The script runs from startLoading; a toggle before the exchange is known does nothing.
    guard script.done.wait(timeout: .now() + 10) == .success else {
        fuzzRequire(false, "the script did not run")
        return 0
    }
    let paused = script.lock.withLock { () -> Bool in
        defer { script.isPaused = false }
        return script.isPaused
    }
    if paused { exchange.resumeReading() }
    let expected = expectedOutcome(steps)
    if expected == nil { exchange.cancel() }
    guard recorder.completed.wait(timeout: .now() + 10) == .success else {
        fuzzRequire(false, "the exchange never completed: \(steps)")
        return 0
    }
    let code = recorder.error?.code
    if let expected {
        fuzzRequire(code == expected.code, "completed with \(String(describing: code)), expected \(String(describing: expected.code)): \(steps)")
        if expected.code == nil { fuzzRequire(recorder.body == expected.body, "body \(recorder.body.count) bytes, expected \(expected.body.count): \(steps)") }
    } else {
        fuzzRequire(code == .cancelled, "a cancelled exchange completed with \(String(describing: code)): \(steps)")
    }
    return 0
}
