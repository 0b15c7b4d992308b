import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Lupine

// MARK: - Fixtures

private let resourceURL = URL(string: "https://example.com/items?page=2")!

private struct TransformError: Error, Equatable {
    let id: Int
}

private func makeDataResponse<Success, Failure>(_ result: Result<Success, Failure>) -> DataResponse<Success, Failure> {
    var request = URLRequest(url: resourceURL)
    request.httpMethod = "POST"
    let response = HTTPURLResponse(url: resourceURL, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: [:])
    return DataResponse(request: request, response: response, data: Data("raw".utf8), metrics: nil,
                        serializationDuration: 0.25, result: result)
}

private func makeDownloadResponse<Success, Failure>(_ result: Result<Success, Failure>)
    -> DownloadResponse<Success, Failure> {
    let response = HTTPURLResponse(url: resourceURL, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
    return DownloadResponse(request: URLRequest(url: resourceURL), response: response,
                            fileURL: URL(fileURLWithPath: "/tmp/file.bin"), resumeData: Data([1, 2]),
                            metrics: nil, serializationDuration: 0.5, result: result)
}

// MARK: - DataResponse

@Suite("DataResponse")
struct DataResponseTests {
    @Test func valueAndErrorReflectTheResult() {
        let success = makeDataResponse(Result<Int, TransformError>.success(7))
        #expect(success.value == 7)
        #expect(success.error == nil)
        let failure = makeDataResponse(Result<Int, TransformError>.failure(TransformError(id: 1)))
        #expect(failure.value == nil)
        #expect(failure.error == TransformError(id: 1))
    }

    @Test func descriptionIsTheResult() {
        #expect(makeDataResponse(Result<Int, TransformError>.success(7)).description == "success(7)")
    }

    @Test func mapTransformsTheValueAndKeepsTheMetadata() {
        let mapped = makeDataResponse(Result<Int, TransformError>.success(7)).map { "\($0 * 2)" }
        #expect(mapped.value == "14")
        #expect(mapped.request?.httpMethod == "POST")
        #expect(mapped.response?.statusCode == 201)
        #expect(mapped.data == Data("raw".utf8))
        #expect(mapped.metrics == nil)
        #expect(mapped.serializationDuration == 0.25)
    }

    @Test func mapKeepsAFailure() {
        let mapped = makeDataResponse(Result<Int, TransformError>.failure(TransformError(id: 2))).map { $0 + 1 }
        #expect(mapped.error == TransformError(id: 2))
    }

    @Test func tryMapTurnsAThrownErrorIntoTheFailure() {
        let response = makeDataResponse(Result<Int, TransformError>.success(7))
        #expect(response.tryMap { $0 + 1 }.value == 8)
        let failed = response.tryMap { _ -> Int in throw TransformError(id: 3) }
        #expect(failed.error as? TransformError == TransformError(id: 3))
        #expect(failed.data == Data("raw".utf8))
        let kept = makeDataResponse(Result<Int, TransformError>.failure(TransformError(id: 4))).tryMap { $0 }
        #expect(kept.error as? TransformError == TransformError(id: 4))
    }

    @Test func mapErrorTransformsTheFailure() {
        let response = makeDataResponse(Result<Int, TransformError>.failure(TransformError(id: 5)))
        let mapped = response.mapError { AFError.sessionTaskFailed(error: $0) }
        #expect(mapped.error?.underlyingError as? TransformError == TransformError(id: 5))
        #expect(mapped.serializationDuration == 0.25)
        #expect(makeDataResponse(Result<Int, TransformError>.success(1)).mapError { $0 }.value == 1)
    }

    @Test func tryMapErrorTurnsAThrownErrorIntoTheNewFailure() {
        let response = makeDataResponse(Result<Int, TransformError>.failure(TransformError(id: 6)))
        #expect(response.tryMapError { TransformError(id: $0.id + 1) }.error as? TransformError
            == TransformError(id: 7))
        let thrown = response.tryMapError { _ -> TransformError in throw TransformError(id: 8) }
        #expect(thrown.error as? TransformError == TransformError(id: 8))
        #expect(makeDataResponse(Result<Int, TransformError>.success(9)).tryMapError { $0 }.value == 9)
    }
}

// MARK: - DownloadResponse

