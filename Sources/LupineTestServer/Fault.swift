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
}
