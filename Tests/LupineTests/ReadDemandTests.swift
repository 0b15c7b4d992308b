import Foundation
@testable import Lupine
import NIOConcurrencyHelpers
import Testing

/// A task that records the read-demand calls it gets, in order; `onResume` runs inside
/// `resumeReading()` as a transport that delivers held events from it would.
private final class RecordingTask: TransportTask {
    enum Call: Equatable { case pause, resume }
    let calls = NIOLockedValueBox<[Call]>([])
    let onResume = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)

    func cancel() {}
    func pauseReading() { calls.withLockedValue { $0.append(.pause) } }
    func resumeReading() {
        calls.withLockedValue { $0.append(.resume) }
        onResume.withLockedValue { $0 }?()
    }

    var recorded: [Call] { calls.withLockedValue { $0 } }
}

/// The one owner of a request's read demand: a set of pause reasons, one pause when it fills and
/// one resume when it empties, whatever the threads.
@Suite struct ReadDemandTests {
    @Test func pausesOnTheFirstReasonAndResumesOnlyWhenNoneIsLeft() {
        let demand = ReadDemand()
        let task = RecordingTask()
        demand.attach(task, hop: 1)
        #expect(task.recorded.isEmpty)
        demand.add(.suspended)
        demand.add(.streamConsumer)
        #expect(task.recorded == [.pause])
        demand.remove(.streamConsumer)
        #expect(task.recorded == [.pause])
        demand.remove(.suspended)
        #expect(task.recorded == [.pause, .resume])
        // Removing a reason that is not there calls nothing.
        demand.remove(.diskWriter)
        #expect(task.recorded == [.pause, .resume])
    }

    @Test func aTaskAttachedWhileAReasonHoldsIsPausedAtOnce() {
        let demand = ReadDemand()
        demand.add(.suspended)
        let task = RecordingTask()
        demand.attach(task, hop: 1)
        demand.attach(task, hop: 1)
        #expect(task.recorded == [.pause])
    }

    @Test func theReasonsOfAHopEndWithItAndTheRequestsCarryOver() {
        let demand = ReadDemand()
        let first = RecordingTask()
        demand.attach(first, hop: 1)
        demand.add([.suspended, .responseHandler, .redirectHandler, .diskWriter, .streamConsumer])
        demand.detach(first, hop: 1)
        #expect(demand.reasons == [.suspended, .streamConsumer])
        #expect(first.recorded == [.pause])
        let second = RecordingTask()
        demand.attach(second, hop: 2)
        #expect(second.recorded == [.pause])
        demand.remove([.suspended, .streamConsumer])
        #expect(second.recorded == [.pause, .resume])
        // The ended task is told nothing more.
        #expect(first.recorded == [.pause])
    }

    @Test func aLateAnswerForAnEarlierHopChangesNothing() {
        let demand = ReadDemand()
        let first = RecordingTask()
        demand.attach(first, hop: 1)
        demand.add(.responseHandler, ifTask: first)
        demand.detach(first, hop: 1)
        let second = RecordingTask()
        demand.attach(second, hop: 2)
        demand.add(.responseHandler, ifTask: second)
        demand.remove(.responseHandler, ifTask: first)
        #expect(demand.reasons == [.responseHandler])
        #expect(second.recorded == [.pause])
        demand.add(.redirectHandler, ifTask: first)
        #expect(demand.reasons == [.responseHandler])
    }

    /// An exchange that ended before the request attached it (a connection refused on the event
    /// loop while `execute` had not returned yet) is not attached: held there, it would keep the
    /// request alive through its events for good.
    @Test func anExchangeThatEndedBeforeItWasAttachedIsNotHeld() {
        var state = ReadDemandState()
        let task = RecordingTask()
        state.detach(task, hop: 1)
        let attached = state.attach(task, hop: 1)
        #expect(!attached)
        #expect(state.task == nil)
        // The next hop attaches as usual.
        let next = RecordingTask()
        let attachedNext = state.attach(next, hop: 2)
        #expect(attachedNext && state.task === next)
    }

