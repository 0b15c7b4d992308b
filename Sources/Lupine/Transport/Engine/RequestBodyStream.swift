import NIOCore
import Synchronization

/// The flow control between a streamed request body's producer (a file or an `InputStream` read
/// in chunks, or the caller's closure) and the connection that sends it.
///
/// The producer hands each chunk to the event loop without waiting for it to be written, and
/// produces the next one meanwhile. It waits only when two chunks are still on their way to the
/// channel, or when the channel stopped being writable (the peer reads slower than we produce):
/// memory stays bounded by two chunks plus the channel's write buffer, and a slow peer holds the
/// producer back.
final class RequestBodyStream: Sendable {
    private struct State {
        /// Chunks handed to the event loop and not yet written to the channel.
        var handedOver = 0
        var channelIsWritable = true
        var isCancelled = false
        /// The producer, waiting for room.
        var waiter: CheckedContinuation<Void, any Error>?

        var hasRoom: Bool {
            channelIsWritable && handedOver < RequestBodyStream.maximumHandedOver
        }

        /// The waiter, when it may go on now; its chunk is counted as handed over.
        mutating func waiterToResume() -> CheckedContinuation<Void, any Error>? {
            guard hasRoom, let waiter else { return nil }
            self.waiter = nil
            handedOver += 1
            return waiter
        }
    }

    /// Chunks on their way to the channel at most.
    static let maximumHandedOver = 2

    private let state = Mutex(State())

    // MARK: Producer side

    /// Produces the body with `nextChunk` and hands each chunk to `write` (which must make its
    /// way to the event loop and call `didWrite`), then calls `end`; a failure of the producer
    /// goes to `fail`. Returns quietly once cancelled.
    func run(nextChunk: @Sendable () async throws -> ByteBuffer?,
             write: @Sendable (ByteBuffer) -> Void,
             end: @Sendable () -> Void,
             fail: @Sendable (any Error) -> Void) async {
        do {
            while let chunk = try await nextChunk() {
                if chunk.readableBytes == 0 { continue }
                try await waitForRoom()
                write(chunk)
            }
            try Task.checkCancellation()
            end()
        } catch {
            if !state.withLock({ $0.isCancelled }) { fail(error) }
        }
    }

    private func waitForRoom() async throws {
        let reserved = try state.withLock { state -> Bool in
            if state.isCancelled { throw CancellationError() }
            guard state.hasRoom else { return false }
            state.handedOver += 1
            return true
        }
        if reserved { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if state.isCancelled { return .failure(CancellationError()) }
                if state.hasRoom {
                    state.handedOver += 1
                    return .success(())
                }
                state.waiter = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    // MARK: Event loop side

    /// A chunk was written to the channel, which is now writable or not.
    func didWrite(channelIsWritable: Bool) {
        let waiter = state.withLock { state in
            state.handedOver -= 1
            state.channelIsWritable = channelIsWritable
            return state.waiterToResume()
        }
        waiter?.resume()
    }

    /// The channel's writability changed.
    func writabilityChanged(_ isWritable: Bool) {
        let waiter = state.withLock { state in
            state.channelIsWritable = isWritable
            return state.waiterToResume()
        }
        waiter?.resume()
    }

    /// The exchange ended: the producer stops at its next step.
    func cancel() {
        let waiter = state.withLock { state in
            state.isCancelled = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(throwing: CancellationError())
    }
}
