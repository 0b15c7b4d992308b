import Dispatch

/// The threads Lupine's disk I/O runs on: reading an upload's file or stream, encoding a
/// multipart form, moving and removing downloaded files. Never an event loop, which must keep
/// moving other connections' bytes while a disk is slow, and never the cooperative pool, whose
/// few threads every task of the process shares.
///
/// The work runs on Dispatch's overcommitting threads (serial queues of Lupine's own): an
/// operation that blocks for long (a stream body read from a pipe, a slow disk) holds one thread
/// and delays nothing else, where a fixed pool of threads would let a few such operations starve
/// every other. Operations that must keep their order run on one `Lane`.
enum DiskIO {
    /// Runs `work` on a thread of its own; operations run this way keep no order between them.
    static func run(_ work: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "lupine.diskIO").async(execute: work)
    }

    /// A serial queue for the disk operations of one source (an upload's body), in order.
    struct Lane: Sendable {
        private let queue: DispatchQueue

        init(label: String) {
            queue = DispatchQueue(label: label)
        }

        /// The value of `work`, run on the lane, for a task that awaits it.
        func value<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
            try await withCheckedThrowingContinuation { continuation in
                queue.async { continuation.resume(with: Result(catching: work)) }
            }
        }
    }
}
