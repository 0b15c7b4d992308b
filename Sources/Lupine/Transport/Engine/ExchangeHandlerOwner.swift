/// What an `ExchangeHandler` serves: a kept-alive HTTP/1.1 connection or one HTTP/2 stream.
/// Called on the event loop.
protocol ExchangeHandlerOwner: AnyObject {
    /// The exchange ended with its whole response; `reusable` says whether another exchange may
    /// follow on the same connection. Called before the exchange reports its completion, so that
    /// the next request already finds the connection free.
    func exchangeHandlerDidFinish(_ handler: ExchangeHandler, reusable: Bool)

    /// The server switched protocols for the exchange of `handler`: the connection leaves the
    /// pool and `upgrade`'s handlers replace the HTTP ones, `handler` included. `switched` runs on
    /// the event loop once they are in place, with false if that failed (the connection closes).
    func exchangeHandler(_ handler: ExchangeHandler, switchesTo upgrade: any ProtocolUpgrade,
                         switched: @escaping (Bool) -> Void)

    /// The server sent bytes on a connection that never carried an exchange, before any request.
    /// True when the connection is already promised to an exchange (leased from the pool, or not
    /// in it yet): the handler keeps the fault and fails that exchange with it. False when nobody
    /// is to use the connection (it was idle in the pool and has been taken out): it closes.
    func exchangeHandlerKeepsUnsolicitedInput(_ handler: ExchangeHandler) -> Bool

    /// Whether `error`, which ended the exchange of `handler` before any response byte, says
    /// the server did not process the request (an HTTP/2 stream refused by RST_STREAM or GOAWAY):
    /// it may then be sent again whatever its method.
    func exchangeHandlerRequestWasUnprocessed(_ handler: ExchangeHandler, error: any Error) -> Bool
}
