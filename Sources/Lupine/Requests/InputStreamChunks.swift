import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Reads an `InputStream` in chunks for a streamed request body, never whole into memory.
final class InputStreamChunks: Sendable {
    private let stream: NIOLockedValueBox<InputStreamBox>
    /// Where the stream is read: a read may block for as long as the stream's source likes.
    private let lane = DiskIO.Lane(label: "lupine.upload.stream")

    private struct InputStreamBox: @unchecked Sendable {
        let stream: InputStream
        var isOpen = false
        var isFinished = false
    }

    init(_ stream: InputStream) {
        self.stream = NIOLockedValueBox(InputStreamBox(stream: stream))
    }

    /// The body for `urlRequest`: of the length its `Content-Length` field gives, as URLSession
    /// takes a stream body's expected size from that field (upload progress then has a total);
    /// of unknown length otherwise.
    func transportBody(for urlRequest: URLRequest) -> TransportRequestBody {
        let length = urlRequest.value(forHTTPHeaderField: "Content-Length")
            .flatMap { Int64($0.lupineTrimmingASCIIWhitespace()) }
            .flatMap { $0 >= 0 ? $0 : nil }
        return .stream(length: length) { try await self.lane.value { try self.next() } }
    }

    /// The next chunk, or nil at the end. A read error fails the exchange. It may block (a file,
    /// a pipe): the body reads it on a `DiskIO` lane of its own.
    func next() throws -> Data? {
        ThreadContract.diskIO("reading an upload's input stream")
        return try stream.withLockedValue { box in
            if box.isFinished { return nil }
            if !box.isOpen {
                box.stream.open()
                box.isOpen = true
            }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let count = box.stream.read(&buffer, maxLength: buffer.count)
            if count < 0 {
                box.isFinished = true
                box.stream.close()
                throw URLError(.cannotOpenFile)
            }
            if count == 0 {
                box.isFinished = true
                box.stream.close()
                return nil
            }
            return Data(buffer[0..<count])
        }
    }
}
