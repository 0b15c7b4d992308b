import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// `validate(...)` on data requests, against status codes and content types answered by a
/// URLProtocol stub, as Alamofire users test their validation.
@Suite struct ValidationTests {
    /// One per test, alive until the test ends: requests hold their Session weakly.
    let session = Session(configuration: .stubbed())
    let host = StubURLProtocol.host()

    private func stub(_ path: String, status: Int = 200, contentType: String? = nil, body: String = "") {
        host.stub(path, .respond(status: status, headers: contentType.map { ["Content-Type": $0] } ?? [:],
                                 chunks: body.isEmpty ? [] : [Data(body.utf8)]))
    }

    @Test func statusCodeOutsideTheAcceptableRangeFailsWithItsCode() async throws {
        stub("/missing", status: 404)
        let response = await session.request(host.url("/missing")).validate(statusCode: 200..<300).serializingData().response
        #expect(response.error?.isResponseValidationError == true)
        #expect(response.error?.responseCode == 404)
    }

    @Test func defaultValidationAcceptsMatchingAcceptHeader() async throws {
        stub("/json", contentType: "application/json", body: "{}")
        let response = await session.request(host.url("/json"), headers: ["Accept": "application/json"])
            .validate().serializingData().response
        #expect(response.error == nil)
    }

    /// The Accept header is split at its commas as Alamofire splits it (`components(separatedBy:)`):
    /// the types are matched without their spaces and parameters, and reported as written (sorted,
    /// as Alamofire sorts them in the error).
    @Test func defaultValidationReadsEveryTypeOfTheAcceptHeader() async throws {
        stub("/json", contentType: "application/json", body: "{}")
        let accepted = await session.request(host.url("/json"), headers: ["Accept": "text/html, application/json;q=0.9"])
            .validate().serializingData().response
        #expect(accepted.error == nil)

        let refused = await session.request(host.url("/json"), headers: ["Accept": "text/html, text/plain,"])
            .validate().serializingData().response
        guard case let .responseValidationFailed(reason: .unacceptableContentType(acceptable, actual))? = refused.error else {
            Issue.record("expected unacceptableContentType, got \(String(describing: refused.error))")
            return
        }
        #expect(acceptable == ["", " text/plain", "text/html"])
        #expect(actual == "application/json")
    }

    @Test func contentTypeMismatchReportsBothSides() async throws {
        stub("/xml", contentType: "application/xml", body: "<a/>")
        let response = await session.request(host.url("/xml")).validate(contentType: ["application/json"]).serializingData().response
        guard case let .responseValidationFailed(reason: .unacceptableContentType(acceptable, actual))? = response.error else {
            Issue.record("expected unacceptableContentType, got \(String(describing: response.error))")
            return
        }
        #expect(acceptable == ["application/json"])
        #expect(actual == "application/xml")
    }

    @Test func wildcardContentTypesMatch() async throws {
        stub("/json", contentType: "application/json", body: "{}")
        let response = await session.request(host.url("/json")).validate(contentType: ["application/*", "text/html"])
            .serializingData().response
        #expect(response.error == nil)
    }

    @Test func emptyBodyPassesTheContentTypeCheck() async throws {
        stub("/empty")
        let response = await session.request(host.url("/empty")).validate(contentType: ["application/json"])
            .serializingData(emptyResponseCodes: [200]).response
        #expect(response.error == nil)
    }

    @Test func customValidationErrorIsWrappedUnlessItIsAnAFError() async throws {
        struct Teapot: Error {}
        stub("/get", contentType: "application/json", body: "{}")
        let response = await session.request(host.url("/get"))
            .validate { _, _, _ in .failure(Teapot()) }
            .serializingData().response
        guard case let .responseValidationFailed(reason: .customValidationFailed(error))? = response.error else {
            Issue.record("expected customValidationFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is Teapot)
    }

    @Test func validatorsRunInOrderAndStopAtTheFirstFailure() async throws {
        stub("/teapot", status: 418)
        let calls = Locked<[Int]>([])
        let response = await session.request(host.url("/teapot"))
            .validate { _, _, _ in calls.withValue { $0.append(1) }; return .success(()) }
            .validate(statusCode: [200])
            .validate { _, _, _ in calls.withValue { $0.append(3) }; return .success(()) }
            .serializingData().response
        #expect(calls.current == [1])
        #expect(response.error?.responseCode == 418)
    }

    @Test func validationSeesTheBody() async throws {
        stub("/bytes", contentType: "application/octet-stream", body: String(repeating: "x", count: 100))
        let seen = Locked<Int>(0)
        _ = await session.request(host.url("/bytes"))
            .validate { _, _, data in seen.withValue { $0 = data?.count ?? -1 }; return .success(()) }
            .serializingData().response
        #expect(seen.current == 100)
    }
}

/// What a validation is handed over loopback: the request as the adapter left it and the response
/// of the attempt, and nothing once an earlier validation failed.
@Suite struct ValidationInputTests {
    @Test func aValidationSeesTheAdaptedRequestAndTheResponse() async throws {
        let server = try await testServer()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.setValue("adapted", forHTTPHeaderField: "X-Stage")
            completion(.success(request))
        }
        let session = Session(interceptor: adapter)
        let seen = Locked<[String?]>([])
        let request = session.request(server.url("/status/418"))
        let response = await request
            .validate { request, response, _ in
                seen.withValue { $0 = [request?.value(forHTTPHeaderField: "X-Stage"), String(response.statusCode)] }
                return .success(())
            }
            .validate()
            .validate { _, _, _ in
                seen.withValue { $0.append("after the failure") }
                return .success(())
            }
            .serializingData().response
        #expect(seen.current == ["adapted", "418"])
        #expect(response.error?.responseCode == 418)
        #expect(request.lastRequest?.value(forHTTPHeaderField: "X-Stage") == "adapted")
        withExtendedLifetime(session) {}
    }

    /// The head arrived, then the connection closed in the middle of the body: there is a
    /// response, and an error, so no validation runs.
    @Test func noValidationRunsAfterATransportError() async throws {
        let server = try await testServer()
        let session = Session()
        let ran = Locked(false)
        let response = await session.request(server.url("/fault/close-mid-body"))
            .validate { _, _, _ in ran.withValue { $0 = true }; return .success(()) }
            .serializingData().response
        #expect(response.response?.statusCode == 200)
        #expect(response.error?.isSessionTaskError == true)
        #expect(ran.current == false)
        withExtendedLifetime(session) {}
    }
}
