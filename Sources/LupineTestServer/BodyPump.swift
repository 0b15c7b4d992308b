import NIOCore

/// Writes a long pseudo-random body in 64 KiB chunks without ever buffering more than the
/// channel's write watermark: it stops when the channel turns unwritable and is resumed from
/// `channelWritabilityChanged`, so a slow reader cannot make the server hold the body.
final class BodyPump {
    enum Progress {
        /// Every byte has been handed to the channel; the future completes with the last write.
        case finished(EventLoopFuture<Void>)
        /// The channel is full; call again when it becomes writable.
        case waitingForWritability
        /// This turn's quota is spent; call again on a later event loop tick.
        case yielded
        /// Called from inside its own write (writability flipped during a flush); nothing to do.
        case busy
    }

    static let chunkSize = 64 * 1024
    /// Chunks per event loop turn, so one fast stream cannot starve other connections on the loop.
    private static let chunksPerTurn = 16

    private var remaining: UInt64
    private var generator: SplitMix64
    private var isPumping = false
    /// Bytes of the next output still to drop when the body starts inside an 8-byte output.
    private var leadingSkip: Int

    /// Pumps `count` bytes of the stream of `seed`, starting at byte `offset` of that stream.
    init(count: UInt64, seed: UInt64, offset: UInt64 = 0) {
        remaining = count
        generator = SplitMix64(seed: seed)
        generator.skip(outputs: offset / 8)
        leadingSkip = Int(offset % 8)
    }

    /// Writes chunks while the channel accepts them; `write` frames and sends one chunk.
    func pump(
        channel: Channel,
        write: (ByteBuffer) -> EventLoopFuture<Void>
    ) -> Progress {
        guard !isPumping else { return .busy }
        isPumping = true
        defer { isPumping = false }

        var lastWrite = channel.eventLoop.makeSucceededVoidFuture()
        var written = 0
        if leadingSkip > 0, remaining > 0 {
            // Align on the generator's 8-byte outputs: send the tail of the first one alone.
            var output = channel.allocator.buffer(capacity: 8)
            generator.fill(&output, count: 8)
            output.moveReaderIndex(forwardBy: leadingSkip)
            let size = Int(min(remaining, UInt64(8 - leadingSkip)))
            leadingSkip = 0
            remaining -= UInt64(size)
            written += 1
            lastWrite = write(output.getSlice(at: output.readerIndex, length: size) ?? output)
        }
        while remaining > 0 {
            guard channel.isWritable else { return .waitingForWritability }
            guard written < Self.chunksPerTurn else { return .yielded }
            let size = Int(min(remaining, UInt64(Self.chunkSize)))
            var chunk = channel.allocator.buffer(capacity: size)
            generator.fill(&chunk, count: size)
            remaining -= UInt64(size)
            written += 1
            lastWrite = write(chunk)
        }
        return .finished(lastWrite)
    }
}
