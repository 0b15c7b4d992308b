import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Lupine

// MARK: - Fixtures

private let downloadTestURL = URL(string: "https://example.com/download")!

private func downloadTestResponse(status: Int = 200) -> HTTPURLResponse {
    HTTPURLResponse(url: downloadTestURL, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])!
}

private struct DownloadPayload: Codable, Equatable, Sendable {
    let name: String
}

private struct DownloadMarkerError: Error, Equatable {
    let id: Int
}

/// The serialization reason inside `error`, when it is `AFError.responseSerializationFailed`.
private func serializationReason(_ error: any Error) -> AFError.ResponseSerializationFailureReason? {
    guard case let .responseSerializationFailed(reason) = error.asAFError else { return nil }
    return reason
}

private func isInputDataNilOrZeroLength(_ error: any Error) -> Bool {
    if case .inputDataNilOrZeroLength = serializationReason(error) { return true }
    return false
}

private func temporaryDownloadFile(containing data: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-\(UUID().uuidString)")
    try data.write(to: url)
    return url
}

// MARK: - Download serialization

@Suite("Download response serialization")
struct DownloadSerializationTests {
    @Test func dataSerializerReadsTheDownloadedFile() throws {
        let file = try temporaryDownloadFile(containing: Data("file body".utf8))
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try DataResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: file,
                                                               error: nil) == Data("file body".utf8))
        #expect(try StringResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: file,
                                                                 error: nil) == "file body")
    }

    @Test func decodableSerializerDecodesTheDownloadedFile() throws {
        let file = try temporaryDownloadFile(containing: Data(#"{"name":"disk"}"#.utf8))
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try DecodableResponseSerializer<DownloadPayload>()
            .serializeDownload(request: nil, response: nil, fileURL: file, error: nil) == DownloadPayload(name: "disk"))
    }

    @Test func emptyDownloadedFileFollowsTheEmptyRules() throws {
        let file = try temporaryDownloadFile(containing: Data())
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try DataResponseSerializer().serializeDownload(request: nil, response: downloadTestResponse(status: 204),
                                                               fileURL: file, error: nil) == Data())
        let error = #expect(throws: AFError.self) {
            try DataResponseSerializer().serializeDownload(request: nil, response: downloadTestResponse(),
                                                           fileURL: file, error: nil)
        }
        #expect(error.map(isInputDataNilOrZeroLength) == true)
    }

    @Test func missingFileURLIsInputFileNil() {
        let error = #expect(throws: AFError.self) {
            try DataResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: nil, error: nil)
        }
        guard case .inputFileNil = error.flatMap(serializationReason) else {
            Issue.record("expected .inputFileNil, got \(String(describing: error))")
            return
        }
    }

    @Test func unreadableFileIsInputFileReadFailedWithItsURL() {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-missing-\(UUID())")
        let error = #expect(throws: AFError.self) {
            try StringResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: missing,
                                                             error: nil)
        }
        guard case let .inputFileReadFailed(url) = error.flatMap(serializationReason) else {
            Issue.record("expected .inputFileReadFailed, got \(String(describing: error))")
            return
        }
        #expect(url == missing)
    }

    @Test func downloadSerializationRethrowsTheRequestErrorBeforeLookingAtTheFile() {
        #expect(throws: DownloadMarkerError(id: 4)) {
            try DataResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: nil,
                                                           error: DownloadMarkerError(id: 4))
        }
    }

    @Test func urlSerializerReturnsTheFileURLWithoutReadingIt() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/lupine")
        #expect(try URLResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: missing,
                                                              error: nil) == missing)
    }

    @Test func urlSerializerFailsWithInputFileNilWithoutFile() {
        let error = #expect(throws: AFError.self) {
            try URLResponseSerializer().serializeDownload(request: nil, response: nil, fileURL: nil, error: nil)
        }
        guard case .inputFileNil = error.flatMap(serializationReason) else {
            Issue.record("expected .inputFileNil, got \(String(describing: error))")
            return
        }
    }

    @Test func urlSerializerRethrowsTheRequestErrorUnchanged() {
        #expect(throws: DownloadMarkerError(id: 5)) {
            try URLResponseSerializer().serializeDownload(request: nil, response: nil,
                                                          fileURL: URL(fileURLWithPath: "/tmp"),
                                                          error: DownloadMarkerError(id: 5))
        }
    }
}

// MARK: - Static factories

@Suite("Serializer factories")
struct SerializerFactoryTests {
    private func dataSerializer<S: ResponseSerializer>(_ serializer: S) -> S { serializer }
    private func downloadSerializer<S: DownloadResponseSerializerProtocol>(_ serializer: S) -> S { serializer }

    @Test func dataFactoriesBuildConfiguredSerializers() {
        #expect(dataSerializer(.data).emptyResponseCodes == [204, 205])
        let custom = dataSerializer(.data(emptyResponseCodes: [200], emptyRequestMethods: [.get]))
        #expect(custom.emptyResponseCodes == [200])
        #expect(custom.emptyRequestMethods == [.get])
    }

    @Test func stringFactoriesBuildConfiguredSerializers() {
        #expect(dataSerializer(.string).encoding == nil)
        #expect(dataSerializer(.string(encoding: .utf16)).encoding == .utf16)
    }

    @Test func decodableFactoryBuildsConfiguredSerializer() {
        let serializer = dataSerializer(.decodable(of: DownloadPayload.self, dataPreprocessor: .googleXSSI,
                                                   emptyResponseCodes: [299]))
        #expect(serializer.dataPreprocessor is GoogleXSSIPreprocessor)
        #expect(serializer.decoder is JSONDecoder)
        #expect(serializer.emptyResponseCodes == [299])
        #expect(serializer.emptyRequestMethods == [.head])
    }

    @Test func urlFactoryBuildsURLSerializer() throws {
        let url = URL(fileURLWithPath: "/tmp/file")
        #expect(try downloadSerializer(.url).serializeDownload(request: nil, response: nil, fileURL: url,
                                                               error: nil) == url)
    }
}
