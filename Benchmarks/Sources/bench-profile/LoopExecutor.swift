import NIOCore
import NIOPosix

/// A task executor that runs every job on one event loop.
///
/// With `LUPINE_BENCH_ON_LOOP=1`, bench-profile runs the scenario's task on it: the task, the
/// connection (opened from that loop) and the answers then share one thread, so a sequential
/// request makes no hand-off between threads and its round trip is the CPU on its path plus the
/// server's. What S1 costs each client once the wake-ups are taken out.
final class LoopExecutor: TaskExecutor {
    let loop: any EventLoop

    init(loop: any EventLoop) {
        self.loop = loop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
