@testable import Lupine
import Testing

/// The pure lifecycle state machine behind Request, without any I/O.
@Suite struct RequestLifecycleTests {
    @Test func stateTransitionsFollowAlamofiresTable() {
        typealias S = Request.State
        let all: [S] = [.initialized, .resumed, .suspended, .cancelled, .finished]
        for target in all { #expect(S.initialized.canTransition(to: target)) }
        #expect(S.resumed.canTransition(to: .suspended))
        #expect(S.suspended.canTransition(to: .resumed))
        #expect(S.resumed.canTransition(to: .cancelled))
        #expect(S.suspended.canTransition(to: .cancelled))
        #expect(!S.resumed.canTransition(to: .resumed))
        #expect(!S.suspended.canTransition(to: .suspended))
        for target in all {
            #expect(!S.cancelled.canTransition(to: target))
            #expect(!S.finished.canTransition(to: target))
        }
        #expect(!S.resumed.canTransition(to: .initialized))
    }

    @Test func firstResumeOfLazyRequestStartsSetupAndSecondIsIgnored() {
        var lifecycle = RequestLifecycle()
        let result1 = lifecycle.resume(setupIsLazy: true)
        #expect(result1 == .notify(then: .startSetup))
        let result2 = lifecycle.resume(setupIsLazy: true)
        #expect(result2 == .ignore)
        #expect(lifecycle.state == .resumed)
    }

    @Test func preparedRequestWaitsForResumeBeforeTransferring() {
        var lifecycle = RequestLifecycle()
        let result3 = lifecycle.beginPreparing()
        #expect(result3)
        let result4 = lifecycle.beginTransfer()
        #expect(result4 == .waitForResume)
        #expect(lifecycle.activity == .readyToTransfer)
        let result5 = lifecycle.resume(setupIsLazy: false)
        #expect(result5 == .notify(then: .startTransfer))
        #expect(lifecycle.activity == .transferring)
    }

    @Test func suspendAndResumeOfARunningTransferStartNothingNew() {
        var lifecycle = RequestLifecycle()
        _ = lifecycle.resume(setupIsLazy: true)
        let result6 = lifecycle.beginPreparing()
        #expect(result6)
        let result7 = lifecycle.beginTransfer()
        #expect(result7 == .start)
        let result9 = lifecycle.suspend()
        #expect(result9)
        let result10 = lifecycle.suspend()
        #expect(!result10)
        // Reading is paused by the request's read demand, not here.
        let result12 = lifecycle.resume(setupIsLazy: true)
        #expect(result12 == .notify(then: .nothing))
        #expect(lifecycle.activity == .transferring)
    }

    @Test func cancelActsOnWhatThePipelineIsDoing() {
        var idle = RequestLifecycle()
        let result14 = idle.cancel()
        #expect(result14 == .finish)
        let result15 = idle.cancel()
        #expect(result15 == .ignore)

        var transferring = RequestLifecycle()
        _ = transferring.resume(setupIsLazy: true)
        _ = transferring.beginPreparing()
        _ = transferring.beginTransfer()
        let result16 = transferring.cancel()
        #expect(result16 == .cancelTransfer)

        var finishing = RequestLifecycle()
        _ = finishing.beginFinishing()
        let result17 = finishing.cancel()
        #expect(result17 == .notifyOnly)
    }

    @Test func cancelledDuringSetupAbandonsTheTransfer() {
        var lifecycle = RequestLifecycle()
        _ = lifecycle.resume(setupIsLazy: true)
        _ = lifecycle.beginPreparing()
        let result18 = lifecycle.cancel()
        #expect(result18 == .finish)
        let result19 = lifecycle.beginTransfer()
        #expect(result19 == .abandon)
    }

    @Test func retryIsRefusedOnceCancelled() {
        var lifecycle = RequestLifecycle()
        _ = lifecycle.resume(setupIsLazy: true)
        _ = lifecycle.beginPreparing()
        _ = lifecycle.beginTransfer()
        lifecycle.transferCompleted()
        let result20 = lifecycle.scheduleRetry()
        #expect(result20)
        let result21 = lifecycle.beginPreparing()
        #expect(result21)
        _ = lifecycle.cancel()
        let result22 = lifecycle.scheduleRetry()
        #expect(!result22)
    }

    @Test func finishingHappensOnceAndCancelledStaysCancelled() {
        var lifecycle = RequestLifecycle()
        _ = lifecycle.cancel()
        let result23 = lifecycle.beginFinishing()
        #expect(result23)
        let result24 = lifecycle.beginFinishing()
        #expect(!result24)
        lifecycle.serializersCompleted()
        #expect(lifecycle.state == .cancelled)
        let result25 = lifecycle.beginFinishing()
        #expect(!result25)
    }

    @Test func handlerAddedAfterFinishResumesThenFinishesAgain() {
        var lifecycle = RequestLifecycle()
        _ = lifecycle.resume(setupIsLazy: true)
        _ = lifecycle.beginFinishing()
        lifecycle.serializersCompleted()
        #expect(lifecycle.state == .finished)
        let result26 = lifecycle.serializerAdded()
        #expect(!result26)
        #expect(lifecycle.state == .resumed)
        lifecycle.serializersCompleted()
        #expect(lifecycle.state == .finished)
    }
}
