import NIOCore
import NIOHTTP1

/// An exchange that asks the server to switch protocols, such as a WebSocket opening handshake.
///
/// The engine sends it like any request, on an HTTP/1.1 connection of its pool (same connect,
/// proxy, TLS with trust evaluation, and deadlines). When the server answers 101 and the upgrade
/// accepts the answer, the connection leaves the pool, its HTTP handlers give way to the new
/// protocol's, and the bytes that followed the 101 go to those. Any other answer is an ordinary
/// response. Methods are called on the connection's event loop, in this order: `prepare`, then
/// `rejection(of:)` for a 101, `install(on:)` and `didSwitch(head:)`.
protocol ProtocolUpgrade: AnyObject, Sendable {
    /// Sets the header fields the upgrade needs in `headers`, removing the request's own that
    /// would contradict them.
    func prepare(_ headers: inout NIOHTTP1.HTTPHeaders)

    /// Nil when `head`, a 101 answer, completes the upgrade; else why not, for the error the
    /// exchange fails with (`URLError(.badServerResponse)`).
    func rejection(of head: HTTPResponseHead) -> String?

    /// Adds the new protocol's handlers at the end of `channel`'s pipeline. The HTTP handlers
    /// are removed around it.
    func install(on channel: any Channel) throws

    /// The connection speaks the new protocol now; the 101 head has been reported to the events.
    func didSwitch(head: HTTPResponseHead)

    /// The engine is shutting down and closes the switched connection next.
    func engineWillClose()
}
