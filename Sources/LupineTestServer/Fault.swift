import NIOCore

/// A deliberately broken exchange, performed on the real socket.
enum Fault {
    /// Never answer; the connection is closed after a safety timeout.
    case stall
    /// Send a head announcing `declaredLength` bytes, send only `sentLength`, then end as told.
    case truncatedBody(declaredLength: UInt64, sentLength: UInt64, then: StreamEnding)
    /// Close with SO_LINGER 0 so the peer sees a TCP reset and no response at all.
    case reset
    /// Write bytes that bypass the HTTP encoder, then close.
    case rawBytesThenClose(ByteBuffer)
    /// Write bytes that bypass the HTTP encoder, then leave the connection open until the stall timeout.
    case rawBytesThenStall(ByteBuffer)
    /// Write `head` unencoded, then `chunk` again and again until the peer closes the connection
    /// (or `RawRepeater.byteLimit` is reached): an endless header block or an endless body.
    case rawEndless(head: ByteBuffer, chunk: ByteBuffer)
    /// Write `bytes` unencoded one byte at a time, one every `interval`, then close.
    case dribble(ByteBuffer, every: TimeAmount)
}
