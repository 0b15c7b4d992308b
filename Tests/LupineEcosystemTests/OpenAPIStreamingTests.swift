import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HTTPTypes
import Lupine
import LupineOpenAPI
import LupineTestServer
import OpenAPIRuntime
import Testing

/// What a generated client does with a streaming operation: it sends the request and hands the
/// response body to its caller as it is, an `HTTPBody` to iterate.
private struct StreamingClient {
    let serverURL: URL
    let transport: any ClientTransport

    func call(_ path: String, method: HTTPRequest.Method = .get, body: HTTPBody? = nil,
              contentType: String? = nil) async throws -> (HTTPResponse, HTTPBody?) {
        var request = HTTPRequest(method: method, scheme: nil, authority: nil, path: path)
        if let contentType { request.headerFields[.contentType] = contentType }
        return try await transport.send(request, body: body, baseURL: serverURL, operationID: "streaming")
    }

    /// A `text/event-stream` operation, as swift-openapi-generator writes one: the documented 200
    /// response's body decoded as server-sent events.
    func events(count: Int) async throws -> ServerSentEventsDeserializationSequence<ServerSentEventsLineDeserializationSequence<HTTPBody>> {
        var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/sse?count=\(count)")
        request.headerFields[.accept] = "text/event-stream"
        let (response, body) = try await transport.send(request, body: nil, baseURL: serverURL, operationID: "events")
        guard response.status == .ok, let body else { throw StreamingTestError.undocumented(response.status.code) }
        return body.asDecodedServerSentEvents()
    }
}

private enum StreamingTestError: Error {
    case undocumented(Int)
}

/// The `/upload` sink's report.
private struct UploadReport: Decodable {
    let bytes: Int
    let sha256: String
    let method: String
    let contentLength: String?
    let transferEncoding: String?
}

/// Records the requests of a Session as they resume, so that a test can read their progress.
private final class RequestRecorder: Sendable {
    let requests = Locked<[Request]>([])
    let cancelled = Locked(0)
    let exchanges = Locked(0)
    let monitor = ClosureEventMonitor()

    init() {
        monitor.requestDidResume = { [requests] request in requests.withValue { $0.append(request) } }
        monitor.requestDidCancel = { [cancelled] _ in cancelled.withValue { $0 += 1 } }
        monitor.requestDidResumeExchange = { [exchanges] _ in exchanges.withValue { $0 += 1 } }
    }

    var last: Request? { requests.current.last }
}

/// `count` bytes in parts of `partSize`, produced only when asked for, counting what was produced.
/// Each part's bytes depend on its place, so a part sent twice, lost or out of order changes the
/// digest.
private struct CountingBytes: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk
    let count: Int
    let partSize: Int
    let produced: Locked<Int>

    func makeAsyncIterator() -> Iterator { Iterator(remaining: count, partSize: partSize, produced: produced) }

    /// The SHA-256 of the whole body, in lowercase hex.
    var digest: String {
        var hasher = SHA256()
        var index = 0
        var remaining = count
        while remaining > 0 {
            let size = Swift.min(partSize, remaining)
            hasher.update(data: Self.part(index, size: size))
            remaining -= size
            index += 1
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func part(_ index: Int, size: Int) -> HTTPBody.ByteChunk {
        HTTPBody.ByteChunk(repeating: UInt8(truncatingIfNeeded: index &* 31 &+ 7), count: size)
    }

    struct Iterator: AsyncIteratorProtocol {
        var remaining: Int
        let partSize: Int
        let produced: Locked<Int>
        var index = 0

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            guard remaining > 0 else { return nil }
            let size = Swift.min(partSize, remaining)
            remaining -= size
            produced.withValue { $0 += size }
            defer { index += 1 }
            return CountingBytes.part(index, size: size)
        }
    }
}

/// The process's peak resident memory so far (`VmHWM`), in bytes.
private func peakResidentBytes() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return nil }
    return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
}

@Suite struct OpenAPIStreamingTests {
    private func client(_ server: LupineTestServer, session: Session = .default,
                        configuration: LupineClientTransport.Configuration = .init()) throws -> StreamingClient {
        let url = try #require(URL(string: server.url("/")))
        return StreamingClient(serverURL: url, transport: LupineClientTransport(session: session, configuration: configuration))
    }

