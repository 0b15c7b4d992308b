import CLupineZlib
import Foundation

/// One-shot zlib (RFC 1950) compression of a body held in memory, through the system zlib that
/// also decodes gzip and deflate responses (`ZlibContentDecoder`).
enum ZlibDeflate {
    /// zlib's failure code.
    struct Failure: Error, Equatable {
        let code: Int32
    }

    /// Compression level 5: zlib then writes the header `78 5E`, the same two bytes Alamofire's
    /// compressor puts in front of its deflate data, so servers see identical framing.
    static let level: Int32 = 5

    /// `data` as a zlib stream: a two-byte header, deflate data, the big-endian Adler-32 of `data`.
    static func compress(_ data: Data) throws -> Data {
        let inputCount = uLong(data.count)
        var outputCount = compressBound(inputCount)
        var output = Data(count: Int(outputCount))
        let code = output.withUnsafeMutableBytes { outputBytes -> Int32 in
            data.withUnsafeBytes { inputBytes -> Int32 in
                guard let destination = outputBytes.baseAddress?.assumingMemoryBound(to: Bytef.self) else {
                    return Z_BUF_ERROR
                }
                // An empty Data may have no base address: zlib accepts a null input of length 0.
                let source = inputBytes.baseAddress?.assumingMemoryBound(to: Bytef.self)
                return compress2(destination, &outputCount, source, inputCount, level)
            }
        }
        guard code == Z_OK else { throw Failure(code: code) }
        output.count = Int(outputCount)
        return output
    }
}