@Suite("DownloadResponse")
struct DownloadResponseTests {
    @Test func valueAndErrorReflectTheResult() {
        #expect(makeDownloadResponse(Result<Int, TransformError>.success(3)).value == 3)
        #expect(makeDownloadResponse(Result<Int, TransformError>.failure(TransformError(id: 1))).error
            == TransformError(id: 1))
        #expect(makeDownloadResponse(Result<Int, TransformError>.success(3)).description == "success(3)")
    }

    @Test func mapFamilyKeepsFileURLResumeDataAndDuration() {
        let response = makeDownloadResponse(Result<Int, TransformError>.success(3))
        let mapped = response.map { $0 * 10 }
        #expect(mapped.value == 30)
        #expect(mapped.fileURL == URL(fileURLWithPath: "/tmp/file.bin"))
        #expect(mapped.resumeData == Data([1, 2]))
        #expect(mapped.serializationDuration == 0.5)
        #expect(response.tryMap { _ -> Int in throw TransformError(id: 2) }.error as? TransformError
            == TransformError(id: 2))
        #expect(response.tryMap { _ -> Int in throw TransformError(id: 2) }.resumeData == Data([1, 2]))

        let failure = makeDownloadResponse(Result<Int, TransformError>.failure(TransformError(id: 4)))
        #expect(failure.mapError { TransformError(id: $0.id * 2) }.error == TransformError(id: 8))
        #expect(failure.tryMapError { _ -> TransformError in throw TransformError(id: 9) }.error as? TransformError
            == TransformError(id: 9))
        #expect(failure.tryMapError { _ -> TransformError in throw TransformError(id: 9) }.fileURL
            == URL(fileURLWithPath: "/tmp/file.bin"))
    }
}

// MARK: - debugDescription

@Suite("Response debugDescription")
struct ResponseDebugDescriptionTests {
    @Test func withoutRequestOnlyTheResultIsPrinted() {
        let response = DataResponse<Int, TransformError>(request: nil, response: nil, data: nil, metrics: nil,
                                                         serializationDuration: 0, result: .success(1))
        #expect(response.debugDescription == "[Request]: None\n[Result]: success(1)")
        let download = DownloadResponse<Int, TransformError>(request: nil, response: nil, fileURL: nil,
                                                             resumeData: nil, metrics: nil,
                                                             serializationDuration: 0, result: .success(1))
        #expect(download.debugDescription == "[Request]: None\n[Result]: success(1)")
    }

    @Test func dataResponsePrintsRequestResponseDurationsAndResult() {
        var request = URLRequest(url: resourceURL)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("lupine", forHTTPHeaderField: "X-Client")
        request.setValue("*/*", forHTTPHeaderField: "Accept")
        request.httpBody = Data("{\n\"a\": 1\n}\n".utf8)
        let response = HTTPURLResponse(url: resourceURL, statusCode: 200, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Type": "text/plain", "Etag": "\"v1\""])
        let dataResponse = DataResponse<String, TransformError>(
            request: request, response: response, data: Data("  line one\nline two\n".utf8), metrics: nil,
            serializationDuration: 0.5, result: .success("ok"))

