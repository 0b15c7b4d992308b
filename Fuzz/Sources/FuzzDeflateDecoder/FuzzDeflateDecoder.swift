import Foundation
import FuzzDecoderSupport
import FuzzSupport

/// The deflate content decoder: raw bodies, round trips (alone and under gzip), truncations and
/// corruptions, as `fuzzContentDecoder` describes.
@main
enum FuzzDeflateDecoderMain {
    static func main() {
        exit(runFuzzer(fuzzDeflateDecoder))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeflateDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzContentDecoder("deflate", data, size)
}
