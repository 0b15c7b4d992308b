import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// A real `UploadRequest` driven through its whole pipeline by `ScriptedEnvironment`: no Session,
/// no socket. The scripted transport reads the body as the wire would carry it, so each test checks
/// what was sent on each hop, beside what the caller sees.
@Suite(.timeLimit(.minutes(1)))
struct UploadRequestWithoutSessionTests {
    private static let address = "https://api.example.test/uploads"
    private static let body = Data("name=lupine&kind=upload".utf8)
    private static let accepted: [ScriptedStep] = [.head(201, fields: ["Content-Length": "8"]), .text("accepted"), .complete(nil)]

    /// The caller's view of a finished upload, and the lifetime events seen. Checks the environment
    /// was called on its root queue only.
    private static func run(_ request: UploadRequest, in environment: ScriptedEnvironment)
        async -> (response: DataResponse<Data, AFError>, events: [String]) {
        let recorder = RequestEventRecorder(queue: environment.rootQueue)
        request.eventMonitor(recorder)
        let response = await request.serializingData().response
        await environment.drain()
        #expect(environment.recorded.callsOffTheRootQueue.isEmpty)
        return (response, recorder.events)
    }

    @Test func aBodyInMemoryIsSentAndCounted() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [Self.accepted])
        let request = environment.uploadRequest(UploadRequest.Uploadable.data(Self.body), to: url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(response.response?.statusCode == 201)
        #expect(environment.recorded.sent.map(\.method) == [.post])
        #expect(environment.recorded.sentBodies == [Self.body])
        #expect(request.uploadProgress.completedUnitCount == Int64(Self.body.count))
        #expect(request.uploadProgress.totalUnitCount == Int64(Self.body.count))
        #expect(events == ["resume", "finish"])
    }

    @Test func aFileBodyIsReadFromTheFileWhichIsKept() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("form.txt")
        try Self.body.write(to: file)
        let environment = ScriptedEnvironment(exchanges: [Self.accepted])
        let request = environment.uploadRequest(UploadRequest.Uploadable.file(file, shouldRemove: false), to: url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sentBodies == [Self.body])
        #expect(request.uploadProgress.completedUnitCount == Int64(Self.body.count))
        // The caller's own file: never removed.
        #expect(contents(of: file) == Self.body)
    }

    @Test func aRetryResendsTheBodyInMemory() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "20"]), .text("half"), .complete(URLError(.networkConnectionLost))],
            Self.accepted,
        ], retryAnswers: [.retry])
        let request = environment.uploadRequest(UploadRequest.Uploadable.data(Self.body), to: url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(request.retryCount == 1)
        #expect(environment.recorded.sentBodies == [Self.body, Self.body])
        #expect(environment.recorded.sent.map(\.method) == [.post, .post])
        #expect(events == ["resume", "retrying", "finish"])
    }

    @Test func aRetryResendsATemporaryFileWhichGoesOnceTheRequestIsDone() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("encoded-form.tmp")
        try Self.body.write(to: file)
        let environment = ScriptedEnvironment(exchanges: [[.complete(URLError(.networkConnectionLost))], Self.accepted],
                                              retryAnswers: [.retry])
        // As a multipart form encoded to disk: the request owns the file, the same for each attempt.
        let request = environment.uploadRequest(UploadRequest.Uploadable.file(file, shouldRemove: true), to: url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sentBodies == [Self.body, Self.body])
        #expect(await waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: file.path) })
    }

    @Test func aTemporaryFileGoesWhenTheUploadIsCancelled() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("encoded-form.tmp")
        try Self.body.write(to: file)
        let environment = ScriptedEnvironment(exchanges: [[.perform { $0.cancel() }]])
        let request = environment.uploadRequest(UploadRequest.Uploadable.file(file, shouldRemove: true), to: url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.response == nil)
        #expect(environment.recorded.sentBodies == [Self.body])
        #expect(environment.recorded.retryQuestions.isEmpty)
        #expect(events == ["resume", "cancel", "finish"])
        #expect(await waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: file.path) })
    }

    @Test func aMissingFileFailsTheAttemptBeforeAnythingIsSent() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let environment = ScriptedEnvironment(exchanges: [Self.accepted])
        let request = environment.uploadRequest(UploadRequest.Uploadable.file(scratch.file("absent"), shouldRemove: false), to: url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error?.sessionTaskURLErrorCode == .fileDoesNotExist)
        #expect(environment.recorded.sent.isEmpty)
    }

    @Test func aBodyThatCannotBeMadeFailsTheRequestWithCreateUploadableFailed() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [Self.accepted])
        let request = environment.uploadRequest(FailingUploadable(), to: url)

        let (response, _) = await Self.run(request, in: environment)

        guard case let .createUploadableFailed(error)? = response.error else {
            Issue.record("expected createUploadableFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is FailingUploadable.Failure)
        #expect(environment.recorded.sent.isEmpty)
        #expect(environment.recorded.attempts == 1)
    }

    @Test func aChallengeIsAnsweredWithTheCredentialAndTheBodySentAgain() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(401, fields: ["WWW-Authenticate": "Basic realm=\"uploads\"", "Content-Length": "0"]), .complete(nil)],
            Self.accepted,
        ])
        let request = environment.uploadRequest(UploadRequest.Uploadable.data(Self.body), to: url)
        request.authenticate(username: "user", password: "secret")

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sentBodies == [Self.body, Self.body])
        let answer = environment.recorded.sent.last?.headerFields.first { $0.name == "Authorization" }
        #expect(answer?.value == "Basic " + Data("user:secret".utf8).base64EncodedString())
        #expect(environment.recorded.attempts == 1)
    }

    @Test func aTemporaryRedirectResendsTheBodyToItsLocation() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(307, fields: ["Location": "https://api.example.test/uploads/v2", "Content-Length": "0"]), .complete(nil)],
            Self.accepted,
        ])
        let request = environment.uploadRequest(UploadRequest.Uploadable.data(Self.body), to: url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sent.map(\.url.path) == ["/uploads", "/uploads/v2"])
        #expect(environment.recorded.sent.map(\.method) == [.post, .post])
        #expect(environment.recorded.sentBodies == [Self.body, Self.body])
    }
}

