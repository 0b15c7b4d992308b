import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

@Suite struct UploadRequestTests {
    // MARK: Data

    @Test func uploadDataSendsTheBytesWithContentLengthAsPOST() async throws {
        let server = try await testServer()
        let body = patternedBytes(count: 300_000)

        let report = try await AF.upload(body, to: server.url("/upload"))
            .serializingDecodable(SinkReport.self).value

        #expect(report.method == "POST")
        #expect(report.bytes == body.count)
        #expect(report.sha256 == sha256Hex(body))
        #expect(report.contentLength == "300000")
        #expect(report.transferEncoding == nil)
    }

    /// The benchmark's S5 posts to `/discard`, which counts the body without hashing it.
    @Test func uploadToTheDiscardingSinkCountsEveryByte() async throws {
        let server = try await testServer()
        let body = patternedBytes(count: 1 << 20)

        let report = try await AF.upload(body, to: server.url("/discard"))
            .serializingDecodable(DiscardReport.self).value

        #expect(report.method == "POST")
        #expect(report.bytes == body.count)
        #expect(report.sha256 == nil)
        #expect(report.contentLength == "1048576")
    }

    @Test func uploadDataHonoursMethodHeadersAndRequestModifier() async throws {
        let server = try await testServer()
        let request = AF.upload(Data("hello".utf8), to: server.url("/upload"), method: .put,
                                headers: [.contentType("text/plain")],
                                requestModifier: { $0.setValue("yes", forHTTPHeaderField: "X-Modified") })

        let report = try await request.serializingDecodable(SinkReport.self).value

        #expect(report.method == "PUT")
        #expect(report.contentType == "text/plain")
        #expect(report.sha256 == sha256Hex(Data("hello".utf8)))
        #expect(request.request?.value(forHTTPHeaderField: "X-Modified") == "yes")
    }

