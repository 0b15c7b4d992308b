import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// A real `DownloadRequest` driven through its whole pipeline by `ScriptedEnvironment`: no Session,
/// no socket, but real files. Each test scripts the exchanges, makes the download, and checks what
/// the caller sees: the response, the file at its destination, the resume data; and that no
/// temporary file is left behind.
@Suite(.timeLimit(.minutes(1)))
struct DownloadRequestWithoutSessionTests {
    private static let address = "https://files.example.test/archive.bin"

    /// The caller's view of a finished download, and the lifetime events seen. Checks the
    /// environment was called on its root queue only.
    private static func run(_ request: DownloadRequest, in environment: ScriptedEnvironment)
        async -> (response: DownloadResponse<URL, AFError>, events: [String]) {
        let recorder = RequestEventRecorder(queue: environment.rootQueue)
        request.eventMonitor(recorder)
        let response = await request.serializingDownloadedFileURL().response
        await environment.drain()
        #expect(environment.recorded.callsOffTheRootQueue.isEmpty)
        return (response, recorder.events)
    }

    /// Whether the temporary files of `requests` are gone (they are removed off the root queue,
    /// possibly after the response reached the caller). Any still there are removed, so that a
    /// failing test leaves nothing behind either.
    private static func leaveNoTemporaryFile(_ requests: [Request]) async -> Bool {
        let gone = await waitUntil(timeout: 10) { temporaryFilesLeft(by: requests).isEmpty }
        let directory = FileManager.default.temporaryDirectory
        for name in temporaryFilesLeft(by: requests) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        return gone
    }

    @Test func theBodyIsWrittenToTheDestinationFile() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "11"]), .text("hello "), .text("world"), .complete(nil)],
        ])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(response.value == destination)
        #expect(response.fileURL == destination)
        #expect(response.response?.statusCode == 200)
        #expect(contents(of: destination) == Data("hello world".utf8))
        #expect(response.resumeData == nil)
        #expect(request.downloadProgress.completedUnitCount == 11)
        #expect(environment.recorded.sent.count == 1)
        #expect(events == ["resume", "finish"])
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func withoutADestinationTheFileLandsBesideTheTemporaryFileUnderAlamofiresName() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "4"]), .text("data"), .complete(nil)],
        ])
        let request = environment.downloadRequest(url)

        let (response, _) = await Self.run(request, in: environment)
        let fileURL = try #require(response.fileURL)
        defer { try? FileManager.default.removeItem(at: fileURL) }

        #expect(fileURL.lastPathComponent.hasPrefix("Alamofire_\(DownloadFiles.prefix)"))
        #expect(fileURL.deletingLastPathComponent().standardizedFileURL.path
            == FileManager.default.temporaryDirectory.standardizedFileURL.path)
        #expect(contents(of: fileURL) == Data("data".utf8))
    }

    @Test func aRetryAfterAFailureMidBodyLeavesOnlyTheSecondAttemptsBody() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        // The first response could be resumed (a strong ETag): its failure makes resume data,
        // whose partial file the retry, starting from zero, must neither splice nor leave behind.
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10", "ETag": "\"v1\""]), .text("stale"), .complete(URLError(.networkConnectionLost))],
            [.head(200, fields: ["Content-Length": "10", "ETag": "\"v2\""]), .text("fresh"), .text(" body"), .complete(nil)],
        ], retryAnswers: [.retry])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(contents(of: destination) == Data("fresh body".utf8))
        #expect(response.resumeData == nil)
        #expect(request.retryCount == 1)
        #expect(environment.recorded.retryQuestions.first?.underlyingError.flatMap { $0 as? URLError }?.code == .networkConnectionLost)
        // The retry asks for the whole body again: no range of the first attempt's bytes.
        #expect(environment.recorded.sent.count == 2)
        #expect(environment.recorded.sent.last?.headerFields.contains { $0.name == "Range" } == false)
        #expect(request.downloadProgress.completedUnitCount == 10)
        #expect(events == ["resume", "retrying", "finish"])
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func aRetryAfterAFailureBeforeTheHeadWritesTheWholeBody() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.complete(URLError(.timedOut))],
            [.head(200, fields: ["Content-Length": "5"]), .text("whole"), .complete(nil)],
        ], retryAnswers: [.retry])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(contents(of: destination) == Data("whole".utf8))
        #expect(environment.recorded.attempts == 2)
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func aFailedDownloadLeavesNoFile() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        // No validator: the partial body cannot be resumed, so it is not kept.
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10"]), .text("part"), .complete(URLError(.networkConnectionLost))],
        ])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(response.resumeData == nil)
        #expect(response.fileURL == nil)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(await Self.leaveNoTemporaryFile([request]))
    }
}

// MARK: Cancellation and resume data

