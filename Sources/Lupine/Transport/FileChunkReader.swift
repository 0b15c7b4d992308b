import Foundation
import NIOConcurrencyHelpers

/// Reads a file in fixed-size chunks for a streamed request body; the file is opened on first use
/// and closed when it ends.
final class FileChunkReader: @unchecked Sendable {
    private let url: URL
    private let lock = NIOLock()
    private var handle: FileHandle?
    private var finished = false

    init(url: URL) { self.url = url }

    func next() throws -> Data? {
        try lock.withLock {
            if finished { return nil }
            if handle == nil { handle = try FileHandle(forReadingFrom: url) }
            let chunk = try handle?.read(upToCount: 64 * 1024) ?? Data()
            if chunk.isEmpty {
                finished = true
                try? handle?.close()
                handle = nil
                return nil
            }
            return chunk
        }
    }
}