    /// 8 bytes dripped over 6 seconds: the response and the first part reach the caller while
    /// the server is still sending, seconds before the last part. Collected whole, every part
    /// would arrive together at the end. (Over 4 s, a loaded full run once delivered the head
    /// 1.5 s late, the first parts with it, and the parts spanned 1.98 s: the drip leaves room
    /// for such a delay now, and still fails a transport that collects the body.)
    @Test func theFirstPartOfASlowStreamArrivesLongBeforeTheEnd() async throws {
        let server = try await testServer()
        let (response, body) = try await client(server).call("/drip?numbytes=8&duration=6")
        let responded = Date()
        #expect(response.status == .ok)
        var arrivals: [Date] = []
        var received = 0
        for try await part in try #require(body) {
            arrivals.append(Date())
            received += part.count
        }
        let first = try #require(arrivals.first), last = try #require(arrivals.last)
        #expect(received == 8)
        #expect(arrivals.count > 1)
        #expect(last.timeIntervalSince(first) > 2, "the parts arrived within \(last.timeIntervalSince(first)) s")
        #expect(last.timeIntervalSince(responded) > 2, "the response came \(last.timeIntervalSince(responded)) s before the end")
    }

    @Test func serverSentEventsDecodeThroughAGeneratedStyleCall() async throws {
        let server = try await testServer()
        var events: [OpenAPIRuntime.ServerSentEvent] = []
        for try await event in try await client(server).events(count: 4) {
            events.append(event)
        }
        #expect(events.map(\.id) == ["1", "2", "3", "4"])
        #expect(events.allSatisfy { $0.event == "tick" })
        #expect(events.map(\.data) == (1...4).map { "event \($0)\nline two" })
    }

    @Test func theBodyCarriesTheDeclaredLengthOrNone() async throws {
        let server = try await testServer()
        let sized = try #require(try await client(server).call("/bytes/1000").1)
        #expect(sized.length == .known(1000))
        _ = try await Data(collecting: sized, upTo: 1000)
        let chunked = try #require(try await client(server).call("/stream-bytes/1000").1)
        #expect(chunked.length == .unknown)
        #expect(try await Data(collecting: chunked, upTo: 1000).count == 1000)
        // Decoded on the way in: the declared length counts the gzip bytes, not the caller's.
        let coded = try #require(try await client(server).call("/gzip").1)
        #expect(coded.length == .unknown)
        _ = try await Data(collecting: coded, upTo: 1 << 20)
    }

    /// 1 GiB read through the transport, slowly at first: the bytes read from the socket never run
    /// more than a few MiB ahead of the caller, and the process's peak resident memory grows far less than the
    /// body (other tests run alongside, hence the loose bound on the process figure; the gap is
    /// the transport's own buffer, measured exactly).
    @Test func aOneGiBDownloadStreamsInBoundedMemory() async throws {
        let server = try await testServer()
        let recorder = RequestRecorder()
        let session = Session(eventMonitors: [recorder.monitor])
        let total = 1 << 30
        let peakBefore = peakResidentBytes()
        let (response, body) = try await client(server, session: session).call("/bytes/\(total)")
        #expect(response.status == .ok)
        let request = try #require(recorder.last)
        var consumed = 0
        var parts = 0
        var largestGap = 0
        for try await part in try #require(body) {
            consumed += part.count
            parts += 1
            // Slow for the first parts: a transport that read on regardless would run tens of MiB
            // ahead meanwhile.
            if parts <= 40 { try await Task.sleep(for: .milliseconds(20)) }
            largestGap = max(largestGap, Int(request.downloadProgress.completedUnitCount) - consumed)
        }
        let peakAfter = peakResidentBytes()
        #expect(consumed == total)
        #expect(largestGap < 4 << 20, "the socket was read \(largestGap) bytes ahead of the caller")
        if let peakBefore, let peakAfter {
            print("OpenAPIStreamingTests: 1 GiB through the transport grew peak resident memory by \((peakAfter - peakBefore) >> 20) MiB")
            #expect(peakAfter - peakBefore < 256 << 20)
        }
    }

    /// 32 MiB produced part by part as the connection takes them: the body never runs more than a
    /// few parts ahead of what was written to the socket, and arrives whole, in order, with its
    /// length as Content-Length.
    @Test func aStreamedUploadIsReadAsTheConnectionTakesIt() async throws {
        let server = try await testServer()
        let recorder = RequestRecorder()
        let session = Session(eventMonitors: [recorder.monitor])
        let total = 32 << 20
        let produced = Locked(0)
        let largestLead = Locked(0)
        let parts = CountingBytes(count: total, partSize: 64 << 10, produced: produced)
        // Samples how far production is ahead of the bytes written, each time a part is asked for.
        let sampled = parts.map { part -> HTTPBody.ByteChunk in
            if let request = recorder.last {
                let lead = produced.current - Int(request.uploadProgress.completedUnitCount)
                largestLead.withValue { $0 = max($0, lead) }
            }
            return part
        }
        let body = HTTPBody(sampled, length: .known(Int64(total)), iterationBehavior: .single)
        let (response, answer) = try await client(server, session: session)
            .call("/upload", method: .post, body: body, contentType: "application/octet-stream")
        #expect(response.status == .ok)
        let report = try JSONDecoder().decode(UploadReport.self, from: try await Data(collecting: try #require(answer), upTo: 1 << 20))
        #expect(report.bytes == total)
        #expect(report.sha256 == parts.digest)
        #expect(report.contentLength == String(total))
        #expect(report.transferEncoding == nil)
        #expect(largestLead.current < 4 << 20, "the body was produced \(largestLead.current) bytes ahead of the socket")
    }

    @Test func aBodyOfUnknownLengthIsSentChunked() async throws {
        let server = try await testServer()
        let (stream, continuation) = AsyncStream.makeStream(of: HTTPBody.ByteChunk.self)
        let body = HTTPBody(stream, length: .unknown)
        Task {
            for index in 0..<4 {
                continuation.yield(HTTPBody.ByteChunk(repeating: UInt8(index), count: 1000))
                try? await Task.sleep(nanoseconds: 20_000_000)
            }
            continuation.finish()
        }
        let (_, answer) = try await client(server).call("/upload", method: .put, body: body)
        let report = try JSONDecoder().decode(UploadReport.self, from: try await Data(collecting: try #require(answer), upTo: 1 << 20))
        #expect(report.bytes == 4000)
        #expect(report.method == "PUT")
        #expect(report.contentLength == nil)
        #expect(report.transferEncoding == "chunked")
    }

    /// A body made from bytes in memory can be iterated again: the retry sends it whole.
    @Test func aRetrySendsAReplayableBodyAgain() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let key = UUID().uuidString
        let (response, answer) = try await client(server, session: Session(interceptor: retry))
            .call("/fail/1?key=\(key)&status=503", method: .put, body: HTTPBody("second time lucky"), contentType: "text/plain")
        #expect(response.status == .ok)
        let echo = try JSONDecoder().decode([String: JSONEcho].self, from: try await Data(collecting: try #require(answer), upTo: 1 << 20))
        #expect(echo["data"] == .string("second time lucky"))
    }

    /// A body that can be iterated once was read by the first attempt: the retry fails with the
    /// transport's error instead of sending an empty or partial body.
    @Test func aRetryOfABodyReadableOnceFailsClearly() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let recorder = RequestRecorder()
        let session = Session(interceptor: retry, eventMonitors: [recorder.monitor])
        let body = HTTPBody(AsyncStream { continuation in
            continuation.yield(HTTPBody.ByteChunk("only once".utf8))
            continuation.finish()
        }, length: .known(9))
        await #expect {
            _ = try await client(server, session: session)
                .call("/fail/1?key=\(UUID().uuidString)&status=503", method: .put, body: body, contentType: "text/plain")
        } throws: { error in
            guard case let .createUploadableFailed(underlying)? = (error as? AFError) else { return false }
            return underlying as? LupineClientTransport.TransportError == .requestBodyNotReplayable
        }
        // The first attempt went out; the retry failed before sending anything.
        #expect(recorder.exchanges.current == 1)
    }

    @Test func anAuthenticationInterceptorRefreshesTheTokenAndRetries() async throws {
        let server = try await testServer()
        let authenticator = IssuingAuthenticator(server: server)
        let stale = IssuingAuthenticator.Token(value: "stale")
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: stale)
        let (response, body) = try await client(server, configuration: .init(interceptor: interceptor))
            .call("/token/protected?key=\(authenticator.key)", method: .post, body: HTTPBody("{}"), contentType: "application/json")
        #expect(response.status == .ok)
        _ = try await Data(collecting: try #require(body), upTo: 1 << 20)
        #expect(authenticator.refreshes.current == 1)
    }

    /// A 503 whose body is larger than what is held for the retriers goes to the caller as it
    /// arrives, and is not retried.
    @Test func anUnacceptableResponseTooLargeToHoldGoesToTheCallerUnretried() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let recorder = RequestRecorder()
        let session = Session(interceptor: retry, eventMonitors: [recorder.monitor])
        let size = 3 << 20
        let (response, body) = try await client(server, session: session).call("/drip?numbytes=\(size)&duration=0&code=503")
        #expect(response.status.code == 503)
        #expect(try await Data(collecting: try #require(body), upTo: size).count == size)
        #expect(recorder.exchanges.current == 1)
    }

    /// The connection drops in the middle of the events: the caller gets some or all of what came,
    /// then the request's error, and never the first events a second time from a retry (the
    /// Session's `RetryPolicy` would retry this GET).
    @Test func aTransferFailingMidBodyEndsTheBodyWithItsErrorAndIsNotRetried() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 3, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let (_, body) = try await client(server, session: Session(interceptor: retry)).call("/sse?count=5&drop-after=2")
        var received = ""
        var failure: (any Error)?
        do {
            for try await part in try #require(body) { received += String(decoding: part, as: UTF8.self) }
        } catch {
            failure = error
        }
        #expect((failure as? AFError)?.sessionTaskURLErrorCode == .networkConnectionLost,
                "the body ended with \(String(describing: failure))")
        // What the server sent before dropping the connection: a comment, two events, half of one.
        let events = (1...3).map { "id: \($0)\nevent: tick\ndata: event \($0)\ndata: line two\n\n" }
        let third = Array(events[2].utf8)
        let sent = ": stream of 5 events\n" + events[0] + events[1] + String(decoding: third[..<(third.count / 2)], as: UTF8.self)
        #expect(sent.hasPrefix(received), "the caller got more than the server sent:\n\(received)")
    }

    /// The caller's task is cancelled mid-body: its iteration ends with `explicitlyCancelled` and
    /// the request is cancelled (the server would go on for ten seconds).
    @Test func cancellingTheCallerMidBodyCancelsTheRequest() async throws {
        let server = try await testServer()
        let recorder = RequestRecorder()
        let session = Session(eventMonitors: [recorder.monitor])
        let (_, body) = try await client(server, session: session).call("/drip?numbytes=100&duration=10")
        let body2 = try #require(body)
        let firstPart = Locked(false)
        let reader = Task {
            var received = 0
            for try await part in body2 {
                received += part.count
                firstPart.withValue { $0 = true }
            }
            return received
        }
        #expect(await waitUntil { firstPart.current })
        reader.cancel()
        await #expect {
            _ = try await reader.value
        } throws: { error in
            (error as? AFError)?.isExplicitlyCancelledError == true
        }
        #expect(await waitUntil { recorder.cancelled.current == 1 })
        #expect(recorder.last?.isCancelled == true)
    }

    /// A caller that lets go of a body it has not finished cancels the request.
    @Test func lettingGoOfAnUnfinishedBodyCancelsTheRequest() async throws {
        let server = try await testServer()
        let recorder = RequestRecorder()
        let session = Session(eventMonitors: [recorder.monitor])
        do {
            let (_, body) = try await client(server, session: session).call("/drip?numbytes=100&duration=10")
            var iterator = try #require(body).makeAsyncIterator()
            _ = try await iterator.next()
        }
        #expect(await waitUntil { recorder.cancelled.current == 1 })
    }

    /// A caller that breaks out of its loop while still holding the body cancels the request: the
    /// body can be iterated once only, so nothing else will read the rest.
    @Test func endingTheLoopEarlyCancelsTheRequest() async throws {
        let server = try await testServer()
        let recorder = RequestRecorder()
        let session = Session(eventMonitors: [recorder.monitor])
        let (_, response) = try await client(server, session: session).call("/drip?numbytes=100&duration=10")
        let body = try #require(response)
        for try await _ in body { break }
        #expect(await waitUntil { recorder.cancelled.current == 1 })
        withExtendedLifetime(body) {}
    }

    /// A caller that reads a body to its end leaves the request finished, never cancelled.
    @Test func aBodyReadToTheEndDoesNotCancel() async throws {
        let server = try await testServer()
        let recorder = RequestRecorder()
        let session = Session(eventMonitors: [recorder.monitor])
        do {
            let (_, body) = try await client(server, session: session).call("/bytes/100000")
            #expect(try await Data(collecting: try #require(body), upTo: 100_000).count == 100_000)
        }
        let request = try #require(recorder.last)
        #expect(await waitUntil { request.isFinished })
        #expect(recorder.cancelled.current == 0)
        #expect(request.error == nil)
    }
}

