import Dispatch
import Foundation
import Lupine
import Synchronization

/// Turns Ctrl-C (SIGINT), SIGTERM and SIGHUP into an orderly end: a command's own reaction first
/// (cancel the download, keep or remove its partial file), then the clean-ups registered with
/// `Termination`, then the exit status a shell expects after that signal (128 + its number: 130
/// for Ctrl-C).
///
/// A second signal while the reaction runs ends the process at once (the clean-ups still run).
final class InterruptHandling: Sendable {
    private let sources: Mutex<[any DispatchSourceSignal]>
    private let firstSignal: FirstSignal

    /// Set by the first signal.
    private final class FirstSignal: Sendable {
        private let seen = Mutex(false)

        var hasFired: Bool { seen.withLock { $0 } }

        /// True the first time only.
        func take() -> Bool {
            seen.withLock { seen in
                defer { seen = true }
                return !seen
            }
        }
    }

    /// The signals handled.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Takes the signals over from now on.
    ///
    /// - Parameter reaction: runs once, on the first signal, before the process exits; it gets the
    ///   signal's number.
    init(reaction: @escaping @Sendable (Int32) async -> Void) {
        let queue = DispatchQueue(label: "lupine.cli.interrupts")
        let firstSignal = FirstSignal()
        self.firstSignal = firstSignal
        let sources = Self.signals.map { signalNumber -> any DispatchSourceSignal in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                guard firstSignal.take() else { Termination.exit(128 + signalNumber) }
                Task {
                    await reaction(signalNumber)
                    Termination.exit(128 + signalNumber)
                }
            }
            source.resume()
            return source
        }
        self.sources = Mutex(sources)
    }

    /// Whether a signal has come.
    var hasFired: Bool { firstSignal.hasFired }

    /// Once a signal has come, waits for its reaction to end the process, so that the command
    /// does not report the cancellation the reaction caused as a failure of its own.
    func parkIfInterrupted() async {
        guard firstSignal.hasFired else { return }
        while true { try? await Task.sleep(nanoseconds: 60_000_000_000) }
    }

    /// Gives the signals back to their default action (the process ends at once).
    func stop() {
        let sources = self.sources.withLock { sources in
            defer { sources.removeAll() }
            return sources
        }
        sources.forEach { $0.cancel() }
        for signalNumber in Self.signals { signal(signalNumber, SIG_DFL) }
    }

    /// Cancels `session`'s requests and waits (up to five seconds) until they have ended, so that
    /// Lupine has removed the partial files of its downloads.
    static func cancelRequests(of session: Session) async {
        session.cancelAllRequests()
        for _ in 0..<500 {
            let running = await withCheckedContinuation { continuation in
                session.withAllRequests { continuation.resume(returning: $0.count) }
            }
            if running == 0 { return }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}
