import Foundation
import Lupine
import LupineTestServer
import Testing

/// Nothing is kept alive after its work is done, and memory stays bounded.
@Suite struct ResourceTests {
    @Test func sessionAndRequestAreReleasedAfterUse() async throws {
        let server = try await testServer()
        let weakSession: WeakReference<Session>
        let weakRequest: WeakReference<DataRequest>
        do {
            let session = Session()
            weakSession = WeakReference(session)
            let request = session.request(server.url("/redirect/1"))
            weakRequest = WeakReference(request)
            let response = await request.validate().serializingData().response
            #expect(response.error == nil)
        }
        #expect(await waitUntil { weakSession.isReleased && weakRequest.isReleased })
    }

    @Test func failedAndCancelledRequestsAreReleasedToo() async throws {
        let server = try await testServer()
        let weakFailed: WeakReference<DataRequest>
        let weakCancelled: WeakReference<DataRequest>
        do {
            let failed = AF.request(server.url("/fault/close-mid-body"))
            weakFailed = WeakReference(failed)
            _ = await failed.serializingData().response
            let cancelled = AF.request(server.url("/delay/5"))
            weakCancelled = WeakReference(cancelled)
            let task = cancelled.serializingData()
            cancelled.cancel()
            _ = await task.response
        }
        #expect(await waitUntil { weakFailed.isReleased && weakCancelled.isReleased })
    }

    /// The notifications of a request share one userInfo, which holds the request until its last
    /// notification: with two notification monitors posting on their own queues, each posts
    /// every notification with the request, and the request is still released.
    @Test func requestPostedByTwoNotificationMonitorsIsReleased() async throws {
        let server = try await testServer()
        let weakRequest: WeakReference<DataRequest>
        let finishes = Locked(0)
        let resumes = Locked(0)
        let requestID = Locked<UUID?>(nil)
        let observers = [(Request.didResumeNotification, resumes), (Request.didFinishNotification, finishes)].map { name, count in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                if let id = note.request?.id, id == requestID.current { count.withValue { $0 += 1 } }
            }
        }
        defer { observers.forEach { NotificationCenter.default.removeObserver($0) } }
        do {
            let session = Session(eventMonitors: [AlamofireNotifications(), AlamofireNotifications()])
            let request = session.request(server.url("/get"))
            requestID.withValue { $0 = request.id }
            weakRequest = WeakReference(request)
            let response = await request.validate().serializingData().response
            #expect(response.error == nil)
            #expect(await waitUntil { finishes.current == 2 })
            #expect(resumes.current == 2)
        }
        #expect(await waitUntil { weakRequest.isReleased })
    }

    @Test func bodyAnnouncedLargerThanTheMemoryBoundFailsBeforeReadingIt() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/bytes/\(600 * 1024 * 1024)"))
        let response = await request.serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .dataLengthExceedsMaximum)
        // Refused on the announced length: no body byte is taken in (reading until the 512 MiB
        // bound was crossed would count over 512 MiB here).
        #expect(request.downloadProgress.completedUnitCount == 0)
        #expect(await AF.performsNormalRequest(on: server))
    }
}
