import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// The hardening promises of issue #6: no input from the caller and no byte from the network
/// crashes the process, leaks a credential or goes unreported; each ends in one precise `AFError`
/// and leaves the Session usable. The tables below are the list; promises that need assertions of
/// their own are tested where the feature lives, and named here:
///
/// - `Authorization`, `Cookie` and `Proxy-Authorization` never follow a redirect to another
///   origin (another port of 127.0.0.1, a second LupineTestServer): RedirectTests
///   `authorizationAndCookieAreDroppedOnCrossOriginRedirect` (302 and 307) and
///   `defaultPortIsTheSameOriginAsNoPort`.
/// - HTTPS never redirects to HTTP: RedirectTests `httpsToHTTPRedirectIsRefused`, on the redirect
///   rule itself (`URLError(.appTransportSecurityRequiresSecureConnection)`); an end-to-end test
///   needs the TLS test server of issue #6 items 1-2.
/// - More than 16 redirects: RedirectTests `moreThanSixteenRedirectsFailWithTooManyRedirects`; a
///   redirect to itself is in the table.
/// - A body announced beyond the in-memory bound fails before it is read: ResourceTests
///   `bodyAnnouncedLargerThanTheMemoryBoundFailsBeforeReadingIt`.
/// - A decompression bomb (1 GiB of zeros in 1 MiB of gzip) fails with
///   `URLError(.cannotDecodeContentData)` without growing memory: CompressionTests
///   `gzipBombFailsWithCannotDecodeContentDataWithoutGrowingMemory`.
@Suite struct HardeningTests {
    // MARK: Refused before anything is sent

    /// Where a forbidden header field enters the request.
    enum FieldSource: String, Sendable {
        /// `headers:` of `Session.request`.
        case headersArgument
        /// A `requestModifier` setting `allHTTPHeaderFields`.
        case requestModifier
        /// A `URLRequestConvertible` building the URLRequest itself.
        case convertible
        /// `URLSessionConfiguration.httpAdditionalHeaders`.
        case sessionConfiguration
    }

    struct RefusedField: CustomTestStringConvertible, Sendable {
        let name: String
        let value: String
        let source: FieldSource
        var testDescription: String { "\(source.rawValue): \(name.debugDescription): \(value.debugDescription)" }
    }

    static let refusedFields: [RefusedField] = [
        RefusedField(name: "X-Bad", value: "a\r\nInjected: b", source: .headersArgument),
        RefusedField(name: "X-Bad", value: "a\r\nb", source: .requestModifier),
        RefusedField(name: "X-Bad", value: "a\nb", source: .convertible),
        RefusedField(name: "X-Bad", value: "a\rb", source: .requestModifier),
        RefusedField(name: "X-Bad", value: "a\u{0}b", source: .headersArgument),
        RefusedField(name: "X-Bad", value: "a\u{0}b", source: .requestModifier),
        RefusedField(name: "X-Bad", value: "a\r\nX-Injected: 1", source: .sessionConfiguration),
        RefusedField(name: "X Bad:", value: "secret-1", source: .requestModifier),
        RefusedField(name: "X-Bad\r\nInjected", value: "secret-2", source: .requestModifier),
        RefusedField(name: "X-Bad\u{0}", value: "secret-3", source: .convertible),
        RefusedField(name: "", value: "secret-4", source: .requestModifier),
    ]

