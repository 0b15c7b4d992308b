import NIOCore

/// Writes one buffer, then another again and again, through the `RawWriteGate` (unencoded), one
/// write at a time so the socket's backpressure paces it, until the connection closes or
/// `byteLimit` bytes were written; then closes.
struct RawRepeater {
    /// A safety bound so a client that reads forever cannot keep the server busy forever.
    static let byteLimit: Int64 = 8 << 30

    let gate: RawWriteGate
    let chunk: ByteBuffer

    func start(head: ByteBuffer, context: ChannelHandlerContext) {
        write(head, written: 0, context: context)
    }

    private func write(_ bytes: ByteBuffer, written: Int64, context: ChannelHandlerContext) {
        guard context.channel.isActive, written < Self.byteLimit, let done = gate.writeAndFlush(bytes) else {
            context.close(promise: nil)
            return
        }
        let total = written + Int64(bytes.readableBytes)
        done.assumeIsolated().whenComplete { result in
            guard case .success = result else {
                context.close(promise: nil)
                return
            }
            // A write that completed at once would otherwise recurse: go through the event loop.
            context.eventLoop.assumeIsolated().execute {
                write(chunk, written: total, context: context)
            }
        }
    }
}
