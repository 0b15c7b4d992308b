import Foundation
import Synchronization

/// A request's upload or download progress, made into a Foundation `Progress` only when someone
/// asks for it.
///
/// Most requests are never asked: creating two `Progress` objects per request and updating them on
/// every body part cost allocations and time on the path of every small request. The counts are
/// kept here and handed to the `Progress` when it is created; after that, updates go to it.
/// Stored inline in its request (noncopyable): it costs the request no allocation of its own.
struct LazyProgress: ~Copyable, Sendable {
    struct State {
        var total: Int64 = 0
        var completed: Int64 = 0
        var progress: Progress?
    }

    private let state = Mutex(State())

    /// The `Progress`, created on first use with the counts so far.
    var progress: Progress {
        state.withLock { state in
            if let progress = state.progress { return progress }
            let progress = Progress(totalUnitCount: 0)
            progress.lupineSet(total: state.total, completed: state.completed)
            state.progress = progress
            return progress
        }
    }

    /// The counts so far.
    var counts: (total: Int64, completed: Int64) {
        state.withLock { ($0.total, $0.completed) }
    }

    /// Records new counts (nil keeps a count as it is), as `Progress.lupineSet` does.
    func set(total: Int64? = nil, completed: Int64? = nil) {
        state.withLock { state in
            if let total { state.total = total }
            if let completed { state.completed = completed }
            state.progress?.lupineSet(total: total, completed: completed)
        }
    }
}
