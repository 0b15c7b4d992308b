import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Behaviour that Alamofire's UploadTests assert, over loopback.
@Suite struct UploadAlamofireParityTests {
    /// Retries a request once, then never again, and counts the questions; the retry is sent to
    /// `/post` with the default timeout, as Alamofire's `SingleRetrier` does.
    private final class RetryOnce: RequestInterceptor, Sendable {
        let questions = Locked(0)

        func adapt(_ urlRequest: URLRequest, for session: Session,
                   completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            guard questions.current > 0, let url = urlRequest.url,
                  var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                completion(.success(urlRequest))
                return
            }
            components.path = "/post"
            var adapted = urlRequest
            adapted.url = components.url
            adapted.timeoutInterval = 60
            completion(.success(adapted))
        }

        func retry(_ request: Request, for session: Session, dueTo error: any Error,
                   completion: @escaping @Sendable (RetryResult) -> Void) {
            let count = questions.withValue { value -> Int in
                value += 1
                return value
            }
            completion(count == 1 ? .retry : .doNotRetry)
        }
    }

    private static func expectRisingToOne(_ values: [Double], _ what: Comment) {
        #expect(values == values.sorted(), what)
        #expect(values.last == 1.0, what)
    }

    @Test func dataFileAndStreamUploadsKeepMethodURLAndHeaders() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let fileURL = scratch.file("image.bin")
        try patternedBytes(count: 50_000).write(to: fileURL)
        let stream = try #require(InputStream(url: fileURL))
        let url = try #require(URL(string: server.url("/post")))
        let headers: HTTPHeaders = ["Authorization": "123456"]

        let requests = [
            AF.upload(Data(), to: url),
            AF.upload(Data(), to: url, headers: headers),
            AF.upload(fileURL, to: url),
            AF.upload(fileURL, to: url, method: .post, headers: headers),
            AF.upload(try #require(InputStream(url: fileURL)), to: url),
            AF.upload(stream, to: url, headers: headers),
        ]
        for (index, request) in requests.enumerated() {
            let response = await request.serializingResponse(using: .data).response
            #expect(response.error == nil, "upload \(index)")
            #expect(request.request?.httpMethod == "POST", "upload \(index)")
            #expect(request.request?.url == url, "upload \(index)")
            #expect(request.response != nil, "upload \(index)")
            if index.isMultiple(of: 2) == false {
                #expect(request.request?.value(forHTTPHeaderField: "Authorization") == "123456", "upload \(index)")
            }
        }
    }

    /// An empty body is still announced, as URLSession does for an upload task: a POST without
    /// `Content-Length` or chunking leaves its length to the server's guess (RFC 9110, 8.6).
    @Test func emptyDataUploadSendsContentLengthZero() async throws {
        let server = try await testServer()

        let report = try await AF.upload(Data(), to: server.url("/upload")).serializingDecodable(SinkReport.self).value

        #expect(report.method == "POST")
        #expect(report.bytes == 0)
        #expect(report.contentLength == "0")
        #expect(report.transferEncoding == nil)
    }

    @Test(arguments: [UInt64.max, 0])
    func multipartUploadSendsItsLengthAndContentType(threshold: UInt64) async throws {
        let server = try await testServer()
        let form = MultipartFormData()
        form.append(patternedBytes(count: 20_000), withName: "blob", fileName: "blob.bin",
                    mimeType: "application/octet-stream")
        form.append(Data("text".utf8), withName: "field")

        let disk = try ScratchFileManager.make()
        defer { disk.remove() }
        let request = AF.upload(multipartFormData: form, to: server.url("/upload"), usingThreshold: threshold, fileManager: disk)
        let report = try await request.serializingDecodable(SinkReport.self).value

        #expect(report.contentType == form.contentType)
        // `contentLength` counts the parts' bodies only; the encoded form adds boundaries and headers.
        #expect(report.bytes > Int(form.contentLength))
        #expect(report.contentLength == String(report.bytes))
        #expect(report.transferEncoding == nil)
    }

    @Test func dataUploadReportsUploadAndDownloadProgressRisingToOne() async throws {
        let server = try await testServer()
        let session = Session()
        let body = Data(String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", count: 1000).utf8)
        let uploads = Locked<[Double]>([])
        let downloads = Locked<[Double]>([])

        let response = await session.upload(body, to: server.url("/post"))
            .uploadProgress(queue: session.rootQueue) { progress in
                uploads.withValue { $0.append(progress.fractionCompleted) }
            }
            .downloadProgress(queue: session.rootQueue) { progress in
                downloads.withValue { $0.append(progress.fractionCompleted) }
            }
            .serializingResponse(using: .data).response

        #expect(response.error == nil)
        #expect(response.data != nil)
        Self.expectRisingToOne(uploads.current, "upload progress")
        Self.expectRisingToOne(downloads.current, "download progress")
    }

    @Test(arguments: [false, true])
    func multipartUploadReportsUploadAndDownloadProgressRisingToOne(fromDisk: Bool) async throws {
        let server = try await testServer()
        let session = Session()
        let first = Data(String(repeating: "Lorem ipsum dolor sit amet, consectetur adipiscing elit.", count: 8700).utf8)
        let second = Data(String(repeating: "Lorem ipsum dolor sit amet, nam no graeco recusabo appellantur.",
                                 count: 7900).utf8)
        let uploads = Locked<[Double]>([])
        let downloads = Locked<[Double]>([])
        let disk = try ScratchFileManager.make()
        defer { disk.remove() }

        let request = session.upload(multipartFormData: { form in
            form.append(first, withName: "lorem1")
            form.append(second, withName: "lorem2")
        }, to: server.url("/post"), usingThreshold: fromDisk ? 0 : .max, fileManager: disk)
            .uploadProgress(queue: session.rootQueue) { progress in
                uploads.withValue { $0.append(progress.fractionCompleted) }
            }
            .downloadProgress(queue: session.rootQueue) { progress in
                downloads.withValue { $0.append(progress.fractionCompleted) }
            }
        let response = await request.serializingResponse(using: .data).response

        #expect(response.error == nil)
        Self.expectRisingToOne(uploads.current, "upload progress")
        Self.expectRisingToOne(downloads.current, "download progress")
        switch request.uploadable {
        case .file?: #expect(fromDisk)
        case .data?: #expect(!fromDisk)
        default: Issue.record("unexpected uploadable \(String(describing: request.uploadable))")
        }
    }

    @Test(arguments: [UInt64.max, 0])
    func multipartContentTypeHeaderIsTheFormsContentType(threshold: UInt64) async throws {
        let server = try await testServer()
        let formSeen = Locked<MultipartFormData?>(nil)
        let url = try #require(URL(string: server.url("/post")))
        let disk = try ScratchFileManager.make()
        defer { disk.remove() }

        let request = AF.upload(multipartFormData: { form in
            form.append(Data("upload_data".utf8), withName: "upload_data")
            formSeen.withValue { $0 = form }
        }, to: url, usingThreshold: threshold, fileManager: disk)
        let response = await request.serializingResponse(using: .data).response

        #expect(response.error == nil)
        #expect(request.convertible.urlRequest?.url == url)
        let form = try #require(formSeen.current)
        #expect(response.request?.value(forHTTPHeaderField: "Content-Type") == form.contentType)
    }

    @Test func customBoundaryIsUsedInTheContentTypeHeader() async throws {
        let server = try await testServer()
        let form = MultipartFormData(fileManager: .default, boundary: "custom-test-boundary")
        form.append(Data("upload_data".utf8), withName: "upload_data")
        var urlRequest = URLRequest(url: try #require(URL(string: server.url("/post"))))
        urlRequest.method = .post

        let response = await AF.upload(multipartFormData: form, with: urlRequest).serializingResponse(using: .data)
            .response

        #expect(response.error == nil)
        let contentType = try #require(response.request?.value(forHTTPHeaderField: "Content-Type"))
        #expect(contentType == form.contentType)
        #expect(contentType.contains("boundary=custom-test-boundary"))
    }

    @Test func partsAppendedWhileTheConvertibleMakesItsRequestAreEncoded() async throws {
        struct AppendingConvertible: URLRequestConvertible, @unchecked Sendable {
            let form = MultipartFormData()
            let url: URL

            func asURLRequest() throws -> URLRequest {
                form.append(Data("français".utf8), withName: "french")
                form.append(Data("日本語".utf8), withName: "japanese")
                var request = URLRequest(url: url)
                request.method = .post
                return request
            }
        }
        let server = try await testServer()
        let convertible = AppendingConvertible(url: try #require(URL(string: server.url("/post"))))

        let request = AF.upload(multipartFormData: convertible.form, with: convertible)
        let response = await request.serializingResponse(using: .data).response

        #expect(response.error == nil)
        guard case let .data(body)? = request.uploadable else {
            Issue.record("expected an in-memory body, got \(String(describing: request.uploadable))")
            return
        }
        #expect(body.count == 241)
    }

    @Test func dataUploadThatTimesOutIsRetriedWithItsBody() async throws {
        let server = try await testServer()
        let retrier = RetryOnce()
        let session = Session(interceptor: retrier)
        var urlRequest = URLRequest(url: try #require(URL(string: server.url("/delay/1"))))
        urlRequest.method = .post
        urlRequest.headers = [.contentType("text/plain")]
        urlRequest.timeoutInterval = 0.1

        let response = await session.upload(Data("body".utf8), with: urlRequest)
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(retrier.questions.current == 1)
        #expect(response.value?.data == "body", "\(String(describing: response.error))")
    }
    /// The lifetime events of an upload, finished or cancelled when its task resumes (metrics events
    /// are not sent: Lupine has no URLSession metrics).
    @Test(arguments: [false, true])
    func uploadSendsItsLifetimeEvents(cancelled: Bool) async throws {
        let server = try await testServer()
        let names = Locked<[String]>([])
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "test.upload.events"))
        let session = Session(startRequestsImmediately: false, eventMonitors: [monitor])
        let path = cancelled ? "/delay/5" : "/post"
        let request = session.upload(Data("PAYLOAD".utf8), to: server.url(path), method: .post)
        func note(_ name: String) { names.withValue { $0.append(name) } }
        monitor.requestDidCreateInitialURLRequest = { _, _ in note("didCreateInitialURLRequest") }
        monitor.requestDidCreateURLRequest = { _, _ in note("didCreateURLRequest") }
        monitor.requestDidCreateTask = { _, _ in note("didCreateTask") }
        monitor.requestDidCompleteTaskWithError = { _, _, _ in note("didComplete") }
        monitor.requestDidFinish = { _ in note("didFinish") }
        monitor.requestDidResume = { _ in note("didResume") }
        monitor.requestDidCreateUploadable = { _, _ in note("didCreateUploadable") }
        monitor.requestDidParseResponse = { _, _ in note("didParseResponse") }
        monitor.requestDidCancel = { _ in note("didCancel") }
        monitor.requestDidCancelTask = { _, _ in note("didCancelTask") }
        monitor.requestDidResumeTask = { [weak request] _, _ in
            note("didResumeTask")
            if cancelled { request?.cancel() }
        }

        // The unserialized `response` handler is the one whose parsed response reaches
        // `requestDidParseResponse`.
        await withCheckedContinuation { continuation in
            request.response { _ in continuation.resume() }
            request.resume()
        }

        let always: Set = ["didCreateInitialURLRequest", "didCreateURLRequest", "didCreateTask", "didComplete",
                           "didFinish", "didResume", "didResumeTask", "didCreateUploadable", "didParseResponse"]
        let expected = cancelled ? always.union(["didCancel", "didCancelTask"]) : always
        #expect(await waitUntil { Set(names.current).isSuperset(of: expected) },
                "missing \(expected.subtracting(names.current))")
        // Each event once, as Alamofire's expectations (which fail when over-fulfilled) require.
        #expect(names.current.count == expected.count, "\(names.current)")
        #expect(request.state == (cancelled ? .cancelled : .finished))
    }
}
