import Foundation
import Lupine
import LupineTestServer
import Testing

/// `validate(...)` on data requests, against real status codes and content types.
@Suite struct ValidationTests {
    @Test func statusCodeOutsideTheAcceptableRangeFailsWithItsCode() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/status/404")).validate(statusCode: 200..<300).serializingData().response
        #expect(response.error?.isResponseValidationError == true)
        #expect(response.error?.responseCode == 404)
    }

    @Test func defaultValidationAcceptsMatchingAcceptHeader() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/json"), headers: ["Accept": "application/json"])
            .validate().serializingData().response
        #expect(response.error == nil)
    }

    @Test func contentTypeMismatchReportsBothSides() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/xml")).validate(contentType: ["application/json"]).serializingData().response
        guard case let .responseValidationFailed(reason: .unacceptableContentType(acceptable, actual))? = response.error else {
            Issue.record("expected unacceptableContentType, got \(String(describing: response.error))")
            return
        }
        #expect(acceptable == ["application/json"])
        #expect(actual == "application/xml")
    }

    @Test func wildcardContentTypesMatch() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/json")).validate(contentType: ["application/*", "text/html"]).serializingData().response
        #expect(response.error == nil)
    }

    @Test func emptyBodyPassesTheContentTypeCheck() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/status/200")).validate(contentType: ["application/json"])
            .serializingData(emptyResponseCodes: [200]).response
        #expect(response.error == nil)
    }

    @Test func customValidationErrorIsWrappedUnlessItIsAnAFError() async throws {
        struct Teapot: Error {}
        let server = try await testServer()
        let response = await AF.request(server.url("/get"))
            .validate { _, _, _ in .failure(Teapot()) }
            .serializingData().response
        guard case let .responseValidationFailed(reason: .customValidationFailed(error))? = response.error else {
            Issue.record("expected customValidationFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is Teapot)
    }

    @Test func validatorsRunInOrderAndStopAtTheFirstFailure() async throws {
        let server = try await testServer()
        let calls = Locked<[Int]>([])
        let response = await AF.request(server.url("/status/418"))
            .validate { _, _, _ in calls.withValue { $0.append(1) }; return .success(()) }
            .validate(statusCode: [200])
            .validate { _, _, _ in calls.withValue { $0.append(3) }; return .success(()) }
            .serializingData().response
        #expect(calls.current == [1])
        #expect(response.error?.responseCode == 418)
    }

    @Test func validationSeesTheBody() async throws {
        let server = try await testServer()
        let seen = Locked<Int>(0)
        _ = await AF.request(server.url("/bytes/100"))
            .validate { _, _, data in seen.withValue { $0 = data?.count ?? -1 }; return .success(()) }
            .serializingData().response
        #expect(seen.current == 100)
    }
}