// MARK: A stream body

extension UploadRequestWithoutSessionTests {
    @Test func aStreamBodyIsReadAndSent() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [Self.accepted])
        let request = environment.uploadRequest(UploadRequest.Uploadable.stream(InputStream(data: Self.body)), to: url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sentBodies == [Self.body])
    }

    @Test func aRetryOfAStreamBodySendsWhatTheStreamStillGives() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [[.complete(URLError(.networkConnectionLost))], Self.accepted],
                                              retryAnswers: [.retry])
        let request = environment.uploadRequest(UploadRequest.Uploadable.stream(InputStream(data: Self.body)), to: url)

        let (response, _) = await Self.run(request, in: environment)

        // The stream is read once (UploadRequest.Uploadable.stream): the retry sends what it still
        // gives, nothing here, instead of failing to open it again.
        #expect(response.error == nil)
        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sentBodies == [Self.body, Data()])
    }

    @Test func aTemporaryRedirectOfAStreamBodySendsWhatTheStreamStillGives() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(307, fields: ["Location": "https://api.example.test/uploads/v2", "Content-Length": "0"]), .complete(nil)],
            Self.accepted,
        ])
        let request = environment.uploadRequest(UploadRequest.Uploadable.stream(InputStream(data: Self.body)), to: url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(environment.recorded.sent.map(\.url.path) == ["/uploads", "/uploads/v2"])
        #expect(environment.recorded.sentBodies == [Self.body, Data()])
    }
}

// MARK: A multipart form

extension UploadRequestWithoutSessionTests {
    /// The files under `directory`, at any depth.
    private static func files(under directory: URL) -> [String] {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])
        return (enumerator?.allObjects as? [URL] ?? []).filter { !$0.hasDirectoryPath }.map(\.lastPathComponent)
    }

    @Test func aFormEncodedToDiskIsSentAgainOnRetryAndItsFileGoesAfterwards() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let form = MultipartFormData(boundary: "scripted-boundary")
        form.append(Data("lupine".utf8), withName: "name")
        form.append(Self.body, withName: "file", fileName: "form.txt", mimeType: "text/plain")
        let environment = ScriptedEnvironment(exchanges: [[.complete(URLError(.networkConnectionLost))], Self.accepted],
                                              retryAnswers: [.retry])
        let request = environment.uploadRequest(multipartFormData: form, usingThreshold: 0, to: url,
                                                fileManager: ScratchFileManager(scratch: scratch.url))

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        let encoded = try form.encode()
        #expect(environment.recorded.sentBodies == [encoded, encoded])
        let contentType = environment.recorded.sent.first?.headerFields.first { $0.name == "Content-Type" }?.value
        #expect(contentType == "multipart/form-data; boundary=scripted-boundary")
        guard case let .file(encodedFile, shouldRemove: true)? = request.uploadable else {
            Issue.record("expected a temporary file, got \(String(describing: request.uploadable))")
            return
        }
        #expect(encodedFile.standardizedFileURL.path.hasPrefix(scratch.url.standardizedFileURL.path))
        #expect(await waitUntil(timeout: 10) { Self.files(under: scratch.url).isEmpty }, "\(Self.files(under: scratch.url))")
    }

    @Test func aFormBelowTheThresholdIsSentFromMemory() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let form = MultipartFormData(boundary: "scripted-boundary")
        form.append(Self.body, withName: "file", fileName: "form.txt", mimeType: "text/plain")
        let environment = ScriptedEnvironment(exchanges: [Self.accepted])
        let request = environment.uploadRequest(multipartFormData: form, usingThreshold: 1 << 20, to: url,
                                                fileManager: ScratchFileManager(scratch: scratch.url))

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.value == Data("accepted".utf8))
        #expect(environment.recorded.sentBodies == [try form.encode()])
        guard case .data? = request.uploadable else {
            Issue.record("expected a body in memory, got \(String(describing: request.uploadable))")
            return
        }
        #expect(Self.files(under: scratch.url).isEmpty)
    }
}
