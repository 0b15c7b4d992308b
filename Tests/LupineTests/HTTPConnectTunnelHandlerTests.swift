@testable import Lupine
import NIOCore
import NIOEmbedded
import Testing

/// The `CONNECT` step of a tunnel through an HTTP proxy, on an `EmbeddedChannel`.
@Suite struct HTTPConnectTunnelHandlerTests {
    /// The origin's first bytes can come in the same read as the proxy's answer (a server that
    /// speaks first): they were handed on after the handler had left the pipeline, and were lost,
    /// so the exchange waited for its timeout instead of failing on them.
    @Test func bytesOfTheOriginInTheSameReadAsTheAnswerGoOn() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTPConnectTunnelHandler(target: "127.0.0.1:9", authorization: nil))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        let connect = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(String(buffer: connect).hasPrefix("CONNECT 127.0.0.1:9 HTTP/1.1\r\n"))

        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 Connection established\r\n\r\nfirst bytes"))

        let passed = try channel.readInbound(as: ByteBuffer.self)
        #expect(passed.map { String(buffer: $0) } == "first bytes")
        #expect((try? channel.pipeline.syncOperations.handler(type: HTTPConnectTunnelHandler.self)) == nil)
        _ = try channel.finish()
    }
}