    @Test(arguments: refusedFields)
    func headerFieldWithCRLFOrNULIsRefusedBeforeSending(_ field: RefusedField) async throws {
        let server = try await testServer()
        let path = "/anything/refused-field-\(UUID().uuidString)"
        let url = try #require(URL(string: server.url(path)))
        var session = Session()
        let request: DataRequest
        switch field.source {
        case .headersArgument:
            request = session.request(url, headers: [HTTPHeader(name: field.name, value: field.value)])
        case .requestModifier:
            request = session.request(url, requestModifier: { $0.allHTTPHeaderFields = [field.name: field.value] })
        case .convertible:
            request = session.request(FieldSettingConvertible(url: url, fields: [field.name: field.value]))
        case .sessionConfiguration:
            let configuration = URLSessionConfiguration.af.default
            configuration.httpAdditionalHeaders = [field.name: field.value]
            session = Session(configuration: configuration)
            request = session.request(url)
        }
        let response = await request.serializingData().response

        guard case let .createURLRequestFailed(underlying)? = response.error,
              let headerError = underlying as? InvalidHTTPHeaderError
        else {
            Issue.record("expected createURLRequestFailed(InvalidHTTPHeaderError), got \(String(describing: response.error))")
            return
        }
        #expect(headerError.name == field.name)
        #expect(!headerError.description.contains(field.value), "the value (maybe a credential) must not be reported")
        #expect(response.response == nil)
        #expect(server.hits(for: path) == 0)
        // A Session whose configuration holds the bad field refuses every request; others go on.
        #expect(await (field.source == .sessionConfiguration ? Session() : session).performsNormalRequest(on: server))
    }

    /// The Session's own fields are checked once, when it is made: every request sending them
    /// alone is refused with the first bad one by name, and so is one sending fields of its own
    /// beside them; a request replacing the bad one with its own value is sent.
    @Test func aBadSessionFieldRefusesEveryRequestThatSendsIt() async throws {
        let server = try await testServer()
        let path = "/anything/bad-session-field-\(UUID().uuidString)"
        let configuration = URLSessionConfiguration.af.default
        configuration.httpAdditionalHeaders = ["X-Zeta": "z\r\nInjected: 1", "X-Alpha": "a\u{0}"]
        let session = Session(configuration: configuration)
        for headers: HTTPHeaders in [[], [], ["X-Own": "fine"]] {
            let response = await session.request(server.url(path), headers: headers).serializingData().response
            guard case let .createURLRequestFailed(underlying)? = response.error,
                  let headerError = underlying as? InvalidHTTPHeaderError
            else {
                Issue.record("expected createURLRequestFailed(InvalidHTTPHeaderError), got \(String(describing: response.error))")
                continue
            }
            #expect(headerError.name == "X-Alpha")
        }
        #expect(server.hits(for: path) == 0)
        let replaced = await session.request(server.url(path), headers: ["X-Alpha": "a", "X-Zeta": "z"]).serializingData().response
        #expect(replaced.response?.statusCode == 200)
        #expect(server.hits(for: path) == 1)
    }

    @Test(arguments: ["GET /anything/smuggled HTTP/1.1\r\nHost: x\r\n\r\nGET", "GET\r\n", "GE\u{0}T", "BAD METHOD", ""])
    func methodThatIsNotATokenIsRefusedBeforeSending(_ method: String) async throws {
        let server = try await testServer()
        let path = "/anything/refused-method-\(UUID().uuidString)"
        let session = Session()
        let response = await session.request(server.url(path), method: HTTPMethod(rawValue: method)).serializingData().response

        guard case let .createURLRequestFailed(underlying)? = response.error,
              let methodError = underlying as? InvalidHTTPMethodError
        else {
            Issue.record("expected createURLRequestFailed(InvalidHTTPMethodError), got \(String(describing: response.error))")
            return
        }
        #expect(methodError.method == method)
        #expect(response.response == nil)
        #expect(server.hits(for: path) == 0)
        #expect(server.hits(for: "/anything/smuggled") == 0)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func extensionMethodThatIsATokenIsSent() async throws {
        let server = try await testServer()
        let echo = try await AF.request(server.url("/anything"), method: HTTPMethod(rawValue: "PURGE"))
            .serializingDecodable(HTTPBinResponse.self).value
        #expect(echo.method == "PURGE")
    }

    // MARK: URLs that are not HTTP URLs

    struct RefusedURL: CustomTestStringConvertible, Sendable {
        let url: String
        let expected: ExpectedFailure
        var testDescription: String { url.debugDescription }
    }

