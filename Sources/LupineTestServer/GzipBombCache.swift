import CLupineZlib
import NIOCore
import NIOPosix

/// Compressed bodies for `/gzip-bomb`, built once per size for the whole process.
///
/// Compressing a GiB of zeros takes a noticeable moment, so it runs on NIO's blocking thread
/// pool, never an event loop, and concurrent requests for one size share a single compression.
actor GzipBombCache {
    static let shared = GzipBombCache()

    private var bodies: [Int: Task<ByteBuffer, any Error>] = [:]

    /// A gzip stream that inflates to `mebibytes` MiB of zero bytes.
    func body(mebibytes: Int) async throws -> ByteBuffer {
        if let existing = bodies[mebibytes] {
            return try await existing.value
        }
        let task = Task {
            try await NIOThreadPool.singleton.runIfActive {
                try Self.compressZeros(mebibytes: mebibytes)
            }
        }
        bodies[mebibytes] = task
        do {
            return try await task.value
        } catch {
            bodies[mebibytes] = nil
            throw error
        }
    }

    /// Feeds zeros one MiB at a time so the inflated size is never held in memory.
    private static func compressZeros(mebibytes: Int) throws -> ByteBuffer {
        // Run-length matching is all that zeros need, and is far faster than the default search.
        let compressor = try ZlibCompressor(format: .gzip, level: 9, strategy: Z_RLE)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var output = ByteBuffer()
        try zeros.withUnsafeBytes { chunk in
            for _ in 0..<mebibytes {
                try compressor.compress(chunk, into: &output)
            }
        }
        try compressor.finish(into: &output)
        return output
    }
}
