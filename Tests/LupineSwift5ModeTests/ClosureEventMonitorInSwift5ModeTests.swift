import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// `ClosureEventMonitor` set up as code written for Alamofire sets it up, in the Swift 5 language
/// mode: every closure property Alamofire declares is assigned, the URLSession-typed ones and
/// `requestDidGatherMetrics` included. Lupine runs no URLSession: those are never called, while
/// the request events arrive as in Alamofire.
@Suite struct ClosureEventMonitorInSwift5ModeTests {
    /// The names of the closures that were called; thread-safe.
    final class Calls: @unchecked Sendable {
        private let lock = NSLock()
        private var names: [String] = []

        func record(_ name: String) {
            lock.lock()
            names.append(name)
            lock.unlock()
        }

        var all: Set<String> {
            lock.lock()
            defer { lock.unlock() }
            return Set(names)
        }
    }

    @Test func urlSessionClosuresAreNeverCalledWhileRequestClosuresAre() async throws {
        let server = try await LupineTestServer.start()
        let calls = Calls()
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "monitor"))
        monitor.sessionDidBecomeInvalidWithError = { _, _ in calls.record("sessionDidBecomeInvalidWithError") }
        monitor.taskDidReceiveChallenge = { _, _, _ in calls.record("taskDidReceiveChallenge") }
        monitor.taskDidSendBodyData = { _, _, _, _, _ in calls.record("taskDidSendBodyData") }
        monitor.taskNeedNewBodyStream = { _, _ in calls.record("taskNeedNewBodyStream") }
        monitor.taskWillPerformHTTPRedirection = { _, _, _, _ in calls.record("taskWillPerformHTTPRedirection") }
        monitor.taskDidFinishCollectingMetrics = { _, _, _ in calls.record("taskDidFinishCollectingMetrics") }
        monitor.taskDidComplete = { _, _, _ in calls.record("taskDidComplete") }
        monitor.taskIsWaitingForConnectivity = { _, _ in calls.record("taskIsWaitingForConnectivity") }
        monitor.dataTaskDidReceiveResponse = { _, _, _ in calls.record("dataTaskDidReceiveResponse") }
        monitor.dataTaskDidReceiveData = { _, _, _ in calls.record("dataTaskDidReceiveData") }
        monitor.dataTaskWillCacheResponse = { _, _, _ in calls.record("dataTaskWillCacheResponse") }
        monitor.downloadTaskDidFinishDownloadingToURL = { _, _, _ in calls.record("downloadTaskDidFinishDownloadingToURL") }
        monitor.downloadTaskDidWriteData = { _, _, _, _, _ in calls.record("downloadTaskDidWriteData") }
        monitor.downloadTaskDidResumeAtOffset = { _, _, _, _ in calls.record("downloadTaskDidResumeAtOffset") }
        monitor.requestDidGatherMetrics = { _, _ in calls.record("requestDidGatherMetrics") }
        monitor.requestDidCreateTask = { _, _ in calls.record("requestDidCreateTask") }
        monitor.requestDidCompleteTaskWithError = { _, _, _ in calls.record("requestDidCompleteTaskWithError") }
        monitor.requestDidFinish = { _ in calls.record("requestDidFinish") }
        monitor.requestDidParseResponse = { _, _ in calls.record("requestDidParseResponse") }
        monitor.requestDidFinishDownloadingUsingTaskWithResult = { _, _, _ in calls.record("requestDidFinishDownloading") }

        let session = Session(eventMonitors: [monitor])
        // A redirect, an upload body, a body received and cached, a download: every URLSession
        // event would fire for these in Alamofire.
        _ = await session.request(server.url("/redirect/1")).serializingData().response
        _ = await session.upload(Data("body".utf8), to: server.url("/post")).serializingData().response
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.request(server.url("/cache/60")).response { _ in continuation.resume() }
        }
        let download = await session.download(server.url("/bytes/100")).serializingData().response
        if let fileURL = download.fileURL { try? FileManager.default.removeItem(at: fileURL) }
        // The monitor's queue has run what was queued before this.
        monitor.queue.sync {}
        try await server.shutdown()

        #expect(calls.all == ["requestDidCreateTask", "requestDidCompleteTaskWithError", "requestDidFinish",
                              "requestDidParseResponse", "requestDidFinishDownloading"])
    }
}
