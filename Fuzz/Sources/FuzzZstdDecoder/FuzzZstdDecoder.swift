import Foundation
import FuzzDecoderSupport
import FuzzSupport

/// The zstd content decoder: raw bodies, round trips (alone and under gzip), truncations and
/// corruptions, as `fuzzContentDecoder` describes.
@main
enum FuzzZstdDecoderMain {
    static func main() {
        exit(runFuzzer(fuzzZstdDecoder))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZstdDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzContentDecoder("zstd", data, size)
}
