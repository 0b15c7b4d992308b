import Foundation
import Synchronization

/// Ends the process from anywhere in the tool (a closed standard output, a signal), after running
/// the clean-ups registered so far, such as removing temporary files.
///
/// Clean-ups are quick and synchronous; one that must wait for a request to end runs before
/// `exit(_:)` is called (see `InterruptHandling`).
enum Termination {
    private struct State {
        var nextToken = 0
        var cleanups: [Int: @Sendable () -> Void] = [:]
        var isExiting = false
    }

    private static let state = Mutex(State())

    /// Registers `cleanup` to run if the process ends through `exit(_:)`.
    /// - Returns: the token that `unregister(_:)` takes once the clean-up is no longer needed.
    @discardableResult
    static func register(_ cleanup: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.nextToken += 1
            state.cleanups[state.nextToken] = cleanup
            return state.nextToken
        }
    }

    /// Forgets a clean-up.
    static func unregister(_ token: Int) {
        _ = state.withLock { $0.cleanups.removeValue(forKey: token) }
    }

    /// Registers the removal of the file at `url`.
    @discardableResult
    static func removeOnExit(_ url: URL) -> Int {
        register { try? FileManager.default.removeItem(at: url) }
    }

    /// Runs the registered clean-ups, then ends the process with `status`.
    ///
    /// Only the first caller does so; another thread calling at the same time waits for the
    /// process to end instead of running the clean-ups twice.
    static func exit(_ status: Int32) -> Never {
        let cleanups = state.withLock { state -> [@Sendable () -> Void]? in
            guard !state.isExiting else { return nil }
            state.isExiting = true
            defer { state.cleanups.removeAll() }
            return state.cleanups.sorted { $0.key < $1.key }.map(\.value)
        }
        guard let cleanups else {
            while true { sleep(60) }
        }
        cleanups.forEach { $0() }
        Foundation.exit(status)
    }
}
