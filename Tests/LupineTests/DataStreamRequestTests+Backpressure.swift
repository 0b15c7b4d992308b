import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// What a slow consumer saw while reading a large body.
private struct Measurement: Sendable {
    /// Largest `received - consumed` seen (bytes read from the socket but not yet handled).
    var largestGap = 0
    /// Bytes received when the slow phase ended.
    var receivedAfterSlowPhase = 0
    var consumed = 0
    var peakResident = 0
}

extension DataStreamRequestTests {
    /// 64 MiB read by a handler that sleeps 20 ms per chunk for its first second, then keeps up.
    /// Without backpressure the socket would be drained at loopback speed into queued chunks
    /// (tens of MiB ahead of the handler); with it, reading stalls within about 1 MiB of the
    /// handler, and the whole body still arrives once the handler speeds up.
    @Test func slowHandlerSlowsTheSocketInsteadOfBufferingTheBody() async throws {
        let server = try await testServer()
        let total = 64 << 20
        let queue = DispatchQueue(label: "test.slowConsumer")
        let measurement = Locked(Measurement())
        let residentBefore = residentMemoryBytes() ?? 0
        let start = Date()
        let request = AF.streamRequest(server.url("/bytes/\(total)"))
        let completion: DataStreamRequest.Completion = await withCheckedContinuation { continuation in
            request.responseStream(on: queue) { stream in
                guard let data = stream.value else {
                    if let completion = stream.completion { continuation.resume(returning: completion) }
                    return
                }
                let isSlowPhase = Date().timeIntervalSince(start) < 1
                if isSlowPhase { Thread.sleep(forTimeInterval: 0.02) }
                let received = Int(request.downloadProgress.completedUnitCount)
                let sample = measurement.withValue { value -> Bool in
                    value.consumed += data.count
                    value.largestGap = max(value.largestGap, received - value.consumed)
                    if isSlowPhase { value.receivedAfterSlowPhase = received }
                    return value.consumed % (4 << 20) < data.count
                }
                if sample, let resident = residentMemoryBytes() {
                    measurement.withValue { $0.peakResident = max($0.peakResident, resident) }
                }
            }
        }
        let result = measurement.current
        #expect(completion.error == nil)
        #expect(result.consumed == total)
        #expect(result.largestGap < 4 << 20, "received ran \(result.largestGap) bytes ahead of the handler")
        #expect(result.receivedAfterSlowPhase < 8 << 20, "\(result.receivedAfterSlowPhase) bytes read during the slow second")
        // Process-wide resident memory is not asserted here: tests running in parallel allocate too.
        // The gap between bytes read and bytes handled is the request's own buffer, measured exactly.
        _ = (result.peakResident, residentBefore)
    }

    /// The same through `streamingData()` with unbounded buffering: a chunk counts as handled only
    /// once the loop takes it, so a slow loop stalls the socket too.
    @Test func slowAsyncLoopSlowsTheSocket() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/bytes/\(64 << 20)"))
        var consumed = 0
        var largestGap = 0
        var iterations = 0
        for await stream in request.streamTask().streamingData() {
            guard let data = stream.value else { continue }
            consumed += data.count
            iterations += 1
            try await Task.sleep(nanoseconds: 20_000_000)
            largestGap = max(largestGap, Int(request.downloadProgress.completedUnitCount) - consumed)
            if iterations == 40 { break }
        }
        #expect(largestGap < 4 << 20, "received ran \(largestGap) bytes ahead of the loop")
        #expect(await waitUntil { request.isCancelled })
    }

    /// Sent over 3 seconds: the body cannot arrive whole between the first bytes and `suspend()`,
    /// however fast loopback is (64 MiB at full speed sometimes did, under load), and a request
    /// that kept reading while suspended would see the drip go on.
    static let suspendedBodySize = 4 << 20

    @Test func suspendStopsReadingUntilResume() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/drip?numbytes=\(Self.suspendedBodySize)&duration=3"))
        let consumed = Locked(0)
        let done = Locked(false)
        request.responseStream { stream in
            if let data = stream.value { consumed.withValue { $0 += data.count } }
            if stream.completion != nil { done.withValue { $0 = true } }
        }
        #expect(await waitUntil { consumed.current > 0 })
        let atSuspend = request.downloadProgress.completedUnitCount
        request.suspend()
        let whileSuspended = await valueOnceStill { request.downloadProgress.completedUnitCount }
        #expect(whileSuspended - atSuspend <= 1 << 20, "\(whileSuspended - atSuspend) bytes read after suspend()")
        try await Task.sleep(nanoseconds: 500_000_000)
        // Nothing more is read while suspended, though the server goes on sending; a handler
        // catching up meanwhile (its stream-consumer pause ending) must not read on either: both
        // are reasons of one read demand, and reading resumes only when neither holds.
        #expect(request.downloadProgress.completedUnitCount == whileSuspended)
        #expect(whileSuspended < Self.suspendedBodySize)
        request.resume()
        #expect(await waitUntil(timeout: 10) { done.current })
        #expect(consumed.current == Self.suspendedBodySize)
    }
}