/// The JSON values of the `/anything` echo this file reads.
private enum JSONEcho: Decodable, Equatable {
    case string(String)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        self = (try? container.decode(String.self)).map(JSONEcho.string) ?? .other
    }
}

/// Authenticates with the tokens of one `/token` key of the test server; `refresh` issues a new
/// one there.
private final class IssuingAuthenticator: Authenticator {
    struct Token: AuthenticationCredential, Sendable {
        let value: String
        var requiresRefresh: Bool { false }
    }

    private struct Issued: Decodable {
        let token: String
    }

    let server: LupineTestServer
    let key = "openapi-\(UUID().uuidString)"
    let refreshes = Locked(0)

    init(server: LupineTestServer) {
        self.server = server
    }

    func apply(_ credential: Token, to urlRequest: inout URLRequest) {
        urlRequest.headers.add(.authorization(bearerToken: credential.value))
    }

    func refresh(_ credential: Token, for session: Session, completion: @escaping @Sendable (Result<Token, any Error>) -> Void) {
        refreshes.withValue { $0 += 1 }
        AF.request(server.url("/token/issue?key=\(key)")).validate().responseDecodable(of: Issued.self) { response in
            completion(response.result.map { Token(value: $0.token) }.mapError { $0 })
        }
    }

    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error) -> Bool {
        response.statusCode == 401
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Token) -> Bool {
        urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.value).value
    }
}