        #expect(dataResponse.debugDescription == """
        [Request]: POST https://example.com/items?page=2
            [Headers]:
                Accept: */*
                Content-Type: application/json
                X-Client: lupine
            [Body]:
                {
                "a": 1
                }
        [Response]:
            [Status Code]: 200
            [Headers]:
                Content-Type: text/plain
                Etag: "v1"
            [Body]:
                line one
                line two
        [Network Duration]: None
        [Serialization Duration]: 0.5s
        [Result]: success("ok")
        """)
    }

    @Test func bodiesWithoutTextualContentTypeOrTooLargeArePrintedAsByteCounts() {
        let request = URLRequest(url: resourceURL)
        let binary = HTTPURLResponse(url: resourceURL, statusCode: 200, httpVersion: nil,
                                     headerFields: ["Content-Type": "image/png"])
        let binaryResponse = DataResponse<Int, TransformError>(
            request: request, response: binary, data: Data(count: 12), metrics: nil, serializationDuration: 0,
            result: .success(1))
        #expect(binaryResponse.debugDescription.contains("\n    [Body]: 12 bytes\n"))

        let large = HTTPURLResponse(url: resourceURL, statusCode: 200, httpVersion: nil,
                                    headerFields: ["Content-Type": "application/json"])
        let largeResponse = DataResponse<Int, TransformError>(
            request: request, response: large, data: Data(repeating: 0x20, count: 100_001), metrics: nil,
            serializationDuration: 0, result: .success(1))
        #expect(largeResponse.debugDescription.contains("\n    [Body]: 100001 bytes\n"))

        let untyped = HTTPURLResponse(url: resourceURL, statusCode: 200, httpVersion: nil, headerFields: [:])
        let untypedResponse = DataResponse<Int, TransformError>(
            request: request, response: untyped, data: Data("text".utf8), metrics: nil, serializationDuration: 0,
            result: .success(1))
        #expect(untypedResponse.debugDescription.contains("\n    [Body]: 4 bytes\n"))
    }

    @Test func missingHeadersBodiesAndResponseArePrintedAsNone() {
        var request = URLRequest(url: resourceURL)
        request.httpMethod = "DELETE"
        let response = DataResponse<Int, TransformError>(request: request, response: nil, data: nil, metrics: nil,
                                                         serializationDuration: 0, result: .failure(TransformError(id: 1)))
        #expect(response.debugDescription == """
        [Request]: DELETE https://example.com/items?page=2
            [Headers]: None
            [Body]: None
        [Response]: None
        [Network Duration]: None
        [Serialization Duration]: 0.0s
        [Result]: \(Result<Int, TransformError>.failure(TransformError(id: 1)))
        """)
    }

    @Test func downloadResponseAddsFileURLAndResumeDataAndOmitsTheBody() {
        let response = HTTPURLResponse(url: resourceURL, statusCode: 206, httpVersion: "HTTP/1.1",
                                       headerFields: ["Content-Type": "text/plain"])
        let download = DownloadResponse<URL, TransformError>(
            request: URLRequest(url: resourceURL), response: response,
            fileURL: URL(fileURLWithPath: "/tmp/file.bin"), resumeData: Data([1, 2, 3]), metrics: nil,
            serializationDuration: 0.25, result: .success(URL(fileURLWithPath: "/tmp/file.bin")))

        #expect(download.debugDescription == """
        [Request]: GET https://example.com/items?page=2
            [Headers]: None
            [Body]: None
        [Response]:
            [Status Code]: 206
            [Headers]:
                Content-Type: text/plain
        [File URL]: /tmp/file.bin
        [Resume Data]: 3 bytes
        [Network Duration]: None
        [Serialization Duration]: 0.25s
        [Result]: success(\(URL(fileURLWithPath: "/tmp/file.bin")))
        """)
    }

    @Test func headersAreSortedCaseInsensitively() {
        #expect(ResponseDescription.describe(headers: ["b": "2", "B-Second": "3", "a": "1", "C": "4"]) == """
        [Headers]:
            a: 1
            b: 2
            B-Second: 3
            C: 4
        """)
    }

    @Test func downloadWithoutFileOrResumeDataPrintsNone() {
        let download = DownloadResponse<URL, TransformError>(
            request: URLRequest(url: resourceURL), response: nil, fileURL: nil, resumeData: nil, metrics: nil,
            serializationDuration: 0, result: .failure(TransformError(id: 2)))
        #expect(download.debugDescription.contains("\n[Response]: None\n[File URL]: None\n[Resume Data]: None\n"))
    }
}

// MARK: - Over loopback (Alamofire's ResponseTests)

/// Alamofire's `String.invalidURL`: a URL without scheme or host, which parses but cannot be sent.
private let unsendableURL = "invalid"

private enum WrappedError: Error {
    case wrapped(AFError)
}

private struct ThrownByTransform: Error {}

@Suite("Responses over loopback")
struct ResponsesOverLoopbackTests {
    @Test func unsendableURLKeepsTheRequestAndFailsAsASessionTaskError() async throws {
        let plain = await AF.request(unsendableURL, parameters: ["foo": "bar"]).serializingResponse(using: .data)
            .response
        let data = await AF.request(unsendableURL, parameters: ["foo": "bar"]).serializingData().response
        let string = await AF.request(unsendableURL, parameters: ["foo": "bar"]).serializingString().response
        let decodable = await AF.request(unsendableURL).serializingDecodable(HTTPBinResponse.self).response
        let unserialized: AFDataResponse<Data?> = await withCheckedContinuation { continuation in
            AF.request(unsendableURL, parameters: ["foo": "bar"]).response { continuation.resume(returning: $0) }
        }
        for (request, response, data, error) in [
            (plain.request, plain.response, plain.data, plain.error),
            (data.request, data.response, data.data, data.error),
            (string.request, string.response, string.data, string.error),
            (decodable.request, decodable.response, decodable.data, decodable.error),
            (unserialized.request, unserialized.response, unserialized.data, unserialized.error),
        ] {
            #expect(request != nil)
            #expect(response == nil)
            #expect(data == nil)
            #expect(error?.isSessionTaskError == true)
        }
    }

    @Test func mapFamilyOverARealResponse() async throws {
        let server = try await testServer()
        let decoded = await AF.request(server.url("/get"), parameters: ["foo": "bar"])
            .serializingDecodable(HTTPBinResponse.self).response
        let mapped = decoded.map { $0.args["foo"] == .string("bar") ? "bar" : "invalid" }
        #expect(mapped.value == "bar")
        #expect(mapped.request != nil && mapped.response != nil && mapped.data != nil)
        #expect(decoded.tryMap { $0.method }.value == "GET")

        let data = await AF.request(server.url("/get")).serializingData().response
        let thrown = data.tryMap { _ -> String in throw ThrownByTransform() }
        #expect(thrown.error is ThrownByTransform)
        #expect(thrown.response != nil && thrown.data != nil)
        #expect(data.mapError { WrappedError.wrapped($0) }.value == data.value)
        #expect(data.tryMapError { WrappedError.wrapped($0) }.value == data.value)

        let failed = await AF.request(unsendableURL).serializingData().response
        #expect(failed.map { _ in "ignored" }.error?.isSessionTaskError == true)
        #expect(failed.tryMap { _ in "ignored" }.error?.asAFError?.isSessionTaskError == true)
        guard case .wrapped = failed.mapError({ WrappedError.wrapped($0) }).error else {
            Issue.record("mapError should wrap the failure")
            return
        }
        #expect(failed.tryMapError { _ -> WrappedError in throw ThrownByTransform() }.error is ThrownByTransform)
        #expect(failed.tryMapError { WrappedError.wrapped($0) }.error is WrappedError)
        #expect(failed.tryMapError { WrappedError.wrapped($0) }.response == nil)
    }
}