extension DownloadRequestWithoutSessionTests {
    @Test func cancelProducingResumeDataMidBodyKeepsThePartialFileForTheResumedDownload() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10", "ETag": "\"v1\""]), .text("first"),
             .perform { ($0 as? DownloadRequest)?.cancel(producingResumeData: true) }],
            [.head(206, fields: ["Content-Length": "5", "Content-Range": "bytes 5-9/10", "ETag": "\"v1\""]), .text("after"), .complete(nil)],
        ])
        let first = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (cancelled, events) = await Self.run(first, in: environment)

        #expect(cancelled.error?.isExplicitlyCancelledError == true)
        #expect(cancelled.response?.statusCode == 200)
        #expect(cancelled.fileURL == nil)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(events == ["resume", "cancel", "finish"])
        let resumeData = try #require(cancelled.resumeData)
        #expect(first.resumeData == resumeData)
        let resume = try #require(ResumeData(data: resumeData))
        #expect(resume.bytesOnDisk == 5)
        #expect(resume.entityTag == "\"v1\"")
        #expect(contents(of: URL(fileURLWithPath: resume.temporaryFile)) == Data("first".utf8))

        let resumed = environment.downloadRequest(resumingWith: resumeData, to: { _, _ in (destination, []) })
        let (response, _) = await Self.run(resumed, in: environment)

        #expect(response.error == nil)
        #expect(response.response?.statusCode == 206)
        #expect(contents(of: destination) == Data("firstafter".utf8))
        let asked = environment.recorded.sent.last?.headerFields ?? []
        #expect(asked.first { $0.name == "Range" }?.value == "bytes=5-")
        #expect(asked.first { $0.name == "If-Range" }?.value == "\"v1\"")
        #expect(await Self.leaveNoTemporaryFile([first, resumed]))
    }

    @Test func cancelByProducingResumeDataHandsItToTheHandlerBeforeTheResponse() async throws {
        let url = try #require(URL(string: Self.address))
        let handed = Locked<[String]>([])
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"]), .text("first"),
             .perform { request in
                 (request as? DownloadRequest)?.cancel(byProducingResumeData: { data in
                     handed.withValue { $0.append(data == nil ? "nil" : "data") }
                 })
             }],
        ])
        let request = environment.downloadRequest(url)
        request.response(queue: environment.rootQueue) { _ in handed.withValue { $0.append("response") } }

        let (response, _) = await Self.run(request, in: environment)
        let resumeData = try #require(response.resumeData)
        let resume = try #require(ResumeData(data: resumeData))
        defer { try? FileManager.default.removeItem(atPath: resume.temporaryFile) }

        #expect(await waitUntil(timeout: 10) { handed.current.count == 2 })
        #expect(handed.current == ["data", "response"])
        #expect(resume.lastModified == "Tue, 01 Dec 2026 10:00:00 GMT")
        #expect(resume.bytesOnDisk == 5)
    }

    @Test func cancelProducingResumeDataOfAnUnresumableResponseProducesNone() async throws {
        let url = try #require(URL(string: Self.address))
        // No ETag nor Last-Modified: nothing to send as If-Range, so URLSession makes no resume data.
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10"]), .text("first"),
             .perform { ($0 as? DownloadRequest)?.cancel(producingResumeData: true) }],
        ])
        let request = environment.downloadRequest(url)

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.resumeData == nil)
        #expect(request.resumeData == nil)
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func plainCancelMidBodyRemovesThePartialFile() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10", "ETag": "\"v1\""]), .text("first"), .perform { $0.cancel() }],
        ])
        let request = environment.downloadRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.resumeData == nil)
        #expect(response.fileURL == nil)
        #expect(events == ["resume", "cancel", "finish"])
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func cancelBeforeTheHopSendsNothingAndWritesNothing() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [[.head(200), .complete(nil)]], beforeHop: { $0.cancel() })
        let request = environment.downloadRequest(url)

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(response.response == nil)
        #expect(environment.recorded.sent.isEmpty)
        #expect(events == ["resume", "cancel", "finish"])
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func aTransportFailureOfAResumableResponsePutsResumeDataInTheError() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10", "ETag": "\"v1\""]), .text("first"), .complete(URLError(.networkConnectionLost))],
            [.head(206, fields: ["Content-Length": "5", "Content-Range": "bytes 5-9/10", "ETag": "\"v1\""]), .text("after"), .complete(nil)],
        ])
        let first = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (failed, _) = await Self.run(first, in: environment)

        // As URLSession puts resume data in the error of a failed download task.
        #expect(failed.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        let resumeData = try #require(failed.error?.downloadResumeData)
        #expect(failed.resumeData == resumeData)

        let resumed = environment.downloadRequest(resumingWith: resumeData, to: { _, _ in (destination, []) })
        let (response, _) = await Self.run(resumed, in: environment)

        #expect(response.error == nil)
        #expect(contents(of: destination) == Data("firstafter".utf8))
        #expect(await Self.leaveNoTemporaryFile([first, resumed]))
    }
}

// MARK: Redirects, challenges, validation, suspension

