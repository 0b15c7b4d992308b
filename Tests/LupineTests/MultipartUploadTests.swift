import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

@Suite struct MultipartUploadTests {
    /// A form of a text field, an in-memory file and a file on disk.
    private static func fill(_ form: MultipartFormData, fileURL: URL) {
        form.append(Data("Lupine".utf8), withName: "name")
        form.append(Data("{\"a\":1}".utf8), withName: "meta", fileName: "meta.json", mimeType: "application/json")
        form.append(fileURL, withName: "file")
    }

    private static func expectEchoed(_ echo: MultipartEcho, fileBody: Data) {
        #expect(echo.parts.map(\.name) == ["name", "meta", "file"])
        #expect(echo.parts.first?.text == "Lupine")
        #expect(echo.parts.first?.filename == nil)
        #expect(echo.parts.dropFirst().first?.filename == "meta.json")
        #expect(echo.parts.dropFirst().first?.contentType == "application/json")
        #expect(echo.parts.dropFirst().first?.text == "{\"a\":1}")
        #expect(echo.parts.last?.filename == "photo.png")
        #expect(echo.parts.last?.contentType == "image/png")
        #expect(echo.parts.last?.size == fileBody.count)
        #expect(echo.parts.last?.sha256 == sha256Hex(fileBody))
    }

    @Test func smallFormIsEncodedInMemoryAndEchoedPartByPart() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fileURL = scratch.file("photo.png")
        let fileBody = patternedBytes(count: 40_000)
        try fileBody.write(to: fileURL)

        let request = AF.upload(multipartFormData: { Self.fill($0, fileURL: fileURL) },
                                to: server.url("/multipart"))
        let echo = try await request.serializingDecodable(MultipartEcho.self).value

        Self.expectEchoed(echo, fileBody: fileBody)
        guard case .data? = request.uploadable else {
            Issue.record("expected an in-memory body, got \(String(describing: request.uploadable))")
            return
        }
        let contentType = try #require(request.request?.headers["Content-Type"])
        #expect(contentType.hasPrefix("multipart/form-data; boundary=alamofire.boundary."))
    }

    @Test func formAboveTheThresholdIsStreamedFromATemporaryFileThatIsRemovedAfterwards() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fileURL = scratch.file("photo.png")
        let fileBody = patternedBytes(count: 2_000_000, seed: 5)
        try fileBody.write(to: fileURL)
        let form = MultipartFormData()
        Self.fill(form, fileURL: fileURL)

        let disk = try ScratchFileManager.make()
        defer { disk.remove() }
        let request = AF.upload(multipartFormData: form, to: server.url("/multipart"), usingThreshold: 1_000_000,
                                fileManager: disk)
        let echo = try await request.serializingDecodable(MultipartEcho.self).value

        Self.expectEchoed(echo, fileBody: fileBody)
        guard case let .file(temporaryFile, shouldRemove)? = request.uploadable else {
            Issue.record("expected a temporary file, got \(String(describing: request.uploadable))")
            return
        }
        #expect(shouldRemove)
        #expect(temporaryFile.deletingLastPathComponent().lastPathComponent == "multipart.form.data")
        #expect(await waitUntil { !FileManager.default.fileExists(atPath: temporaryFile.path) })
        #expect(FileManager.default.fileExists(atPath: fileURL.path))
    }

    @Test func temporaryFileIsRemovedWhenTheUploadFails() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let form = MultipartFormData()
        form.append(patternedBytes(count: 10_000), withName: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")

        let disk = try ScratchFileManager.make()
        defer { disk.remove() }
        let request = AF.upload(multipartFormData: form, to: refusing.url("/multipart"), usingThreshold: 0, fileManager: disk)
        let response = await request.serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        guard case let .file(temporaryFile, true)? = request.uploadable else {
            Issue.record("expected a temporary file, got \(String(describing: request.uploadable))")
            return
        }
        #expect(await waitUntil { !FileManager.default.fileExists(atPath: temporaryFile.path) })
    }

    @Test func temporaryFileIsRemovedWhenTheUploadIsCancelled() async throws {
        let server = try await testServer()
        let form = MultipartFormData()
        form.append(patternedBytes(count: 10_000), withName: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
        let session = Session(startRequestsImmediately: false)

        // The server stalls before answering, so the cancel lands mid-exchange.
        let disk = try ScratchFileManager.make()
        defer { disk.remove() }
        let request = session.upload(multipartFormData: form, to: server.url("/delay/10"), usingThreshold: 0, method: .post,
                                     fileManager: disk)
        request.resume()
        #expect(await waitUntil { temporaryUploadFileExists(request.uploadable) })
        let uploadable = request.uploadable
        request.cancel()
        let response = await request.serializingData().response

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(await waitUntil { !temporaryUploadFileExists(uploadable) })
    }

    @Test func formIsEncodedOnceAndItsTemporaryFileIsSentAgainOnARetryThenRemoved() async throws {
        let server = try await testServer()
        let key = UUID().uuidString
        let files = Locked<[URL]>([])
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "test.multipart.retry"))
        monitor.requestDidCreateUploadable = { _, uploadable in
            if case let .file(url, _) = uploadable { files.withValue { $0.append(url) } }
        }
        let session = Session(eventMonitors: [monitor])
        let disk = try ScratchFileManager.make()
        defer { disk.remove() }

        let response = await session.upload(multipartFormData: { $0.append(Data("x".utf8), withName: "x") },
                                            to: server.url("/fail/1?key=\(key)"), usingThreshold: 0, method: .put,
                                            interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01),
                                            fileManager: disk)
            .validate()
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
        #expect(response.value?.data.contains("name=\"x\"") == true)
        #expect(await waitUntil { files.current.count == 2 })
        #expect(Set(files.current).count == 1)
        #expect(await waitUntil { files.current.allSatisfy { !FileManager.default.fileExists(atPath: $0.path) } })
    }

    /// A stream part can be read only once, so a retry must send the body encoded for the first
    /// attempt rather than encode the form again.
    @Test(arguments: [UInt64(10_000_000), 0])
    func formWithAStreamPartIsSentWholeAgainOnARetry(threshold: UInt64) async throws {
        let server = try await testServer()
        let key = UUID().uuidString
        let streamed = Data("streamed part".utf8)
        let disk = try ScratchFileManager.make()
        defer { disk.remove() }

        let response = await AF.upload(multipartFormData: { form in
            form.append(InputStream(data: streamed), withLength: UInt64(streamed.count),
                        name: "s", fileName: "s.txt", mimeType: "text/plain")
        }, to: server.url("/fail/1?key=\(key)"), usingThreshold: threshold, method: .put,
        interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01), fileManager: disk)
            .validate()
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
        #expect(response.value?.data.contains("streamed part") == true)
    }

    @Test func unreachableFilePartFailsWithMultipartEncodingFailedAndLeavesNoFile() async throws {
        let server = try await testServer()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-missing-\(UUID().uuidString).png")

        let path = "/multipart/\(UUID().uuidString)"

        let disk = try ScratchFileManager.make()
        defer { disk.remove() }
        let request = AF.upload(multipartFormData: { $0.append(missing, withName: "file") },
                                to: server.url(path), usingThreshold: 0, fileManager: disk)
        let response = await request.serializingData().response

        guard case let .multipartEncodingFailed(reason)? = response.error,
              case let .bodyPartFileIsDirectory(atURL) = reason else {
            Issue.record("expected bodyPartFileIsDirectory, got \(String(describing: response.error))")
            return
        }
        #expect(atURL == missing)
        #expect(request.uploadable == nil)
        #expect(server.hits(for: path) == 0)
    }
}
