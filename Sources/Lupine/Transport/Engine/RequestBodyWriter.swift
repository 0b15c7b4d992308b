import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Writes requests for an `ExchangeHandler`: a request whose bytes are all at hand in one go,
/// or a streamed body (a file, or the caller's chunks) produced on a task of its own (run on a
/// `DispatchTaskExecutor`, not the cooperative pool) while the
/// previous chunks travel to the socket, a slow peer holding the producer back
/// (`RequestBodyStream`). What to write and when is the `ExchangeStateMachine`'s; used on the
/// channel's event loop only.
struct RequestBodyWriter {
    private var task: Task<Void, Never>?
    private var stream: RequestBodyStream?

    /// A body in memory larger than `leadingDataBodySlice` is copied and written in slices, each
    /// flushed at once: first `leadingDataBodySlice` bytes, flushed with the head, then slices of
    /// this size. The server starts reading the body (and doing its work on it: an upload sink
    /// hashes it) while the event loop copies the rest, instead of waiting for the whole copy
    /// (some 30 µs for 1 MiB) before the first byte goes out. bench-profile Engine S5 (1 MiB
    /// POSTs), pairs interleaved on a loaded machine: 905 req/s whole, 995 with a leading
    /// 64 KiB slice, 848 with 256 KiB slices after it. Slices of 64 KiB all the way cost a 1 MiB
    /// POST about 80-150 µs more CPU (an allocation, a trip down the pipeline and a write call
    /// each) for no gain in rate. Growing slices after the first (64, 128, 256 KiB, then the rest)
    /// were slower in 9 of 10 alternated rounds on a loaded machine (medians about 590 and 850
    /// req/s), and leading slices of 128 or 256 KiB showed no gain over 64 KiB. What bounds S5
    /// is the server: its SHA-256 of the body takes some 620 µs per MiB, about 75% of its CPU
    /// time per POST, and the client's copy overlaps it.
    static let dataBodySlice = 1024 * 1024

    /// The first slice of a body in memory larger than it (see `dataBodySlice`); smaller bodies are
    /// copied and written whole, with the head.
    static let leadingDataBodySlice = 64 * 1024

    /// Writes a request whose bytes are all at hand: the head, the body (possibly empty), the
    /// end. The future says when the request is sent: it completes with the last write that
    /// carries bytes.
    ///
    /// The end of a request that is not chunked carries none, and with a promise of its own NIO's
    /// encoder would write an empty buffer only to complete that promise in order: an allocation,
    /// a trip down the pipeline and an empty iovec for every request.
    static func writeWhole(_ head: HTTPRequestHead, body data: Data, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(NIOAny(HTTPClientRequestPart.head(head)), promise: data.isEmpty ? written : nil)
        if !data.isEmpty { writeBody(data, context: context, lastWrite: written) }
        context.writeAndFlush(NIOAny(HTTPClientRequestPart.end(nil)), promise: nil)
        return written.futureResult
    }

    private static func writeBody(_ data: Data, context: ChannelHandlerContext, lastWrite: EventLoopPromise<Void>) {
        guard data.count > leadingDataBodySlice else {
            context.write(NIOAny(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(data: data)))), promise: lastWrite)
            return
        }
        if var lent = LentDataBuffers.buffer(lending: data), let leading = lent.readSlice(length: leadingDataBodySlice) {
            context.writeAndFlush(NIOAny(HTTPClientRequestPart.body(.byteBuffer(leading))), promise: nil)
            context.writeAndFlush(NIOAny(HTTPClientRequestPart.body(.byteBuffer(lent))), promise: lastWrite)
            return
        }
        var start = data.startIndex
        var sliceSize = leadingDataBodySlice
        while start < data.endIndex {
            let end = start + min(sliceSize, data.endIndex - start)
            sliceSize = dataBodySlice
            var slice = context.channel.allocator.buffer(capacity: end - start)
            slice.writeBytes(data[start..<end])
            context.writeAndFlush(NIOAny(HTTPClientRequestPart.body(.byteBuffer(slice))), promise: end == data.endIndex ? lastWrite : nil)
            start = end
        }
    }

    /// Starts producing a streamed body with `nextChunk`. Each chunk goes to `write`, which must
    /// make its way to the event loop and end in `didWrite`; then `end`, or `fail` with the
    /// producer's error.
    mutating func stream(nextChunk: @escaping @Sendable () async throws -> ByteBuffer?,
                         write: @escaping @Sendable (ByteBuffer) -> Void,
                         end: @escaping @Sendable () -> Void,
                         fail: @escaping @Sendable (any Error) -> Void) {
        let stream = RequestBodyStream()
        self.stream = stream
        // Off the cooperative pool: a pool that the process's other tasks block must not stall
        // the upload until its idle timer ends it.
        task = Task(executorPreference: DispatchTaskExecutor(label: "lupine.request.body")) {
            await stream.run(nextChunk: nextChunk, write: write, end: end, fail: fail)
        }
    }

    /// Writes a chunk of the streamed body; false when no body is streaming.
    func write(_ chunk: ByteBuffer, context: ChannelHandlerContext) -> Bool {
        guard stream != nil else { return false }
        context.writeAndFlush(NIOAny(HTTPClientRequestPart.body(.byteBuffer(chunk))), promise: nil)
        return true
    }

    /// A chunk was written: the producer may go on as the channel allows.
    func didWrite(channelIsWritable: Bool) {
        stream?.didWrite(channelIsWritable: channelIsWritable)
    }

    /// Writes the end of the streamed body; the future says when it is written.
    static func writeEnd(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(HTTPClientRequestPart.end(nil)), promise: written)
        return written.futureResult
    }

    /// The channel's writability changed.
    func writabilityChanged(_ isWritable: Bool) {
        stream?.writabilityChanged(isWritable)
    }

    /// The exchange ended: a producer still running stops at its next step.
    mutating func stop() {
        task?.cancel()
        task = nil
        stream?.cancel()
        stream = nil
    }
}
