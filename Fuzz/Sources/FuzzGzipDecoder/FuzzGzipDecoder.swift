import Foundation
import FuzzDecoderSupport
import FuzzSupport

/// The gzip content decoder: raw bodies, round trips (alone and under gzip), truncations and
/// corruptions, as `fuzzContentDecoder` describes.
@main
enum FuzzGzipDecoderMain {
    static func main() {
        exit(runFuzzer(fuzzGzipDecoder))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzipDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzContentDecoder("gzip", data, size)
}
