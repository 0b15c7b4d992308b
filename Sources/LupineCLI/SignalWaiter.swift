import Dispatch
import Foundation
import Synchronization

/// Catches SIGINT and SIGTERM, so that a foreground command shuts down cleanly instead of being
/// killed.
///
/// Unchecked Sendable: the dispatch sources (not Sendable themselves) are set once in `init` and
/// only cancelled in `deinit`; every other access goes through `state`'s lock.
final class SignalWaiter: @unchecked Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Int32, Never>)
        case received(Int32)
    }

    private let state = Mutex(State.idle)
    private var sources: [any DispatchSourceSignal] = []

    /// Takes `signals` over from now on: they no longer end the process. A signal that arrives
    /// before `wait()` is kept for it.
    init(signals: [Int32] = [SIGINT, SIGTERM]) {
        let queue = DispatchQueue(label: "lupine.cli.signals")
        let newSources = signals.map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { [weak self] in self?.receive(signalNumber) }
            source.resume()
            return source
        }
        sources = newSources
    }

    /// Returns the first signal received (at once when it came before the call).
    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let received = state.withLock { state -> Int32? in
                switch state {
                case let .received(signalNumber):
                    return signalNumber
                case .idle, .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let received { continuation.resume(returning: received) }
        }
    }

    private func receive(_ signalNumber: Int32) {
        let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
            switch state {
            case .idle:
                state = .received(signalNumber)
                return nil
            case let .waiting(continuation):
                state = .received(signalNumber)
                return continuation
            case .received:
                return nil
            }
        }
        waiter?.resume(returning: signalNumber)
    }

    deinit {
        sources.forEach { $0.cancel() }
    }
}