    @Test func uploadDataWithURLRequestConvertible() async throws {
        let server = try await testServer()
        var urlRequest = URLRequest(url: try #require(URL(string: server.url("/upload"))))
        urlRequest.method = .patch

        let report = try await AF.upload(Data([1, 2, 3]), with: urlRequest).serializingDecodable(SinkReport.self).value

        #expect(report.method == "PATCH")
        #expect(report.bytes == 3)
    }

    @Test func uploadProgressCountsEveryByteAndEndsComplete() async throws {
        let server = try await testServer()
        let body = patternedBytes(count: 2_000_000)
        let seen = Locked<[Int64]>([])

        let request = AF.upload(body, to: server.url("/upload"))
            .uploadProgress { progress in seen.withValue { $0.append(progress.completedUnitCount) } }
        _ = await request.serializingDecodable(SinkReport.self).response
        #expect(await waitUntil { seen.current.last == Int64(body.count) })

        #expect(request.uploadProgress.totalUnitCount == Int64(body.count))
        #expect(request.uploadProgress.completedUnitCount == Int64(body.count))
        #expect(seen.current == seen.current.sorted())
    }

    @Test func asyncUploadProgressStreamEndsWithTheWholeBody() async throws {
        let server = try await testServer()
        let body = patternedBytes(count: 500_000)
        let request = AF.upload(body, to: server.url("/upload"))
        // As in Alamofire, a `StreamOf` installs its handler when iteration begins: the iterator is
        // made before the request starts (when its first response handler is added), or a fast
        // upload could end before the handler is there.
        var progress = request.uploadProgress().makeAsyncIterator()
        let task = request.serializingDecodable(SinkReport.self)

        var last: Int64 = 0
        while let value = await progress.next() {
            last = value.completedUnitCount
        }

        #expect(last == Int64(body.count))
        #expect(try await task.value.bytes == body.count)
    }

    // MARK: Files

    @Test func uploadFileStreamsItFromDiskAndLeavesItInPlace() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fileURL = scratch.file("body.bin")
        let body = patternedBytes(count: 3_000_000, seed: 3)
        try body.write(to: fileURL)
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])

        let request = session.upload(fileURL, to: server.url("/upload"))
        let report = try await request.serializingDecodable(SinkReport.self).value

        #expect(report.bytes == body.count)
        #expect(report.sha256 == sha256Hex(body))
        #expect(report.contentLength == "3000000")
        #expect(FileManager.default.fileExists(atPath: fileURL.path))
        guard case let .file(uploaded, shouldRemove)? = request.uploadable else {
            Issue.record("expected a file uploadable, got \(String(describing: request.uploadable))")
            return
        }
        #expect(uploaded == fileURL)
        #expect(!shouldRemove)
        #expect(await waitUntil { monitor.names.contains("didCreateUploadable") })
    }

    @Test func uploadOfAMissingFileFailsWithFileDoesNotExist() async throws {
        let server = try await testServer()
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-missing-\(UUID().uuidString)")
        let path = "/upload/\(UUID().uuidString)"

        let response = await AF.upload(missing, to: server.url(path)).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .fileDoesNotExist)
        #expect(server.hits(for: path) == 0)
    }

    @Test func uploadOfADirectoryFailsWithFileIsDirectory() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }

        let response = await AF.upload(scratch.url, to: server.url("/upload")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .fileIsDirectory)
    }

    // MARK: Streams

    @Test func uploadInputStreamIsSentChunkedWithoutALength() async throws {
        let server = try await testServer()
        let body = patternedBytes(count: 1_500_000, seed: 9)
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])

        let request = session.upload(InputStream(data: body), to: server.url("/upload"))
        let report = try await request.serializingDecodable(SinkReport.self).value

        #expect(report.bytes == body.count)
        #expect(report.sha256 == sha256Hex(body))
        #expect(report.contentLength == nil)
        #expect(report.transferEncoding == "chunked")
        #expect(request.uploadProgress.completedUnitCount == Int64(body.count))
        #expect(await waitUntil { monitor.names.contains("didProvideInputStream") })
        let names = monitor.names
        let created = try #require(names.firstIndex(of: "didCreateUploadable"))
        let urlRequest = try #require(names.firstIndex(of: "didCreateURLRequest"))
        #expect(created < urlRequest)
    }

    /// Alamofire's UploadConcurrencyTests (compiled out on Linux there): an InputStream upload whose
    /// URLRequest gives its `Content-Length` is sent with that length; progress only grows, and,
    /// as URLSession takes the expected upload size from that field, both progresses end at 1.
    @Test func inputStreamUploadWithAContentLengthSendsThatLength() async throws {
        let server = try await testServer()
        let body = Data(String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", count: 75).utf8)
        var urlRequest = try URLRequest(url: server.url("/upload"), method: .post)
        urlRequest.headers.add(name: "Content-Length", value: "\(body.count)")
        let uploads = Locked<[Double]>([])
        let downloads = Locked<[Double]>([])
        let queue = DispatchQueue(label: "test.progress")
        let request = AF.upload(InputStream(data: body), with: urlRequest)
            .uploadProgress(queue: queue) { progress in uploads.withValue { $0.append(progress.fractionCompleted) } }
            .downloadProgress(queue: queue) { progress in downloads.withValue { $0.append(progress.fractionCompleted) } }
        let report = try await request.serializingDecodable(SinkReport.self).value
        queue.sync {}

        #expect(report.bytes == body.count)
        #expect(report.contentLength == "\(body.count)")
        #expect(report.transferEncoding == nil)
        #expect(uploads.current == uploads.current.sorted())
        #expect(uploads.current.last == 1)
        #expect(request.uploadProgress.totalUnitCount == Int64(body.count))
        #expect(downloads.current == downloads.current.sorted())
        #expect(downloads.current.last == 1)
    }

    /// A body that does not match the Content-Length its request declares fails at once with a
    /// clear error, and nothing past the declared length reaches the server (it would read those
    /// bytes as another request); the next request on the Session goes through.
    @Test(arguments: [("abcdefghij", URLError.Code.dataLengthExceedsMaximum), ("abc", URLError.Code.requestBodyStreamExhausted)])
    func aStreamBodyNotOfItsDeclaredLengthFailsWithoutCorruptingTheConnection(body: String, code: URLError.Code) async throws {
        let server = try await testServer()
        let session = Session()
        let started = Date()
        let failed = await session.upload(InputStream(data: Data(body.utf8)), to: server.url("/post"), headers: ["Content-Length": "5"])
            .serializingData().response
        #expect(failed.error?.underlyingError.flatMap { ($0 as? URLError)?.code } == code)
        #expect(failed.error?.localizedDescription.contains("Content-Length field declares") == true)
        // Long before the 60 s the request would otherwise wait for the missing bytes.
        #expect(Date().timeIntervalSince(started) < 30)
        let next = try await session.upload(Data("hello".utf8), to: server.url("/post")).validate()
            .serializingDecodable(HTTPBinResponse.self).value
        #expect(next.data == "hello")
    }

    /// The declared length is read past the spaces a field value may carry around it: a body
    /// of another length is still refused before anything is sent.
    @Test func aDeclaredLengthWrittenWithSpacesStillBindsTheBody() async throws {
        let server = try await testServer()
        let path = "/anything/spaced-\(UUID().uuidString.prefix(8))"
        var urlRequest = try URLRequest(url: server.url(path), method: .post)
        urlRequest.headers.add(name: "Content-Length", value: " 5 ")
        let failed = await AF.upload(Data("abcdefghij".utf8), with: urlRequest).serializingData().response
        #expect(failed.error?.isSessionTaskError == true)
        #expect(server.hits(for: path) == 0)
    }

    @Test(arguments: ["abcdefghij", "abc"])
    func aDataBodyNotOfItsDeclaredLengthIsNotSent(body: String) async throws {
        let server = try await testServer()
        let path = "/anything/declared-\(UUID().uuidString.prefix(8))"
        var urlRequest = try URLRequest(url: server.url(path), method: .post)
        urlRequest.headers.add(name: "Content-Length", value: "5")
        let failed = await AF.upload(Data(body.utf8), with: urlRequest).serializingData().response
        #expect(failed.error?.isSessionTaskError == true)
        #expect(server.hits(for: path) == 0)
    }

    /// A request without a body that declares one fails at once, instead of leaving the server
    /// waiting for bytes that never come until the request times out.
    @Test func aRequestWithoutABodyThatDeclaresOneIsNotSent() async throws {
        let server = try await testServer()
        let path = "/anything/no-body-\(UUID().uuidString.prefix(8))"
        let failed = await AF.request(server.url(path), method: .delete, headers: ["Content-Length": "5"]).serializingData().response
        #expect((failed.error?.underlyingError as? URLError)?.code == .requestBodyStreamExhausted)
        #expect(server.hits(for: path) == 0)
    }

    /// A body in memory that the caller asks to send chunked: the chunks and their terminator go
    /// out (the end of a chunked body carries bytes, unlike the end of a body of known length), in
    /// slices past 64 KiB (64 KiB, then 1 MiB each), and the upload's progress and monitor events
    /// report it sent.
    @Test(arguments: [1_000, 300_000, 2_500_000])
    func dataUploadTheCallerAsksToSendChunkedArrivesWhole(count: Int) async throws {
        let server = try await testServer()
        let body = patternedBytes(count: count, seed: 4)
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        let request = session.upload(body, to: server.url("/upload"), headers: ["Transfer-Encoding": "chunked"])
        let report = try await request.serializingDecodable(SinkReport.self).value

        #expect(report.bytes == body.count)
        #expect(report.sha256 == sha256Hex(body))
        #expect(report.transferEncoding == "chunked")
        #expect(report.contentLength == nil)
        #expect(request.uploadProgress.completedUnitCount == Int64(body.count))
        #expect(await waitUntil { monitor.names.contains("didSendURLRequest") })
    }

    @Test func uploadInputStreamFromAFileWithURLRequestConvertible() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fileURL = scratch.file("stream.bin")
        let body = patternedBytes(count: 700_000, seed: 4)
        try body.write(to: fileURL)
        let stream = try #require(InputStream(url: fileURL))

        let report = try await AF.upload(stream, with: URLRequest(url: try #require(URL(string: server.url("/upload")))))
            .serializingDecodable(SinkReport.self).value

        #expect(report.sha256 == sha256Hex(body))
    }

    // MARK: Creating the body

    @Test func failingUploadableFailsWithCreateUploadableFailedWithoutSending() async throws {
        let server = try await testServer()
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        let path = "/upload/\(UUID().uuidString)"
        let upload = FailingUpload(url: server.url(path))

        let request = session.makeUploadRequest(upload, interceptor: nil, shouldAutomaticallyResume: nil, fileManager: .default)
        let response = await request.serializingData().response

        guard case let .createUploadableFailed(error)? = response.error else {
            Issue.record("expected createUploadableFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is FailingUploadable.Failure)
        #expect(server.hits(for: path) == 0)
        #expect(request.uploadable == nil)
        #expect(await waitUntil { monitor.names.contains("didFailToCreateUploadable") })
    }

    @Test func uploadableIsCreatedAgainForARetry() async throws {
        let server = try await testServer()
        let key = UUID().uuidString
        let monitor = RecordingMonitor()
        let session = Session(eventMonitors: [monitor])
        let body = Data("retry me".utf8)

        let response = await session.upload(body, to: server.url("/fail/1?key=\(key)"), method: .put,
                                            interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01))
            .validate()
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.response?.statusCode == 200)
        #expect(response.value?.data == "retry me")
        #expect(await waitUntil { monitor.names.filter { $0 == "didCreateUploadable" }.count == 2 })
    }

    /// A stream is read once: the retry of a stream upload read whole sends what the stream still
    /// gives (nothing), as `Uploadable.stream` says, instead of failing to open it again with
    /// `.cannotOpenFile`.
    @Test func aRetriedStreamUploadSendsWhatTheStreamStillGives() async throws {
        let server = try await testServer()
        let key = UUID().uuidString
        let session = Session()

        let response = await session.upload(InputStream(data: Data("stream me".utf8)), to: server.url("/fail/1?key=\(key)"),
                                            method: .put, interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01))
            .validate()
            .serializingDecodable(HTTPBinResponse.self).response
        withExtendedLifetime(session) {}

        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        // The first attempt read the stream to its end: the retry's body is empty.
        #expect(response.value?.data == "")
    }

    @Test func sessionSubclassCanOverrideTheUploadOverloads() async throws {
        final class CountingSession: Session, @unchecked Sendable {
            let uploads = Locked(0)

            override func upload(_ data: Data, with convertible: any URLRequestConvertible,
                                 interceptor: (any RequestInterceptor)? = nil,
                                 shouldAutomaticallyResume: Bool? = nil,
                                 fileManager: FileManager = .default) -> UploadRequest {
                uploads.withValue { $0 += 1 }
                return super.upload(data, with: convertible, interceptor: interceptor,
                                    shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
            }
        }
        let server = try await testServer()
        let session = CountingSession()

        _ = await session.upload(Data("x".utf8), to: server.url("/upload")).serializingData().response

        #expect(session.uploads.current == 1)
    }
}

/// An UploadConvertible whose URLRequest is fine but whose body cannot be made.
private struct FailingUpload: UploadConvertible {
    let url: String

    func asURLRequest() throws -> URLRequest {
        var request = URLRequest(url: try url.asURL())
        request.method = .post
        return request
    }

    func createUploadable() throws -> UploadRequest.Uploadable {
        try FailingUploadable().createUploadable()
    }
}
