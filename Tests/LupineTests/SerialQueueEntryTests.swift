import Dispatch
@testable import Lupine
import Testing

/// The synchronous entry of a Session's root queue behaves as `DispatchQueue.sync`: the work runs
/// on the queue, after what was queued before it, and the caller sees its results on return.
@Suite struct SerialQueueEntryTests {
    private struct Probe: QueueEntryBody {
        let key: DispatchSpecificKey<Int>
        var sawQueueValue: Int?
        var runs = 0

        mutating func run() {
            sawQueueValue = DispatchQueue.getSpecific(key: key)
            runs += 1
        }
    }

    @Test func workRunsOnTheQueueAndLeavesItsResultsWithTheCaller() {
        let queue = DispatchQueue(label: "test.entry")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 7)
        let entry = SerialQueueEntry(queue: queue)
        var probe = Probe(key: key)
        entry.sync(&probe)
        entry.sync(&probe)
        #expect(probe.sawQueueValue == 7)
        #expect(probe.runs == 2)
        #expect(DispatchQueue.getSpecific(key: key) == nil)
    }

    private struct Append: QueueEntryBody {
        let order: Locked<[Int]>
        mutating func run() { order.withValue { $0.append(2) } }
    }

    @Test func workWaitsForWhatTheQueueAlreadyHolds() {
        let queue = DispatchQueue(label: "test.entry")
        let order = Locked<[Int]>([])
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait(); order.withValue { $0.append(1) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { gate.signal() }
        var append = Append(order: order)
        SerialQueueEntry(queue: queue).sync(&append)
        #expect(order.current == [1, 2])
    }

    /// On Linux the entry must find the queue's `dispatch_queue_t`; were a Dispatch update to hide
    /// it, every root-queue entry would quietly cost two allocations more.
    @Test func onLinuxTheEntryMakesNoClosures() {
        #if os(Linux)
        #expect(SerialQueueEntry(queue: DispatchQueue(label: "test.entry")).entersWithoutClosures)
        #endif
    }

    private final class Recorder: @unchecked Sendable {
        let order: Locked<[Int]>
        let value: Int
        init(order: Locked<[Int]>, value: Int) { (self.order, self.value) = (order, value) }
        func record() { order.withValue { $0.append(value) } }
    }

    /// Work queued without a block keeps its place among the queue's other work, runs on the
    /// queue, and lets its object go once it has run.
    @Test func workQueuedWithoutABlockKeepsItsOrderAndLetsItsObjectGo() async {
        let queue = DispatchQueue(label: "test.entry")
        let entry = SerialQueueEntry(queue: queue)
        let order = Locked<[Int]>([])
        weak var released: Recorder?
        for value in 0..<20 {
            if value.isMultiple(of: 2) {
                let recorder = Recorder(order: order, value: value)
                if value == 0 { released = recorder }
                entry.async(retaining: recorder) { context in
                    SerialQueueEntry.takeRetained(context, as: Recorder.self)?.record()
                }
            } else {
                queue.async { order.withValue { $0.append(value) } }
            }
        }
        queue.sync {}
        #expect(order.current == Array(0..<20))
        #expect(released == nil)
    }
}
