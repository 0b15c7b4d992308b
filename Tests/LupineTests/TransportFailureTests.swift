import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// What the caller sees when the connection or the server's bytes go wrong: the `URLError` code
/// URLSession reports for the same failure, inside `AFError.sessionTaskFailed`; and the Session
/// keeps working afterwards.
@Suite struct TransportFailureTests {
    // MARK: Before anything is sent

    @Test(arguments: ["http://exa mple.com", ""])
    func invalidURLStringFailsWithInvalidURLAndSendsNothing(_ urlString: String) async throws {
        let session = Session()
        let request = session.request(urlString)
        let response = await request.serializingData().response

        guard case let .invalidURL(url)? = response.error else {
            Issue.record("expected AFError.invalidURL, got \(String(describing: response.error))")
            return
        }
        #expect(url as? String == urlString)
        #expect(response.request == nil)
        #expect(response.response == nil)
        #expect(request.performedRequests.isEmpty)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    @Test func unsupportedSchemeFailsWithUnsupportedURLAndSendsNothing() async throws {
        let session = Session()
        let request = session.request("ftp://127.0.0.1/file")
        let response = await request.serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .unsupportedURL)
        #expect(request.performedRequests.isEmpty)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    /// A method is written into the request line: one holding CR LF would smuggle a second request
    /// onto the connection, so anything but an RFC 9110 token is refused before sending.
    @Test func methodThatIsNotATokenIsRefusedBeforeSending() async throws {
        let server = try await testServer()
        let id = UUID().uuidString
        let smuggled = "GET /anything/smuggled-\(id) HTTP/1.1\r\nHost: x\r\n\r\nGET"
        let session = Session()
        for method in [smuggled, "BAD METHOD", ""] {
            let response = await session.request(server.url("/anything/method-\(id)"), method: HTTPMethod(rawValue: method))
                .serializingData().response
            guard case .createURLRequestFailed? = response.error else {
                Issue.record("\(method.debugDescription): expected createURLRequestFailed, got \(String(describing: response.error))")
                continue
            }
            #expect(response.response == nil)
        }
        #expect(server.hits(for: "/anything/method-\(id)") == 0)
        #expect(server.hits(for: "/anything/smuggled-\(id)") == 0)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func extensionMethodThatIsATokenIsSent() async throws {
        let server = try await testServer()
        let echo = try await AF.request(server.url("/anything"), method: HTTPMethod(rawValue: "PURGE"))
            .serializingDecodable(HTTPBinResponse.self).value
        #expect(echo.method == "PURGE")
    }

    // MARK: Connecting

    @Test func closedPortFailsWithCannotConnectToHost() async throws {
        let port = try closedLoopbackPort()
        let session = Session()
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request("http://127.0.0.1:\(port)/get").serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        #expect(response?.response == nil)
        // Refused at once, as by URLSession: not retried until the 60 s connect timeout.
        #expect(elapsed < 2)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    @Test func concurrentRequestsToClosedPortAllFailAtOnce() async throws {
        let port = try closedLoopbackPort()
        let session = Session()
        var codes: [URLError.Code?] = []
        let elapsed = await secondsElapsed {
            codes = await withTaskGroup(of: URLError.Code?.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        await session.request("http://127.0.0.1:\(port)/get?n=\(index)").serializingData().response
                            .error?.sessionTaskURLErrorCode
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }

        #expect(codes == Array(repeating: .cannotConnectToHost, count: 12))
        #expect(elapsed < 2)
    }

    /// No network is available where the tests run; the `.invalid` top-level domain never resolves
    /// anyway (RFC 6761), so resolution fails fast either way.
    @Test func unresolvableHostFailsWithCannotFindHost() async throws {
        let session = Session()
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request("http://nonexistent.invalid/").serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .cannotFindHost)
        #expect(elapsed < 2)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    // MARK: Connection lost

    @Test func connectionClosedMidBodyFailsWithNetworkConnectionLost() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/close-mid-body")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(response.response?.statusCode == 200)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func bodyShorterThanContentLengthFailsWithNetworkConnectionLost() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/wrong-content-length")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(await session.performsNormalRequest(on: server))
    }

    /// URLSession reports a TCP reset before any response byte as `.networkConnectionLost` (-1005),
    /// the code `RetryPolicy` and `ConnectionLostRetryPolicy` retry on; Lupine does the same.
    @Test func connectionResetFailsWithNetworkConnectionLost() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/reset")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(response.response == nil)
        #expect(await session.performsNormalRequest(on: server))
    }

    // MARK: Bytes that are not HTTP

    @Test func malformedStatusLineFailsWithBadServerResponse() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/malformed-status")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .badServerResponse)
        #expect(response.response == nil)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func garbageInsteadOfResponseFailsWithBadServerResponse() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/garbage")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .badServerResponse)
        #expect(response.response == nil)
        #expect(await session.performsNormalRequest(on: server))
    }

    // MARK: Oversized headers

    /// AsyncHTTPClient parses response heads with SwiftNIO's `HTTPDecoder`, whose default limits
    /// (`NIOHTTPDecoderLimitConfiguration`) refuse a field or a head larger than 80 KiB with
    /// `HTTPParserError.headerOverflow`. A 256 KiB field is therefore a response Lupine cannot read:
    /// `.badServerResponse`, the code URLSession gives a response it cannot parse.
    @Test func responseHeadBeyondParserLimitFailsWithBadServerResponse() async throws {
        let server = try await testServer()
        let session = Session()
        let response = await session.request(server.url("/fault/oversized-headers")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .badServerResponse)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func largeResponseHeaderWithinParserLimitIsDelivered() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/fault/oversized-headers?kb=32")).serializingString().response

        #expect(response.error == nil)
        #expect(response.value == "ok\n")
        #expect(response.response?.value(forHTTPHeaderField: "X-Big")?.count == 32 * 1024)
    }

    // MARK: Many faults, one Session

    @Test func sessionSurvivesEveryFaultInARow() async throws {
        let server = try await testServer()
        let session = Session()
        let faults = ["close-mid-body", "wrong-content-length", "reset", "malformed-status", "garbage",
                      "oversized-headers"]
        for fault in faults {
            let response = await session.request(server.url("/fault/\(fault)")).serializingData().response
            #expect(response.error?.isSessionTaskError == true, "\(fault)")
        }
        let responses = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { await session.performsNormalRequest(on: server) } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(responses == Array(repeating: true, count: 8))
    }
}
