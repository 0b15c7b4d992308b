import NIOCore
import NIOPosix

/// A compression bomb: a body in `coding` that decodes to `mebibytes` MiB of zero bytes.
struct CompressionBomb: Hashable, Sendable {
    let coding: ResponseCoding
    let mebibytes: Int
    /// The window a zstd frame declares, in bits; 0 for the level's own.
    var windowLog = 0
}

/// Compressed bodies for `/gzip-bomb`, `/deflate-bomb`, `/brotli-bomb` and `/zstd-bomb`, built
/// once per bomb for the whole process.
///
/// Compressing a GiB of zeros takes a noticeable moment, so it runs on NIO's blocking thread
/// pool, never an event loop, and concurrent requests for one body share a single compression.
actor CompressionBombCache {
    static let shared = CompressionBombCache()

    private var bodies: [CompressionBomb: Task<ByteBuffer, any Error>] = [:]

    /// The body of `bomb`.
    func body(_ bomb: CompressionBomb) async throws -> ByteBuffer {
        if let existing = bodies[bomb] {
            return try await existing.value
        }
        let task = Task {
            try await NIOThreadPool.singleton.runIfActive {
                try Self.compressZeros(bomb)
            }
        }
        bodies[bomb] = task
        do {
            return try await task.value
        } catch {
            bodies[bomb] = nil
            throw error
        }
    }

    /// Feeds zeros one MiB at a time so the decoded size is never held in memory.
    private static func compressZeros(_ bomb: CompressionBomb) throws -> ByteBuffer {
        let compressor = try bomb.coding.makeBombCompressor(windowLog: bomb.windowLog)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var output = ByteBuffer()
        try zeros.withUnsafeBytes { chunk in
            for _ in 0..<bomb.mebibytes {
                try compressor.compress(chunk, into: &output)
            }
        }
        try compressor.finish(into: &output)
        return output
    }
}
