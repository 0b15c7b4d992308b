import Dispatch

/// Runs the jobs of the tasks that prefer it on a serial Dispatch queue of Lupine's own, off the
/// cooperative pool.
///
/// The cooperative pool has about one thread per core, shared by every task of the process: code
/// that blocks one of them (a synchronous validator on the async API, a caller's own blocking
/// work) leaves the pool that much smaller, and when all of them block, no task moves. The work
/// that carries a request's bytes must not wait for that: a streamed request body's producer
/// (`RequestBodyStream.run`) runs its task on one of these, so an upload keeps going while the
/// pool is busy, and its idle timer does not fire for a body the caller did hand over.
///
/// The queue is a Dispatch serial queue: its thread is one of Dispatch's overcommitting threads,
/// made when needed. The executor is meant for tasks that mostly wait (for a disk read on a
/// `DiskIO` lane, for room in the channel) and do little between waits.
final class DispatchTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
