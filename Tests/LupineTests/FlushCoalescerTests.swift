@testable import Lupine
import NIOCore
import NIOEmbedded
import Testing

/// The HTTP/2 connection's flush coalescer: the flushes asked for in one turn of the event loop
/// reach the socket as one, once the tasks already queued on the loop have run.
@Suite struct FlushCoalescerTests {
    /// Counts the flushes that pass it on their way to the socket.
    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var flushes = 0

        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    @Test func flushesOfOneTurnLeaveAsOneAfterTheQueuedTasks() throws {
        let counter = FlushCounter()
        let channel = EmbeddedChannel(handlers: [counter, FlushCoalescer()])
        defer { _ = try? channel.finish() }
        var order: [String] = []

        // A task queued before the first flush (another request's start) runs before the bytes leave.
        channel.embeddedEventLoop.execute { order.append("queued task, \(counter.flushes) flushes") }
        for stream in 1...3 {
            channel.write(ByteBuffer(string: "HEADERS \(stream)"), promise: nil)
            channel.flush()
        }
        #expect(counter.flushes == 0)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)

        channel.embeddedEventLoop.run()

        #expect(order == ["queued task, 0 flushes"])
        #expect(counter.flushes == 1)
        for stream in 1...3 {
            #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "HEADERS \(stream)"))
        }
    }

    @Test func aFlushAfterTheQueuedOneLeavesOnItsOwn() throws {
        let counter = FlushCounter()
        let channel = EmbeddedChannel(handlers: [counter, FlushCoalescer()])
        defer { _ = try? channel.finish() }

        channel.writeAndFlush(ByteBuffer(string: "first"), promise: nil)
        channel.embeddedEventLoop.run()
        channel.writeAndFlush(ByteBuffer(string: "second"), promise: nil)
        channel.embeddedEventLoop.run()

        #expect(counter.flushes == 2)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "first"))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "second"))
    }
}
