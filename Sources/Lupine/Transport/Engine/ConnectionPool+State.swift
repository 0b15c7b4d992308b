import NIOCore

// The pool's state behind its one lock: entries per key, open connections and connects under
// way, the wait sweep, counts and what shutdown waits for; `ConnectionPool` decides under the
// lock and acts after it.
extension ConnectionPool {
    struct State {
        var entries: [ConnectionKey: PoolEntry] = [:]
        var isShutDown = false
        var nextConnectionID = 0
        var counts = ConnectionCounts()
        /// Every open connection, for shutdown.
        var connections: [Int: any PooledConnection] = [:]
        /// Connections that switched protocols: open, but no longer counted in their key's entry.
        var switched: Set<Int> = []
        /// Connects under way, by connection id: shutdown gives them up and waits for them.
        var attempts: [Int: @Sendable () -> Void] = [:]
        /// Connects shutdown gave up and waits for.
        var attemptsEndingForShutdown: Set<Int> = []
        /// What shutdown still waits for (connections closing, connects ending), and who waits.
        var shutdownPending = 0
        var shutdownCompletions: [@Sendable () -> Void] = []
        /// When the wait sweep is armed to run (see `boundWait(of:)`), and its timer; nil when
        /// it is not armed.
        var waitSweep: NIODeadline?
        var waitSweepTimer: Scheduled<Void>?

        /// Disarms the wait sweep once nothing waits (its timer is returned, to be cancelled
        /// outside the lock): called where exchanges leave the queue on the event loop, so that
        /// an idle pool keeps no timer.
        mutating func disarmWaitSweepIfNothingWaits() -> Scheduled<Void>? {
            guard waitSweep != nil, entries.values.allSatisfy({ $0.waiters.isEmpty }) else { return nil }
            waitSweep = nil
            defer { waitSweepTimer = nil }
            return waitSweepTimer
        }

        /// Drops `key`'s entry when it holds nothing worth keeping.
        mutating func pruneEntry(_ key: ConnectionKey, now: NIODeadline) {
            if entries[key]?.isUnused(now: now) == true { entries[key] = nil }
        }

        /// One thing shutdown waited for is done: the completions to call when it was the last.
        mutating func shutdownStepDone() -> [@Sendable () -> Void] {
            shutdownPending -= 1
            guard shutdownPending == 0 else { return [] }
            defer { shutdownCompletions = [] }
            return shutdownCompletions
        }
    }
}