extension DownloadRequestWithoutSessionTests {
    @Test func aRedirectsBodyNeverReachesTheFile() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(302, fields: ["Location": "https://mirror.example.test/archive.bin", "Content-Length": "9"]), .text("elsewhere"),
             .complete(nil)],
            [.head(200, fields: ["Content-Length": "7"]), .text("archive"), .complete(nil)],
        ])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(response.response?.url?.host == "mirror.example.test")
        #expect(contents(of: destination) == Data("archive".utf8))
        #expect(environment.recorded.sent.map(\.url.host) == ["files.example.test", "mirror.example.test"])
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func aChallengesBodyNeverReachesTheFile() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(401, fields: ["WWW-Authenticate": "Basic realm=\"files\"", "Content-Length": "11"]), .text("who are you"),
             .complete(nil)],
            [.head(200, fields: ["Content-Length": "7"]), .text("archive"), .complete(nil)],
        ])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })
        request.authenticate(username: "user", password: "secret")

        let (response, _) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(contents(of: destination) == Data("archive".utf8))
        let answer = environment.recorded.sent.last?.headerFields.first { $0.name == "Authorization" }
        #expect(answer?.value == "Basic " + Data("user:secret".utf8).base64EncodedString())
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func anUnacceptableStatusFailsValidationWithTheFileAtItsDestination() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(404, fields: ["Content-Length": "9"]), .text("not found"), .complete(nil)],
        ])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) }).validate()

        let (response, _) = await Self.run(request, in: environment)

        // As in Alamofire: the file is moved before the validators run, and stays.
        #expect(response.error?.responseCode == 404)
        #expect(response.fileURL == destination)
        #expect(contents(of: destination) == Data("not found".utf8))
        // The retriers are asked about the validation failure (again for each serializer, as in Alamofire).
        #expect(!environment.recorded.retryQuestions.isEmpty)
        #expect(environment.recorded.retryQuestions.allSatisfy { $0.responseCode == 404 })
        #expect(await Self.leaveNoTemporaryFile([request]))
    }

    @Test func suspendedMidBodyTheDownloadCompletesItsFileOnceResumed() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("archive.bin")
        let environment = ScriptedEnvironment(exchanges: [
            [.head(200, fields: ["Content-Length": "10"]), .text("first"),
             .perform { request in
                 request.suspend()
                 DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { request.resume() }
             },
             .text("after"), .complete(nil)],
        ])
        let request = environment.downloadRequest(url, to: { _, _ in (destination, []) })

        let (response, events) = await Self.run(request, in: environment)

        #expect(response.error == nil)
        #expect(contents(of: destination) == Data("firstafter".utf8))
        #expect(events == ["resume", "suspend", "resume", "finish"])
        #expect(await Self.leaveNoTemporaryFile([request]))
    }
}

// MARK: Placing the file

extension DownloadRequestWithoutSessionTests {
    private static let archive: [ScriptedStep] = [.head(200, fields: ["Content-Length": "7"]), .text("archive"), .complete(nil)]

    @Test func theOptionsCreateTheDirectoriesAndReplaceAPreviousFile() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let previous = scratch.file("archive.bin")
        try Data("old".utf8).write(to: previous)
        let nested = scratch.file("nested/deeper/archive.bin")
        let environment = ScriptedEnvironment(exchanges: [Self.archive, Self.archive])
        let replacing = environment.downloadRequest(url, to: { _, _ in (previous, [.removePreviousFile]) })
        let creating = environment.downloadRequest(url, to: { _, _ in (nested, [.createIntermediateDirectories]) })

        let (replaced, _) = await Self.run(replacing, in: environment)
        let (created, _) = await Self.run(creating, in: environment)

        #expect(replaced.error == nil)
        #expect(contents(of: previous) == Data("archive".utf8))
        #expect(created.error == nil)
        #expect(contents(of: nested) == Data("archive".utf8))
        #expect(await Self.leaveNoTemporaryFile([replacing, creating]))
    }

    @Test func aMoveThatFailsIsDownloadedFileMoveFailedAndTheTemporaryFileGoes() async throws {
        let url = try #require(URL(string: Self.address))
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let previous = scratch.file("archive.bin")
        try Data("old".utf8).write(to: previous)
        let environment = ScriptedEnvironment(exchanges: [Self.archive])
        // A file already there, and no .removePreviousFile: the move fails.
        let request = environment.downloadRequest(url, to: { _, _ in (previous, []) })

        let (response, _) = await Self.run(request, in: environment)

        guard case let .downloadedFileMoveFailed(_, source, destination)? = response.error else {
            Issue.record("expected downloadedFileMoveFailed, got \(String(describing: response.error))")
            return
        }
        #expect(destination == previous)
        #expect(source.lastPathComponent.hasPrefix(DownloadFiles.prefix))
        #expect(!FileManager.default.fileExists(atPath: source.path))
        #expect(contents(of: previous) == Data("old".utf8))
        #expect(response.fileURL == nil)
        #expect(await Self.leaveNoTemporaryFile([request]))
    }
}