extension DataStreamRequestTests {
    /// The response handler allows the body while the request is suspended: the body still waits
    /// for `resume()` (an answer to one pause reason is not a resume of the others).
    @Test func responseHandlerAllowingWhileSuspendedDoesNotReadOn() async throws {
        let server = try await testServer()
        let total = 16 << 20
        let request = AF.streamRequest(server.url("/bytes/\(total)"))
        let consumed = Locked(0)
        let done = Locked(false)
        let allowed = Locked(false)
        request.onHTTPResponse { _, completionHandler in
            request.suspend()
            completionHandler(.allow)
            allowed.withValue { $0 = true }
        }
        request.responseStream { stream in
            if let data = stream.value { consumed.withValue { $0 += data.count } }
            if stream.completion != nil { done.withValue { $0 = true } }
        }
        #expect(await waitUntil { allowed.current })
        try await Task.sleep(nanoseconds: 500_000_000)
        // Parts decoded from one socket read may still arrive; the rest of the body may not.
        #expect(request.downloadProgress.completedUnitCount < 1 << 20)
        #expect(!done.current)
        request.resume()
        #expect(await waitUntil(timeout: 10) { done.current })
        #expect(consumed.current == total)
    }
}

@Suite struct StreamDeliveryTests {
    @Test func pausesAboveTheByteBoundAndResumesOnceCaughtUp() {
        var delivery = StreamDelivery()
        let handler = delivery.addHandler()
        var pausedAt = 0
        for part in 1...40 where delivery.partArrived(byteCount: 64 << 10) {
            pausedAt = part
            break
        }
        #expect(pausedAt == 17)
        var resumedAfter = 0
        for finished in 1...pausedAt where delivery.deliveryFinished(handler: handler, byteCount: 64 << 10).resumeReading {
            resumedAfter = finished
            break
        }
        #expect(resumedAfter == 13)
        #expect(!delivery.isReadingPaused)
    }

    @Test func pausesAboveTheDeliveryBoundForSmallParts() {
        var delivery = StreamDelivery()
        _ = delivery.addHandler()
        _ = delivery.addHandler()
        let pauses = (1...40).map { _ in delivery.partArrived(byteCount: 10) }
        #expect(pauses.firstIndex(of: true) == 32)
        #expect(pauses.filter { $0 }.count == 1)
    }

    @Test func completionWaitsForTheHandlersLastDelivery() {
        var delivery = StreamDelivery()
        let first = delivery.addHandler()
        let second = delivery.addHandler()
        _ = delivery.partArrived(byteCount: 100)
        _ = delivery.deliveryFinished(handler: second, byteCount: 100)
        let secondSendsNow = delivery.completionRequested(handler: second)
        let firstSendsNow = delivery.completionRequested(handler: first)
        let lastDelivery = delivery.deliveryFinished(handler: first, byteCount: 100)
        let pausedWithoutHandlers = delivery.partArrived(byteCount: 100)
        #expect(secondSendsNow)
        #expect(!firstSendsNow)
        #expect(lastDelivery.sendCompletion)
        #expect(!pausedWithoutHandlers)
    }
}
