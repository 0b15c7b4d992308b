import NIOCore
import NIOHTTP1

/// What the connection handler should do to answer a request; routes decide, the handler performs.
indirect enum ResponsePlan {
    /// Send a response whose body is already built.
    case response(TestResponse)
    /// Stream `count` SplitMix64 bytes with Content-Length, under backpressure.
    case randomBytes(count: UInt64, seed: UInt64)
    /// Stream part of the SplitMix64 bytes with its own status and headers (see `RangeSupport`).
    case byteRange(ByteRangeResponse)
    /// Send each buffer as its own chunk of a chunked response, then end it as `ending` says.
    case chunkedLines([ByteBuffer], contentType: String, ending: StreamEnding = .endResponse)
    /// Send `bytes` asterisks spread evenly over `duration`, chunked.
    case drip(DripSchedule, status: HTTPResponseStatus)
    /// Wait, then carry out another plan.
    case delayed(TimeAmount, ResponsePlan)
    /// Send a body that decodes to many MiB of zeros.
    case compressionBomb(CompressionBomb)
    /// Send these interim (1xx) responses, then carry out the plan.
    case interim([TestResponse], then: ResponsePlan)
    /// Send the response without a length (chunked on HTTP/1.1), then these trailer fields.
    case trailers(TestResponse, trailers: HTTPHeaders)
    /// Misbehave on the socket.
    case fault(Fault)
}