    /// A hop's `execute` that returns after the next hop has started (the redirect was answered
    /// on the transport's thread meanwhile) does not take the place of the next hop's exchange.
    @Test func anEarlierHopAttachedLateDoesNotReplaceTheNextOne() {
        let demand = ReadDemand()
        let first = RecordingTask(), second = RecordingTask()
        demand.detach(first, hop: 1)
        demand.attach(second, hop: 2)
        demand.attach(first, hop: 1)
        demand.add(.suspended)
        #expect(second.recorded == [.pause])
        #expect(first.recorded.isEmpty)
    }

    /// A transport that delivers held events from inside `resumeReading()`: a pause asked for by
    /// such an event reaches the transport before `resumeReading()` returns.
    @Test func aPauseFromInsideResumeIsAppliedAtOnce() {
        let demand = ReadDemand()
        let task = RecordingTask()
        demand.attach(task, hop: 1)
        demand.add(.streamConsumer)
        let seenInside = NIOLockedValueBox<[RecordingTask.Call]>([])
        task.onResume.withLockedValue { onResume in
            onResume = { [task] in
                task.onResume.withLockedValue { $0 = nil }
                demand.add(.streamConsumer)
                seenInside.withLockedValue { $0 = task.recorded }
            }
        }
        demand.remove(.streamConsumer)
        #expect(seenInside.withLockedValue { $0 } == [.pause, .resume, .pause])
        #expect(task.recorded == [.pause, .resume, .pause])
    }

    /// Many threads adding and removing reasons: the calls alternate, start with a pause, and end
    /// where the set ends.
    @Test func callsAlternateWhateverTheThreads() async {
        let demand = ReadDemand()
        let task = RecordingTask()
        demand.attach(task, hop: 1)
        let reasons: [ReadPauseReason] = [.suspended, .responseHandler, .redirectHandler, .streamConsumer, .diskWriter]
        await withTaskGroup(of: Void.self) { group in
            for reason in reasons {
                group.addTask {
                    for _ in 0..<200 {
                        demand.add(reason)
                        demand.remove(reason)
                    }
                }
            }
        }
        let calls = task.recorded
        #expect(calls.first == .pause)
        let alternates = zip(calls, calls.dropFirst()).allSatisfy { $0 != $1 }
        #expect(alternates)
        #expect(calls.last == .resume)
        #expect(demand.reasons.isEmpty)
    }

    /// A pause asked for on one thread while another is inside `resumeReading()` has reached the
    /// transport when the call that asked returns: an event loop that pauses from an event callback
    /// must not deliver the next event first. (It once waited for the other thread, which a busy
    /// machine may not schedule for milliseconds, while the event loop read on.)
    @Test func aPauseFromAnotherThreadDuringAResumeHasReachedTheTaskWhenItReturns() async {
        let demand = ReadDemand()
        let task = RecordingTask()
        demand.attach(task, hop: 1)
        demand.add(.streamConsumer)
        let inside = DispatchSemaphore(value: 0)
        task.onResume.withLockedValue { onResume in
            onResume = {
                inside.signal()
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        let resuming = Thread { demand.remove(.streamConsumer) }
        resuming.start()
        inside.wait()

        demand.add(.suspended)

        #expect(task.recorded == [.pause, .resume, .pause])
    }

    @Test func theStateAloneAnswersWhichCallComesNext() {
        var state = ReadDemandState()
        let task = RecordingTask()
        let attached = state.attach(task, hop: 1)
        let attachedAgain = state.attach(task, hop: 1)
        #expect(attached && !attachedAgain)
        let nothing = state.nextStep()
        #expect(nothing == nil)
        state.add(.suspended)
        let pause = state.nextStep()
        #expect(Self.describe(pause) == "pause" && state.isTaskPaused)
        let inLine = state.nextStep()
        #expect(inLine == nil)
        state.remove(.suspended)
        let resume = state.nextStep()
        #expect(Self.describe(resume) == "resume" && !state.isTaskPaused)
    }

    private static func describe(_ step: ReadDemandState.Step?) -> String {
        switch step {
        case .pause?: "pause"
        case .resume?: "resume"
        case nil: "none"
        }
    }
}
