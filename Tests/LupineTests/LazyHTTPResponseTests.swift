import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// The response a request carries is made into an `HTTPURLResponse` only when read, with the
/// values corelibs gives for the same head: the same `allHeaderFields` for names in any case,
/// `X-` names, `WWW-Authenticate` and repeated fields, the same length and MIME type.
@Suite struct LazyHTTPResponseTests {
    /// Header lines of `/response-headers`: names in odd cases, `x-` names corelibs leaves alone,
    /// `www-authenticate` it spells its own way, and names repeated in different cases.
    static let trickyQuery = "x-lower=1&X-Upper=2&www-authenticate=Basic%20realm%3D%22a%22&cONTENT-tYPE=text/plain;%20charset=UTF-8"
        + "&set-cookie=a%3D1&Set-Cookie=b%3D2&etag=%22v1%22&X-Repeat=one&x-repeat=two&content-md5=abc&dnt=1&a=lone"

    /// corelibs' response for the head the request received.
    static func corelibsResponse(for request: Request) throws -> HTTPURLResponse {
        let head = try #require(request.responseHead)
        let url = try #require(request.response?.url)
        return try #require(HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion,
                                            headerFields: ResponseHeaderFields.dictionary(from: head.headerFields)))
    }

    @Test func allHeaderFieldsAreCorelibsValuesForTrickyNamesCasesAndRepeats() async throws {
        let server = try await testServer()
        // No cookie storage: the Set-Cookie lines must not reach other tests' requests.
        let configuration = URLSessionConfiguration.af.default
        configuration.httpCookieStorage = nil
        let session = Session(configuration: configuration)
        let request = session.request(server.url("/response-headers?\(Self.trickyQuery)"))
        let response = try #require(await request.serializingData().response.response)
        let expected = try Self.corelibsResponse(for: request)

        let made = response.allHeaderFields as? [String: String]
        #expect(made == (expected.allHeaderFields as? [String: String]))
        #expect(made?["X-Repeat"] == "one, two")
        #expect(made?["x-lower"] == "1")
        #expect(made?["WWW-Authenticate"] == "Basic realm=\"a\"")
        #expect(made?["Set-Cookie"] == "a=1, b=2")
        #expect(made?["Content-Md5"] == "abc")
        #expect(response.value(forHTTPHeaderField: "set-cookie") == expected.value(forHTTPHeaderField: "set-cookie"))
        #expect(response.expectedContentLength == expected.expectedContentLength)
        #expect(response.mimeType == expected.mimeType)
        #expect(response.mimeType == "text/plain")
        #expect(response.textEncodingName == expected.textEncodingName)
        #expect(response.statusCode == 200)
    }

    @Test func theResponseIsMadeOnceAndSharedByEveryReader() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/get"))
        let dataResponse = await request.serializingData().response
        let first = try #require(request.response)
        #expect(request.response === first)
        #expect(dataResponse.response === first)
    }

    @Test func aResponseNobodyReadsIsNeverMade() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/bytes/64"))
        let value = try await request.validate().serializingData().value
        #expect(value.count == 64)
        // Validation, serialization and the default monitor needed no HTTPURLResponse.
        let lazy = try #require(request.lazyResponse)
        #expect(!lazy.isMade)
        #expect(request.response?.statusCode == 200)
        #expect(lazy.isMade)
    }

    @Test(arguments: [
        ([HTTPHeader(name: "Content-Length", value: "64")], Int64(64)),
        ([HTTPHeader(name: "content-length", value: " 64")], Int64(-1)),
        ([HTTPHeader(name: "Content-Length", value: "64"), HTTPHeader(name: "CONTENT-LENGTH", value: "64")], Int64(-1)),
        ([HTTPHeader(name: "Content-Length", value: "-5")], Int64(-5)),
        ([HTTPHeader(name: "X-Other", value: "1")], Int64(-1)),
    ])
    func expectedContentLengthIsCorelibs(fields: [HTTPHeader], expected: Int64) throws {
        let url = try #require(URL(string: "https://example.com/a"))
        let head = TransportResponseHead(statusCode: 200, headerFields: fields)
        let lazy = LazyHTTPResponse(url: url, head: head)
        let corelibs = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                    headerFields: ResponseHeaderFields.dictionary(from: fields)))
        #expect(lazy.expectedContentLength == corelibs.expectedContentLength)
        #expect(lazy.expectedContentLength == expected)
    }

    @Test func aValidationFailureStillReportsTheResponsesContentType() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/response-headers?Content-Type=text/html"))
            .validate(contentType: ["application/json"]).serializingData().response
        guard case let .responseValidationFailed(reason: .unacceptableContentType(acceptable, actual))? = response.error else {
            Issue.record("expected an unacceptable content type, got \(String(describing: response.error))")
            return
        }
        #expect(acceptable == ["application/json"])
        #expect(actual == "text/html")
    }
}