    static let refusedURLs: [RefusedURL] = [
        RefusedURL(url: "", expected: .invalidURL),
        RefusedURL(url: "http://exa mple.com", expected: .invalidURL),
        RefusedURL(url: "ftp://127.0.0.1/file", expected: .urlError(.unsupportedURL)),
        RefusedURL(url: "file:///etc/passwd", expected: .urlError(.unsupportedURL)),
        RefusedURL(url: "mailto:someone@example.com", expected: .urlError(.unsupportedURL)),
        // (`data:` URLs are answered, as by URLSession on Linux: see URLProtocolTests.)
        RefusedURL(url: "ws://127.0.0.1/get", expected: .urlError(.unsupportedURL)),
        // Some HTTP clients would connect to a Unix domain socket for these.
        RefusedURL(url: "http+unix://%2Ftmp%2Flupine.sock/get", expected: .urlError(.unsupportedURL)),
        RefusedURL(url: "unix:///tmp/lupine.sock", expected: .urlError(.unsupportedURL)),
        RefusedURL(url: "http:///get", expected: .urlError(.badURL)),
        RefusedURL(url: "http:get", expected: .urlError(.badURL)),
        RefusedURL(url: "/get", expected: .urlError(.unsupportedURL)),
    ]

    @Test(arguments: refusedURLs)
    func urlThatIsNotAnHTTPURLFailsCleanlyAndSendsNothing(_ refused: RefusedURL) async throws {
        let session = Session()
        let request = session.request(refused.url)
        let response = await request.serializingData().response

        ExpectedFailure.check(response.error, is: refused.expected)
        if case let .invalidURL(url)? = response.error {
            #expect(url as? String == refused.url)
            #expect(response.request == nil)
        }
        #expect(response.response == nil)
        #expect(request.performedRequests.isEmpty)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    // MARK: What the server sends

    struct ServerFault: CustomTestStringConvertible, Sendable {
        let path: String
        let expected: ExpectedFailure
        var testDescription: String { path }
    }

    static let serverFaults: [ServerFault] = [
        ServerFault(path: "/fault/malformed-status", expected: .urlError(.badServerResponse)),
        ServerFault(path: "/fault/garbage", expected: .urlError(.badServerResponse)),
        // SwiftNIO's HTTPDecoder refuses a field or a head beyond 80 KiB (HTTPParserError.headerOverflow).
        ServerFault(path: "/fault/oversized-headers", expected: .urlError(.badServerResponse)),
        ServerFault(path: "/fault/endless-headers", expected: .urlError(.badServerResponse)),
        ServerFault(path: "/fault/wrong-content-length", expected: .urlError(.networkConnectionLost)),
        ServerFault(path: "/fault/close-mid-body", expected: .urlError(.networkConnectionLost)),
        ServerFault(path: "/fault/truncated-chunk", expected: .urlError(.networkConnectionLost)),
        ServerFault(path: "/fault/bad-chunk-size", expected: .urlError(.badServerResponse)),
        // URLSession reports a TCP reset before any response byte as -1005 too (RetryPolicy retries it).
        ServerFault(path: "/fault/reset", expected: .urlError(.networkConnectionLost)),
        ServerFault(path: "/fault/redirect-loop", expected: .urlError(.httpTooManyRedirects)),
        // A redirect to a scheme Lupine cannot follow is not followed: the 3xx is the response.
        ServerFault(path: "/redirect-to?url=ftp%3A%2F%2F127.0.0.1%2Ffile", expected: .unacceptableStatusCode(302)),
        ServerFault(path: "/redirect-to?url=file%3A%2F%2F%2Fetc%2Fpasswd", expected: .unacceptableStatusCode(302)),
    ]

    @Test(arguments: serverFaults)
    func brokenResponseFailsWithPreciseError(_ fault: ServerFault) async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url(fault.path)).validate().serializingData().response

