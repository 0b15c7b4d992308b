import NIOCore
import NIOHTTP2

/// The bookkeeping of one connection of a `LupineHTTP2TestServer`, on its event loop: the streams
/// it took, those still open, and the GOAWAY it sent. It sends GOAWAY once the connection served
/// its share of streams, and RST_STREAM frames the routes ask for.
final class HTTP2ConnectionLedger {
    /// The connection's number among the server's, from 0.
    let index: Int
    private let connection: any Channel
    private let behaviour: HTTP2ServerBehaviour
    private let counters: LupineHTTP2TestServer.Counters
    private var streamsTaken = 0
    private var openStreams = 0
    /// The last stream id of the GOAWAY sent, if one was.
    private(set) var goAwayLastStreamID: HTTP2StreamID?

    init(index: Int, connection: any Channel, behaviour: HTTP2ServerBehaviour, counters: LupineHTTP2TestServer.Counters) {
        self.index = index
        self.connection = connection
        self.behaviour = behaviour
        self.counters = counters
    }

    /// A stream opened; it is the last the connection takes when the limit is reached.
    func streamOpened(_ stream: any Channel, id: HTTP2StreamID) {
        streamsTaken += 1
        openStreams += 1
        stream.closeFuture.assumeIsolated().whenComplete { _ in self.streamClosed() }
        if let limit = behaviour.maximumStreamsPerConnection, streamsTaken == limit {
            sendGoAway(lastStreamID: id)
        }
    }

    private func streamClosed() {
        openStreams -= 1
        if openStreams == 0, goAwayLastStreamID != nil, behaviour.closesWhenDrained {
            connection.close(promise: nil)
        }
    }

    /// Sends GOAWAY (NO_ERROR): streams above `lastStreamID` are refused, never processed.
    func sendGoAway(lastStreamID: HTTP2StreamID) {
        guard goAwayLastStreamID.map({ lastStreamID < $0 }) ?? true else { return }
        goAwayLastStreamID = lastStreamID
        counters.goAwaysSent.withLock { $0 += 1 }
        let frame = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        connection.writeAndFlush(frame, promise: nil)
    }

    /// Resets stream `id` with `code`.
    func reset(_ id: HTTP2StreamID, code: HTTP2ErrorCode) {
        connection.writeAndFlush(HTTP2Frame(streamID: id, payload: .rstStream(code)), promise: nil)
    }
}
