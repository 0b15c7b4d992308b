import CLupineCodecs
import CLupineZlib

/// A content coding the test server can apply to a response body.
enum ResponseCoding: String, CaseIterable, Sendable {
    case gzip
    case deflate
    case br
    case zstd

    /// The coding a token names (case-insensitive), if the server applies it.
    init?(token: some StringProtocol) {
        self.init(rawValue: token.lowercased())
    }

    /// Whether this process has the library that makes it (brotli and zstd are loaded at run time).
    var isAvailable: Bool {
        switch self {
        case .gzip, .deflate: true
        case .br: clupine_brotli_encoder_available() != 0
        case .zstd: clupine_zstd_available() != 0
        }
    }

    /// A compressor for one body, at ordinary settings.
    func makeCompressor() throws -> any StreamCompressor {
        switch self {
        case .gzip: try ZlibCompressor(format: .gzip)
        case .deflate: try ZlibCompressor(format: .zlib)
        case .br: try BrotliCompressor()
        case .zstd: try ZstdCompressor()
        }
    }

    /// A compressor that is quick over long runs of zeros (a compression bomb); `windowLog` sets
    /// a zstd frame's window (0: the level's own).
    func makeBombCompressor(windowLog: Int = 0) throws -> any StreamCompressor {
        switch self {
        // Run-length matching is all that zeros need, and is far faster than the default search.
        case .gzip: try ZlibCompressor(format: .gzip, level: 9, strategy: Z_RLE)
        case .deflate: try ZlibCompressor(format: .zlib, level: 9, strategy: Z_RLE)
        case .br: try BrotliCompressor(quality: 1, windowBits: 24)
        case .zstd: try ZstdCompressor(level: 1, windowLog: Int32(windowLog))
        }
    }
}
