import Foundation
import FuzzDecoderSupport
import FuzzSupport

/// The br content decoder: raw bodies, round trips (alone and under gzip), truncations and
/// corruptions, as `fuzzContentDecoder` describes.
@main
enum FuzzBrotliDecoderMain {
    static func main() {
        exit(runFuzzer(fuzzBrotliDecoder))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBrotliDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzContentDecoder("br", data, size)
}
