import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Behaviour that Alamofire's DownloadTests assert, over loopback.
@Suite struct DownloadAlamofireParityTests {
    private static let size = 4 << 20
    private static let cut = 1 << 20

    /// Counts each named event, so a test can say every one was sent exactly once.
    private final class EventCounts: Sendable {
        let counts = Locked<[String: Int]>([:])

        func note(_ name: String) {
            counts.withValue { $0[name, default: 0] += 1 }
        }

        var current: [String: Int] { counts.current }
    }

    private static func response(of request: DownloadRequest) async -> DownloadResponse<URL?, AFError> {
        await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }
        }
    }

    // MARK: Moving the file

    @Test func movingIntoAMissingDirectoryFailsWithNoSuchFileAndKeepsTheResponse() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("some/random/folder/test_output.json")

        let response = await Self.response(of: AF.download(server.url("/get"), to: { _, _ in (destination, []) }))

        #expect(response.request != nil)
        #expect(response.response != nil)
        #expect(response.fileURL == nil)
        #expect(response.resumeData == nil)
        #expect((response.error?.underlyingError as? CocoaError)?.code == .fileNoSuchFile)
    }

    @Test func movingOntoAnOccupiedDestinationFailsWithFileExistsAndKeepsTheResponse() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("some/random/folder/test_output.json")
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("random_data".utf8).write(to: destination)

        let response = await Self.response(of: AF.download(server.url("/get"), to: { _, _ in (destination, []) }))

        #expect(response.request != nil)
        #expect(response.response != nil)
        #expect(response.fileURL == nil)
        #expect(response.resumeData == nil)
        #expect((response.error?.underlyingError as? CocoaError)?.code == .fileWriteFileExists)
    }

    @Test func bothOptionsTogetherReplaceAFileInAnExistingDirectory() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination = scratch.file("some/random/folder/test_output.json")
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)

        let response = await Self.response(of: AF.download(server.url("/get"),
                                                           to: { _, _ in (destination, [.removePreviousFile, .createIntermediateDirectories]) }))

        #expect(response.response != nil)
        #expect(response.fileURL == destination)
        #expect(response.resumeData == nil)
        #expect(response.error == nil)
    }

    // MARK: Cancelling

    @Test func cancellingAtOnceGivesNoResponseAndNoFile() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let request = AF.download(server.url("/delay/5"), to: { _, _ in (scratch.file("body"), []) })
        let response = await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }.cancel()
        }

        #expect(response.response == nil)
        #expect(response.fileURL == nil)
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.state == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("body").path))
    }

    /// Alamofire cancels from a progress handler running on the session's root queue.
    @Test(arguments: [false, true])
    func cancellingFromTheProgressHandlerKeepsTheResponse(producingResumeData: Bool) async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.download(server.url("/bytes/\(Self.size)?seed=41&stall-after=\(Self.cut)"))
        let cancelled = Locked(false)
        request.downloadProgress(queue: session.rootQueue) { [unowned request] progress in
            guard progress.fractionCompleted > 0, !cancelled.current else { return }
            cancelled.withValue { $0 = true }
            request.cancel(producingResumeData: producingResumeData)
        }
        let response = await Self.response(of: request)

        #expect(response.request != nil)
        #expect(response.response?.statusCode == 200)
        #expect(response.fileURL == nil)
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect((response.resumeData != nil) == producingResumeData)
        #expect(response.resumeData == request.resumeData)
        var requests: [Request] = [request]
        if let resumeData = request.resumeData {
            // Resuming consumes the partial file.
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let resumed = session.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            requests.append(resumed)
            _ = await resumed.serializingData().response
        }
        let all = requests
        #expect(await waitUntil { temporaryFilesLeft(by: all).isEmpty })
        withExtendedLifetime(session) {}
    }

    @Test func resumeDataIsKeptWithADecodableSerializerAndResumingReportsOnlyProgressAboveZero() async throws {
        let server = try await testServer()
        let session = Session()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let first = session.download(server.url("/bytes/\(Self.size)?seed=42&stall-after=\(Self.cut)"))
        let cancelled = Locked(false)
        first.downloadProgress(queue: session.rootQueue) { [unowned first] progress in
            guard progress.fractionCompleted > 0, !cancelled.current else { return }
            cancelled.withValue { $0 = true }
            first.cancel(producingResumeData: true)
        }
        struct Body: Decodable, Sendable {}
        let firstResponse = await withCheckedContinuation { continuation in
            first.responseDecodable(of: Body.self) { continuation.resume(returning: $0) }
        }
        #expect(firstResponse.response != nil)
        #expect(firstResponse.fileURL == nil)
        #expect(firstResponse.result.failure != nil)
        let resumeData = try #require(first.resumeData)
        #expect(firstResponse.resumeData == resumeData)

        let progress = Locked<[Double]>([])
        let resumed = session.download(resumingWith: resumeData, to: { _, _ in (scratch.file("body"), []) })
            .downloadProgress(queue: session.rootQueue) { value in progress.withValue { $0.append(value.fractionCompleted) } }
        let response = await withCheckedContinuation { continuation in
            resumed.responseData { continuation.resume(returning: $0) }
        }

        #expect(response.response != nil)
        #expect(response.fileURL != nil)
        #expect(response.result.failure == nil)
        #expect(!progress.current.isEmpty)
        #expect(progress.current.allSatisfy { $0 > 0 }, "\(progress.current.prefix(3))")
        #expect(temporaryFilesLeft(by: [first, resumed]).isEmpty)
        withExtendedLifetime(session) {}
    }

    // MARK: Lifetime events

    @Test func aDownloadSendsEachLifetimeEventOnce() async throws {
        let server = try await testServer()
        let counts = EventCounts()
        let monitor = ClosureEventMonitor()
        monitor.requestDidCreateInitialURLRequest = { _, _ in counts.note("didCreateInitialURLRequest") }
        monitor.requestDidCreateURLRequest = { _, _ in counts.note("didCreateURLRequest") }
        monitor.requestDidCreateTask = { _, _ in counts.note("didCreateTask") }
        monitor.requestDidCompleteTaskWithError = { _, _, _ in counts.note("didCompleteTask") }
        monitor.requestDidFinishDownloadingUsingTaskWithResult = { _, _, _ in counts.note("didFinishDownloading") }
        monitor.requestDidCreateDestinationURL = { _, _ in counts.note("didCreateDestinationURL") }
        monitor.requestDidFinish = { _ in counts.note("didFinish") }
        monitor.requestDidResume = { _ in counts.note("didResume") }
        monitor.requestDidResumeTask = { _, _ in counts.note("didResumeTask") }
        monitor.requestDidParseDownloadResponse = { _, _ in counts.note("didParseResponse") }
        let session = Session(eventMonitors: [monitor])

        let request = session.download(server.url("/get"))
        let response = await Self.response(of: request)
        defer { response.fileURL.map { try? FileManager.default.removeItem(at: $0) } }
        let expected = ["didCreateInitialURLRequest", "didCreateURLRequest", "didCreateTask", "didCompleteTask",
                        "didFinishDownloading", "didCreateDestinationURL", "didFinish", "didResume", "didResumeTask",
                        "didParseResponse"]

        #expect(await waitUntil { counts.current.count == expected.count })
        #expect(counts.current == Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }))
        #expect(request.state == .finished)
        withExtendedLifetime(session) {}
    }

    @Test func aDownloadCancelledOnResumingItsTaskSendsEachLifetimeEventOnce() async throws {
        let server = try await testServer()
        let counts = EventCounts()
        let monitor = ClosureEventMonitor()
        monitor.requestDidCreateInitialURLRequest = { _, _ in counts.note("didCreateInitialURLRequest") }
        monitor.requestDidCreateURLRequest = { _, _ in counts.note("didCreateURLRequest") }
        monitor.requestDidCreateTask = { _, _ in counts.note("didCreateTask") }
        monitor.requestDidCompleteTaskWithError = { _, _, _ in counts.note("didCompleteTask") }
        monitor.requestDidFinish = { _ in counts.note("didFinish") }
        monitor.requestDidResume = { _ in counts.note("didResume") }
        monitor.requestDidParseDownloadResponse = { _, _ in counts.note("didParseResponse") }
        monitor.requestDidCancel = { _ in counts.note("didCancel") }
        monitor.requestDidCancelTask = { _, _ in counts.note("didCancelTask") }
        monitor.requestDidResumeTask = { request, _ in
            counts.note("didResumeTask")
            request.cancel()
        }
        let session = Session(startRequestsImmediately: false, eventMonitors: [monitor])

        let request = session.download(server.url("/delay/5"))
        let response = await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }
            request.resume()
        }
        let expected = ["didCreateInitialURLRequest", "didCreateURLRequest", "didCreateTask", "didCompleteTask",
                        "didFinish", "didResume", "didResumeTask", "didParseResponse", "didCancel", "didCancelTask"]

        #expect(await waitUntil { counts.current.count == expected.count })
        #expect(counts.current == Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }))
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.state == .cancelled)
        withExtendedLifetime(session) {}
    }
}
