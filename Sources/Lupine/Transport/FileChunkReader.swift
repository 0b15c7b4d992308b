import Foundation
import NIOConcurrencyHelpers
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file in fixed-size chunks for a streamed request body, straight into the buffers the
/// connection sends; the file is opened on first use and closed when it ends. Every read runs on a
/// `DiskIO` lane of its own: a slow disk holds up neither an event loop nor the cooperative pool.
final class FileChunkReader: @unchecked Sendable {
    /// The size of each chunk.
    static let chunkSize = 64 * 1024

    private let url: URL
    private let allocator: ByteBufferAllocator
    private let lane = DiskIO.Lane(label: "lupine.upload.file")
    private let lock = NIOLock()
    private var handle: FileHandle?
    private var finished = false

    init(url: URL, allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.url = url
        self.allocator = allocator
    }

    deinit {
        try? handle?.close()
    }

    /// The next chunk, or nil at the end of the file, read on `DiskIO`'s threads.
    ///
    /// - Throws: `URLError(.cannotOpenFile)` when the file cannot be opened or read.
    func next() async throws -> ByteBuffer? {
        try await lane.value { try self.readNext() }
    }

    private func readNext() throws -> ByteBuffer? {
        ThreadContract.diskIO("reading an upload's file")
        let url = url
        return try lock.withLock {
            if finished { return nil }
            let handle: FileHandle
            if let open = self.handle {
                handle = open
            } else {
                do {
                    handle = try FileHandle(forReadingFrom: url)
                } catch {
                    throw Self.readFailure(url)
                }
                self.handle = handle
            }
            var buffer = allocator.buffer(capacity: Self.chunkSize)
            let descriptor = handle.fileDescriptor
            let count = try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.chunkSize) { pointer in
                var count: Int
                repeat {
                    count = read(descriptor, pointer.baseAddress, Self.chunkSize)
                } while count < 0 && errno == EINTR
                guard count >= 0 else { throw Self.readFailure(url) }
                return count
            }
            if count == 0 {
                finished = true
                try? handle.close()
                self.handle = nil
                return nil
            }
            return buffer
        }
    }

    private static func readFailure(_ url: URL) -> URLError {
        URLError(.cannotOpenFile, userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSLocalizedDescriptionKey: "The file \(url.lastPathComponent.debugDescription) of the request body could not be read.",
        ])
    }
}
