import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOPosix
import Testing

/// Root-queue work runs on the calling thread when the queue is free, in order behind what is
/// queued otherwise, and never so that two Sessions wait for each other.
@Suite struct RootQueueRunnerTests {
    @Test func workRunsOnTheRootQueueOnTheCallingThreadWhenItIsFree() {
        let runner = RootQueueRunner(queue: DispatchQueue(label: "test.root"))
        let caller = RootQueueRunner.currentThread()
        let seen = Locked<(onQueue: Bool, sameThread: Bool)?>(nil)
        runner.run { seen.withValue { $0 = (runner.isCurrent, RootQueueRunner.currentThread() == caller) } }
        #expect(seen.current?.onQueue == true)
        #expect(seen.current?.sameThread == true)
        #expect(!runner.isCurrent)
    }

    /// Nothing inside Lupine waits on the main queue: work for a Session rooted there is queued,
    /// never run from another thread inside `DispatchQueue.main.sync` (on Linux, where each read
    /// of `DispatchQueue.main` is a new object, an identity check used to miss it).
    @Test func workForARootOnTheMainQueueIsQueuedNeverWaitedFor() async {
        #expect(RootQueueRunner.isMainQueue(DispatchQueue.main))
        #expect(!RootQueueRunner.isMainQueue(DispatchQueue(label: "test.root")))
        #expect(!RootQueueRunner.isMainQueue(DispatchQueue(label: "test.targetsMain", target: DispatchQueue.main)))
        let runner = RootQueueRunner(queue: DispatchQueue.main)
        #expect(!runner.isFreeForWorkFromOutside)
        let returned = Locked(false)
        let ranOnTheCallingThread = Locked<Bool?>(nil)
        Thread.detachNewThread {
            let caller = RootQueueRunner.currentThread()
            runner.run { ranOnTheCallingThread.withValue { $0 = RootQueueRunner.currentThread() == caller } }
            returned.withValue { $0 = true }
        }
        #expect(await waitUntil(timeout: 10) { returned.current })
        #expect(ranOnTheCallingThread.current != true)
    }

    @Test func workQueuedBehindOtherWorkKeepsItsOrder() async {
        let runner = RootQueueRunner(queue: DispatchQueue(label: "test.root"))
        let order = Locked<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        runner.async { gate.wait(); order.withValue { $0.append(1) } }
        // The queue is busy: this must not run here, ahead of the first.
        runner.run { order.withValue { $0.append(2) } }
        order.withValue { $0.append(0) }
        gate.signal()
        #expect(await waitUntil { order.current.count == 3 })
        #expect(order.current == [0, 1, 2])
    }

    /// The thread contract: root-queue work (user code among it) never runs on an event loop,
    /// even with the root queue idle; the loop queues it and goes on.
    @Test func workAskedForOnAnEventLoopIsQueuedNotRunThere() async {
        let runner = RootQueueRunner(queue: DispatchQueue(label: "test.root"))
        let ranOnALoop = Locked<Bool?>(nil)
        MultiThreadedEventLoopGroup.singleton.next().execute {
            runner.run { ranOnALoop.withValue { $0 = ThreadContract.isOnEventLoop } }
            runner.run(runner) { _ in ranOnALoop.withValue { $0 = ($0 ?? false) || ThreadContract.isOnEventLoop } }
        }
        #expect(await waitUntil { ranOnALoop.current != nil })
        #expect(ranOnALoop.current == false)
    }

    @Test func actionsDeferredByRootQueueWorkRunOnceItIsOver() {
        let runner = RootQueueRunner(queue: DispatchQueue(label: "test.root"))
        let seen = Locked<[String]>([])
        final class Work: DeferredRootQueueWork {
            let action: @Sendable () -> Void
            init(_ action: @escaping @Sendable () -> Void) { self.action = action }
            func runAfterRootQueueWork() { action() }
        }
        runner.run {
            for name in ["first", "second", "third"] {
                runner.afterCurrentWork(Work { seen.withValue { $0.append(runner.isCurrent ? "\(name) on the queue" : "\(name) after") } })
            }
            seen.withValue { $0.append("work") }
        }
        #expect(seen.current == ["work", "first after", "second after", "third after"])
        // Outside root-queue work, at once.
        runner.afterCurrentWork(Work { seen.withValue { $0.append("now") } })
        #expect(seen.current.last == "now")
    }

    /// Monitors of each Session start requests on the other from inside their root-queue work:
    /// neither may enter the other's root queue synchronously, or both could wait forever.
    @Test func twoSessionsStartingRequestsOnEachOtherNeverWaitForEachOther() async throws {
        let server = try await testServer()
        let url = server.url("/get")
        let box = Locked<(a: Session?, b: Session?)>((nil, nil))
        let sent = Locked(0)
        final class Starter: EventMonitor, @unchecked Sendable {
            let start: @Sendable () -> Void
            init(_ start: @escaping @Sendable () -> Void) { self.start = start }
            func requestDidFinish(_ request: Request) { start() }
        }
        let a = Session(eventMonitors: [Starter {
            guard sent.increment() <= 40 else { return }
            box.current.b?.request(url).response { _ in }
        }])
        let b = Session(eventMonitors: [Starter {
            guard sent.increment() <= 40 else { return }
            box.current.a?.request(url).response { _ in }
        }])
        box.withValue { $0 = (a, b) }
        for _ in 0..<4 {
            a.request(url).response { _ in }
            b.request(url).response { _ in }
        }
        #expect(await waitUntil(timeout: 20) { sent.current > 40 })
        box.withValue { $0 = (nil, nil) }
        withExtendedLifetime((a, b)) {}
    }
}
