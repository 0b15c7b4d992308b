/// The pure state machine behind a `Request`: it takes the lifecycle events (resume, suspend,
/// cancel, setup and transfer milestones, serializers) and answers with what the request must do.
/// It performs no I/O and calls nothing, so every rule of the lifecycle is tested on its own.
///
/// `state` is the public `Request.State`; `activity` is what the pipeline is busy with.
struct RequestLifecycle {
    /// What the pipeline is doing for the current attempt.
    enum Activity: Equatable, Sendable {
        /// Nothing started yet (lazy setup waits for the first resume).
        case idle
        /// Building and adapting the URLRequest.
        case preparing
        /// The URLRequest is ready; the exchange waits for the request to be resumed.
        case readyToTransfer
        /// An exchange is on the transport.
        case transferring
        /// The exchange ended; validators and retriers are deciding.
        case deciding
        /// A retry is scheduled.
        case waitingToRetry
        /// Response serializers run; the request is finishing.
        case finishing
        /// Serializers completed; only handlers added later run (on the stored outcome).
        case done
    }

    private(set) var state: Request.State = .initialized
    private(set) var activity: Activity = .idle

    // MARK: User-driven transitions

    enum ResumeAction: Equatable { case ignore, notify(then: AfterResume) }
    enum AfterResume: Equatable { case nothing, startSetup, startTransfer }

    /// `resume()`: allowed from `.initialized` and `.suspended`.
    mutating func resume(setupIsLazy: Bool) -> ResumeAction {
        guard state.canTransition(to: .resumed) else { return .ignore }
        state = .resumed
        switch activity {
        case .idle where setupIsLazy:
            return .notify(then: .startSetup)
        case .readyToTransfer:
            activity = .transferring
            return .notify(then: .startTransfer)
        default:
            return .notify(then: .nothing)
        }
    }

    /// `suspend()`: allowed from `.initialized` and `.resumed`.
    mutating func suspend() -> Bool {
        guard state.canTransition(to: .suspended) else { return false }
        state = .suspended
        return true
    }

    enum CancelAction: Equatable { case ignore, cancelTransfer, finish, notifyOnly }

    /// `cancel()`: allowed from every state but `.cancelled` and `.finished`.
    mutating func cancel() -> CancelAction {
        guard state.canTransition(to: .cancelled) else { return .ignore }
        state = .cancelled
        switch activity {
        case .transferring: return .cancelTransfer
        case .idle, .preparing, .readyToTransfer, .deciding, .waitingToRetry: return .finish
        case .finishing, .done: return .notifyOnly
        }
    }

    // MARK: Pipeline milestones

    /// Eager setup (or a retry) begins preparing; false if the request is cancelled or already busy.
    mutating func beginPreparing() -> Bool {
        guard state != .cancelled, state != .finished, activity == .idle || activity == .waitingToRetry else { return false }
        activity = .preparing
        return true
    }

    enum TransferStart: Equatable { case start, waitForResume, abandon }

    /// The URLRequest is ready. The exchange starts now if the request is resumed, waits for
    /// `resume()` if it is initialized or suspended (no byte goes out meanwhile), and is abandoned
    /// if the request was cancelled during setup.
    mutating func beginTransfer() -> TransferStart {
        guard activity == .preparing, state != .cancelled, state != .finished else { return .abandon }
        guard state == .resumed else {
            activity = .readyToTransfer
            return .waitForResume
        }
        activity = .transferring
        return .start
    }

    /// The exchange (all of its redirect hops) ended.
    mutating func transferCompleted() {
        if activity == .transferring || activity == .preparing { activity = .deciding }
    }

    /// A retry was decided; false when the request was cancelled meanwhile (it then finishes).
    mutating func scheduleRetry() -> Bool {
        guard state != .cancelled, state != .finished else { return false }
        activity = .waitingToRetry
        return true
    }

    /// The request starts finishing; false if it already was (finish happens once per run).
    mutating func beginFinishing() -> Bool {
        guard activity != .finishing, activity != .done else { return false }
        activity = .finishing
        return true
    }

    // MARK: Response serializers

    /// A response handler was added: a finished request goes back to `.resumed` to run it.
    /// Returns whether the request may be resumed automatically.
    mutating func serializerAdded() -> Bool {
        if state == .finished { state = .resumed }
        return state.canTransition(to: .resumed)
    }

    /// Every queued serializer has completed.
    mutating func serializersCompleted() {
        activity = .done
        // A cancelled request stays `.cancelled`, as in Alamofire.
        if state.canTransition(to: .finished) { state = .finished }
    }
}

extension Request.State {
    /// The transitions Alamofire allows: from `.initialized` anything; `.resumed` and `.suspended`
    /// swap and may be cancelled; `.cancelled` may only finish; `.finished` is terminal for the
    /// user-driven states.
    func canTransition(to newState: Request.State) -> Bool {
        switch (self, newState) {
        case (.initialized, _): true
        case (_, .initialized), (.cancelled, _), (.finished, _): false
        case (.resumed, .cancelled), (.suspended, .cancelled), (.resumed, .suspended), (.suspended, .resumed): true
        case (.suspended, .suspended), (.resumed, .resumed): false
        case (_, .finished): true
        }
    }
}
