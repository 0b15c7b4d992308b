import Foundation
import FuzzSupport
@testable import Lupine
@testable import LupineTestServer
import NIOCore

/// One fuzz case for the decoder of the coding named `token` (`FuzzGzipDecoder`, `FuzzDeflateDecoder`,
/// `FuzzBrotliDecoder`, `FuzzZstdDecoder`), driven through `ResponseBodyDecoder` as the engine
/// drives it: the body arrives in parts of sizes the input chooses, under a ratio limit it
/// chooses too.
///
/// The first byte picks what the rest is:
/// - 0, raw: a body off the network, decoded as `coding`. Nothing crashes or hangs, and what comes
///   out never passes the ratio limit of what went in.
/// - 1, round trip: a document, encoded by the test server's encoder and decoded back. It comes
///   back exact, in one stage or under gzip; any proper prefix of the encoding is refused at the
///   end of the body, never taken for a shorter whole.
/// - 2, corruption: a document encoded, then one byte changed. Decoding fails or succeeds, within
///   the ratio limit; nothing crashes.
public func fuzzContentDecoder(_ token: String, _ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let coding = ResponseCoding(token: token) else {
        fuzzRequire(false, "the test server has no \(token) encoder")
        return 0
    }
    var input = FuzzInput(data, size)
    let mode = input.byte() % 3
    let ratioLimits = [1, 10, 200, Int.max]
    let ratioLimit = ratioLimits[Int(input.byte()) % ratioLimits.count]
    // Part sizes cycle through these: 1 to 256 bytes, or the whole body for 0.
    let partSizes = input.bytes(upTo: 4).map { $0 == 0 ? Int.max : Int($0) }
    switch mode {
    case 0:
        let body = ByteBuffer(bytes: input.rest())
        _ = decode(body, as: coding.rawValue, ratioLimit: ratioLimit, partSizes: partSizes)
    case 1:
        let stacked = input.bool()
        let cut = Int(input.byte())
        let document = ByteBuffer(bytes: input.rest())
        guard var encoded = try? coding.makeCompressor().compressWhole(document) else {
            fuzzRequire(false, "the \(coding) encoder failed")
            return 0
        }
        var contentEncoding = coding.rawValue
        if stacked {
            guard let outer = try? ResponseCoding.gzip.makeCompressor().compressWhole(encoded) else { return 0 }
            encoded = outer
            contentEncoding += ", gzip"
        }
        let decoded = decode(encoded, as: contentEncoding, ratioLimit: .max, partSizes: partSizes)
        fuzzRequire(decoded == Data(document.readableBytesView), "\(contentEncoding) round trip of \(document.readableBytes) bytes")
        if encoded.readableBytes > 1 {
            let length = 1 + cut % (encoded.readableBytes - 1)
            let prefix = encoded.getSlice(at: encoded.readerIndex, length: length) ?? ByteBuffer()
            fuzzRequire(decode(prefix, as: contentEncoding, ratioLimit: .max, partSizes: partSizes) == nil,
                        "\(contentEncoding) cut to \(length) of \(encoded.readableBytes) bytes was taken for a whole body")
        }
    default:
        let position = Int(input.byte())
        let mask = input.byte() | 1
        let document = ByteBuffer(bytes: input.rest())
        guard var encoded = try? coding.makeCompressor().compressWhole(document) else { return 0 }
        if encoded.readableBytes > 0 {
            let index = encoded.readerIndex + position % encoded.readableBytes
            encoded.setInteger((encoded.getInteger(at: index, as: UInt8.self) ?? 0) ^ mask, at: index)
        }
        _ = decode(encoded, as: coding.rawValue, ratioLimit: ratioLimit, partSizes: partSizes)
    }
    return 0
}

/// `body` decoded in parts, or nil when the decoder refused it. Checks the ratio limit after
/// every part.
private func decode(_ body: ByteBuffer, as contentEncoding: String, ratioLimit: Int, partSizes: [Int]) -> Data? {
    let decoder: ResponseBodyDecoder
    do {
        guard let made = try ResponseBodyDecoder.make(for: ["Content-Encoding": contentEncoding], ratioLimit: ratioLimit) else {
            fuzzRequire(false, "no decoder for \(contentEncoding)")
            return nil
        }
        decoder = made
    } catch {
        fuzzRequire(false, "no decoder for \(contentEncoding): \(error)")
        return nil
    }
    var output = Data()
    var rest = body
    var received = 0
    var index = 0
    do {
        while rest.readableBytes > 0 {
            let size = partSizes.isEmpty ? Int.max : partSizes[index % partSizes.count]
            index += 1
            guard let part = rest.readSlice(length: min(size, rest.readableBytes)) else { break }
            received += part.readableBytes
            output += try decoder.decode(part)
            let (bound, overflow) = received.multipliedReportingOverflow(by: ratioLimit)
            fuzzRequire(overflow || output.count <= bound, "\(output.count) bytes decoded from \(received) past ratio \(ratioLimit)")
        }
        try decoder.finish()
        return output
    } catch {
        return nil
    }
}
