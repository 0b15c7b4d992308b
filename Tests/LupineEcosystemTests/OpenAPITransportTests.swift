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

/// A client written the way swift-openapi-generator writes one: it builds an `HTTPRequest` per
/// operation, hands it to its `ClientTransport`, and decodes the documented responses.
struct EchoClient {
    let serverURL: URL
    let transport: any ClientTransport

    /// The `/anything` echo, decoded.
    struct Echo: Decodable, Sendable {
        let method: String
        let args: [String: String]
        let headers: [String: String]
        let json: Greeting?
        let url: String

        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    struct Greeting: Codable, Sendable, Equatable {
        let name: String
    }

    enum Output: Sendable {
        case ok(Echo)
        case undocumented(statusCode: Int, body: Data)
    }

    /// `POST /anything/greetings?lang=...` with a JSON body.
    func createGreeting(_ greeting: Greeting, lang: String, operationID: String = "createGreeting") async throws -> Output {
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/anything/greetings?lang=\(lang)")
        request.headerFields[.contentType] = "application/json; charset=utf-8"
        request.headerFields[.accept] = "application/json"
        let body = HTTPBody(try JSONEncoder().encode(greeting))
        return try await decode(transport.send(request, body: body, baseURL: serverURL, operationID: operationID))
    }

    /// `GET` of any path, answered by whatever the test server does there.
    func get(_ path: String) async throws -> Output {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
        return try await decode(transport.send(request, body: nil, baseURL: serverURL, operationID: "get"))
    }

    private func decode(_ answer: (HTTPResponse, HTTPBody?)) async throws -> Output {
        let (response, body) = answer
        var data = Data()
        if let body { data = try await Data(collecting: body, upTo: 1 << 20) }
        guard response.status == .ok else { return .undocumented(statusCode: response.status.code, body: data) }
        return .ok(try JSONDecoder().decode(Echo.self, from: data))
    }
}

@Suite struct OpenAPITransportTests {
    private func client(_ server: LupineTestServer, session: Session = .default,
                        configuration: LupineClientTransport.Configuration = .init()) throws -> EchoClient {
        let url = try #require(URL(string: server.url("/")))
        return EchoClient(serverURL: url, transport: LupineClientTransport(session: session, configuration: configuration))
    }

    @Test func sendsPathQueryHeadersAndBodyAndDecodesTheResponse() async throws {
        let server = try await testServer()
        let output = try await client(server).createGreeting(.init(name: "Lupine"), lang: "fr%20CA")
        guard case let .ok(echo) = output else {
            Issue.record("expected 200, got \(output)")
            return
        }
        #expect(echo.method == "POST")
        #expect(echo.args == ["lang": "fr CA"])
        #expect(echo.json == .init(name: "Lupine"))
        #expect(echo.header("Content-Type") == "application/json; charset=utf-8")
        #expect(echo.url.hasSuffix("/anything/greetings?lang=fr%20CA"))
    }

    @Test func keepsTheBasePathOfTheServerURL() async throws {
        let server = try await testServer()
        let base = try #require(URL(string: server.url("/anything/v2")))
        let client = EchoClient(serverURL: base, transport: LupineClientTransport())
        guard case let .ok(echo) = try await client.get("/items?page=2") else {
            Issue.record("expected 200")
            return
        }
        #expect(echo.url.hasSuffix("/anything/v2/items?page=2"))
        #expect(echo.args == ["page": "2"])
    }

    @Test func anUnacceptableStatusIsHandedToTheClientNotThrown() async throws {
        let server = try await testServer()
        let output = try await client(server).get("/status/404")
        guard case let .undocumented(statusCode, _) = output else {
            Issue.record("expected the 404 response, got \(output)")
            return
        }
        #expect(statusCode == 404)
    }

    @Test func headResponsesHaveNoBody() async throws {
        let server = try await testServer()
        let transport = LupineClientTransport()
        let base = try #require(URL(string: server.url("/")))
        let (response, body) = try await transport.send(HTTPRequest(method: .head, scheme: nil, authority: nil, path: "/get"),
                                                        body: nil, baseURL: base, operationID: "head")
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentType] == "application/json")
        #expect(body == nil)
    }

    @Test func failuresWithoutAResponseAreThrownAsTheRequestsAFError() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let base = try #require(URL(string: refusing.url("")))
        let client = EchoClient(serverURL: base, transport: LupineClientTransport())
        await #expect {
            _ = try await client.get("/get")
        } throws: { error in
            (error as? AFError)?.sessionTaskURLErrorCode == .cannotConnectToHost
        }
    }

    @Test func theSessionsRetryPolicyRetriesAnUnacceptableStatus() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let session = Session(interceptor: retry)
        let key = UUID().uuidString
        let output = try await client(server, session: session).get("/fail/2?key=\(key)&status=503")
        guard case let .ok(echo) = output else {
            Issue.record("expected the third attempt's 200, got \(output)")
            return
        }
        #expect(echo.args["key"] == key)
    }

    @Test func theLastUnacceptableResponseIsReturnedOnceRetriesRunOut() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 1, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let attempts = Locked(0)
        let monitor = ClosureEventMonitor()
        monitor.requestDidResumeExchange = { _ in attempts.withValue { $0 += 1 } }
        let session = Session(interceptor: retry, eventMonitors: [monitor])
        let output = try await client(server, session: session).get("/fail/5?key=\(UUID().uuidString)&status=503")
        guard case let .undocumented(statusCode, body) = output else {
            Issue.record("expected the 503, got \(output)")
            return
        }
        #expect(statusCode == 503)
        #expect(String(decoding: body, as: UTF8.self).contains("failure 2 of 5"))
        #expect(await waitUntil { attempts.current == 2 })
    }

    @Test func withoutValidationNoStatusIsRetried() async throws {
        let server = try await testServer()
        let retry = RetryPolicy(retryLimit: 2, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let session = Session(interceptor: retry)
        let output = try await client(server, session: session, configuration: .init(acceptableStatusCodes: nil))
            .get("/fail/1?key=\(UUID().uuidString)&status=503")
        guard case let .undocumented(statusCode, _) = output else {
            Issue.record("expected the first 503, got \(output)")
            return
        }
        #expect(statusCode == 503)
    }

    @Test func theTransportsInterceptorAdaptsEveryOperation() async throws {
        let server = try await testServer()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.headers.add(name: "X-Api-Key", value: "k-123")
            completion(.success(request))
        }
        let output = try await client(server, configuration: .init(interceptor: adapter)).get("/anything")
        guard case let .ok(echo) = output else {
            Issue.record("expected 200, got \(output)")
            return
        }
        #expect(echo.header("X-Api-Key") == "k-123")
    }

    @Test func theSessionsMonitorsSeeEveryOperation() async throws {
        let server = try await testServer()
        let sent = Locked<[String]>([])
        let monitor = ClosureEventMonitor()
        monitor.requestDidCreateURLRequest = { _, urlRequest in
            sent.withValue { $0.append("\(urlRequest.httpMethod ?? "") \(urlRequest.url?.path ?? "")") }
        }
        let session = Session(eventMonitors: [monitor])
        _ = try await client(server, session: session).createGreeting(.init(name: "a"), lang: "en")
        #expect(await waitUntil { sent.current == ["POST /anything/greetings"] })
    }
}
