import NIOCore

/// Sits under an HTTP/2 connection's frame handler and turns the flushes asked for within one
/// turn of the event loop into one.
///
/// Each stream a request opens flushes its HEADERS on its own, and the frame handler passes each
/// flush down at once (it coalesces them only while it reads). Sixty-four requests in flight then
/// cost a TLS record and a `write(2)` each, on the client and on the server: the first flush of a
/// turn is held until the tasks already queued on the loop have run (the other requests' starts,
/// woken by the same read), and the flushes asked for meanwhile join it. The bytes wait for no
/// timer and no other event: only for work the loop had already taken on.
final class FlushCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var flushIsQueued = false

    func flush(context: ChannelHandlerContext) {
        guard !flushIsQueued else { return }
        flushIsQueued = true
        context.eventLoop.assumeIsolated().execute { [self] in
            flushIsQueued = false
            context.flush()
        }
    }
}
