import Foundation

extension Request {
    /// Lupine: the status line and header fields of the response, as they were received.
    ///
    /// `response` is an `HTTPURLResponse`, whose dictionary of fields cannot keep their order nor
    /// two fields with one name (two `Set-Cookie` lines become one value joined by ", "), and which
    /// does not say which protocol version was spoken. This head keeps all of that: the fields in
    /// the order they arrived, with the case of their names, repeated names apart, and the version
    /// of the status line ("HTTP/1.1", "HTTP/2"). A response answered from the HTTP cache has the
    /// fields the cache stored.
    ///
    /// It is the head of the final response of the current attempt: nil before that response
    /// arrives, while a redirect or a challenge is being followed, and after a failed attempt that
    /// had no response. It is set before `onHTTPResponse` handlers and the first body bytes.
    public var responseHead: TransportResponseHead? {
        mutableState.withLock { state in
            state.machine.response?.head
        }
    }
}