        ExpectedFailure.check(response.error, is: fault.expected)
        #expect(await session.performsNormalRequest(on: server))
    }

    /// The body ends where Content-Length says; the bytes after it (here a whole second response)
    /// are never read as the answer to a later request on the same connection.
    @Test func bytesBeyondContentLengthAreNotTakenAsTheNextResponse() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/extra-bytes")).serializingString().response
        #expect(response.error == nil)
        #expect(response.value == "hello")

        for _ in 0..<3 {
            let next = await session.request(server.url("/get"), requestModifier: { $0.timeoutInterval = 10 })
                .serializingString().response
            #expect(next.value != "smuggled")
            // The connection is dropped for its stray bytes; a request racing with that drop on a
            // loaded machine sees it as a lost connection, never as the stray response.
            if let error = next.error {
                #expect(error.sessionTaskURLErrorCode == .networkConnectionLost)
            } else {
                #expect(next.response?.statusCode == 200)
            }
        }
        #expect(await session.performsNormalRequest(on: server))
    }

    // MARK: Endless bodies

    /// A chunked body that never ends is collected only up to the in-memory bound (512 MiB; lowered
    /// here so the test stays small), then fails with `.dataLengthExceedsMaximum`.
    @Test func endlessChunkedBodyToMemoryStopsAtTheBound() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let request = session.request(server.url("/fault/endless-chunked"))
        request.dataState.withLock { $0.maximumSize = 4 << 20 }
        request.resume()
        let response = await request.serializingData().response

        ExpectedFailure.check(response.error, is: .urlError(.dataLengthExceedsMaximum))
        #expect(response.response?.statusCode == 200)
        #expect((request.data?.count ?? 0) <= (4 << 20) + (64 << 10) + 16)
        let next = session.request(server.url("/get"))
        next.resume()
        #expect(await next.serializingData().response.error == nil)
    }

    /// A stream may read as much of an endless body as it wants and stop by cancelling.
    @Test func endlessChunkedBodyCanBeConsumedByAStream() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.streamRequest(server.url("/fault/endless-chunked"))
        var received = 0
        var completionError: AFError?
        for await stream in request.streamTask().streamingData(automaticallyCancelling: true) {
            switch stream.event {
            case let .stream(.success(chunk)):
                received += chunk.count
                if received >= 16 << 20, !request.isCancelled { request.cancel() }
            case let .complete(completion):
                completionError = completion.error
            }
        }
        #expect(received >= 16 << 20)
        #expect(completionError?.isExplicitlyCancelledError == true)
        #expect(await session.performsNormalRequest(on: server))
    }
}

/// The one failure a hardening case must end in.
enum ExpectedFailure: Sendable, CustomStringConvertible {
    /// `AFError.invalidURL`.
    case invalidURL
    /// `AFError.sessionTaskFailed` wrapping a `URLError` with this code.
    case urlError(URLError.Code)
    /// `AFError.responseValidationFailed(.unacceptableStatusCode)` with this code.
    case unacceptableStatusCode(Int)

    var description: String {
        switch self {
        case .invalidURL: "invalidURL"
        case let .urlError(code): "sessionTaskFailed(URLError \(code.rawValue))"
        case let .unacceptableStatusCode(code): "responseValidationFailed(unacceptableStatusCode: \(code))"
        }
    }

    static func check(_ error: AFError?, is expected: ExpectedFailure, sourceLocation: SourceLocation = #_sourceLocation) {
        let matches = switch (expected, error) {
        case (.invalidURL, .invalidURL?): true
        case let (.urlError(code), error?): error.sessionTaskURLErrorCode == code
        case let (.unacceptableStatusCode(code), .responseValidationFailed(.unacceptableStatusCode(actual))?): code == actual
        default: false
        }
        #expect(matches, "expected \(expected), got \(String(describing: error))", sourceLocation: sourceLocation)
    }
}

/// A `URLRequestConvertible` that sets header fields on the URLRequest it builds.
private struct FieldSettingConvertible: URLRequestConvertible {
    let url: URL
    let fields: [String: String]

    func asURLRequest() throws -> URLRequest {
        var request = URLRequest(url: url)
        request.allHTTPHeaderFields = fields
        return request
    }
}
