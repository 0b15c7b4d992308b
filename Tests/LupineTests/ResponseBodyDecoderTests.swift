import Foundation
@testable import Lupine
@testable import LupineTestServer
import NIOCore
import NIOHTTP1
import Testing

/// The response body decoder and the registry of codings as values: how a body split anywhere
/// decodes, where a stream may end, how stacked stages are bounded, and how `Content-Encoding`
/// and `Accept-Encoding` are read and written. The same over loopback: ContentCodingTests.
@Suite struct ResponseBodyDecoderTests {
    /// Text that compresses about as much as a real document.
    private static let document: ByteBuffer = {
        var text = ""
        var number = 0
        while text.utf8.count < 60_000 {
            text += "{\"id\": \(number * 7919 % 1_000_003), \"name\": \"item \(number)\"}\n"
            number += 1
        }
        return ByteBuffer(string: text)
    }()

    private static func encode(_ body: ByteBuffer, _ coding: ResponseCoding) throws -> ByteBuffer {
        try coding.makeCompressor().compressWhole(body)
    }

    private static func decoder(_ contentEncoding: String, ratioLimit: Int = 200) throws -> ResponseBodyDecoder? {
        try ResponseBodyDecoder.make(for: ["Content-Encoding": contentEncoding], ratioLimit: ratioLimit)
    }

    /// Decodes `body` handed over in parts of `partSize` bytes.
    private static func decode(_ body: ByteBuffer, as contentEncoding: String, partSize: Int) throws -> Data {
        let decoder = try #require(try decoder(contentEncoding))
        var output = Data()
        var rest = body
        while let part = rest.readSlice(length: min(partSize, rest.readableBytes)), part.readableBytes > 0 {
            output += try decoder.decode(part)
        }
        try decoder.finish()
        return output
    }

    @Test(arguments: ResponseCoding.allCases, [1, 7, 1000, Int.max])
    func bodySplitAnywhereDecodesTheSame(_ coding: ResponseCoding, partSize: Int) throws {
        let encoded = try Self.encode(Self.document, coding)
        let decoded = try Self.decode(encoded, as: coding.rawValue, partSize: min(partSize, encoded.readableBytes))

        #expect(decoded == Data(Self.document.readableBytesView))
    }

    /// Every proper prefix of a stream is refused at the end of the body, never taken for a whole
    /// (shorter) body.
    @Test(arguments: ResponseCoding.allCases)
    func everyPrefixOfAStreamIsTruncated(_ coding: ResponseCoding) throws {
        let encoded = try Self.encode(ByteBuffer(string: "a short body that is cut somewhere"), coding)
        for length in 1..<encoded.readableBytes {
            let decoder = try #require(try Self.decoder(coding.rawValue))
            do {
                _ = try decoder.decode(encoded.getSlice(at: encoded.readerIndex, length: length) ?? ByteBuffer())
                try decoder.finish()
                Issue.record("\(coding) cut to \(length) of \(encoded.readableBytes) bytes was taken for a whole body")
            } catch {
                // Invalid data is as good a refusal as a truncation.
            }
        }
    }

    /// A zstd body may hold several frames and may end after any of them (RFC 8878, section 3.1).
    @Test func zstdBodyOfTwoFramesMayEndAfterEither() throws {
        var body = try Self.encode(ByteBuffer(string: "first frame, "), .zstd)
        var second = try Self.encode(ByteBuffer(string: "second frame"), .zstd)
        let firstLength = body.readableBytes
        body.writeBuffer(&second)

        #expect(try Self.decode(body, as: "zstd", partSize: 5) == Data("first frame, second frame".utf8))
        let firstOnly = try #require(body.getSlice(at: body.readerIndex, length: firstLength))
        #expect(try Self.decode(firstOnly, as: "zstd", partSize: 3) == Data("first frame, ".utf8))
        let cutInSecond = try #require(body.getSlice(at: body.readerIndex, length: firstLength + 4))
        #expect(throws: ContentDecodingError.truncated(coding: "zstd")) {
            try Self.decode(cutInSecond, as: "zstd", partSize: 3)
        }
    }

    /// A bomb in an inner stage counts even when nothing comes out of the last one: here gzip
    /// unpacks 16 MiB of a zstd skippable frame, which zstd decodes to nothing. Without a check on
    /// every stage, that would be 16 MiB of work for every 16 KiB received, unseen.
    @Test func innerStageBombFailsEvenWhenTheLastStageProducesNothing() throws {
        var skippableFrame = ByteBuffer()
        skippableFrame.writeInteger(UInt32(0x184D_2A50), endianness: .little)
        skippableFrame.writeInteger(UInt32(16 << 20), endianness: .little)
        skippableFrame.writeRepeatingByte(0, count: 16 << 20)
        #expect(try Self.decode(skippableFrame, as: "zstd", partSize: 1 << 20).isEmpty)
        let body = try Self.encode(skippableFrame, .gzip)

        #expect(throws: ContentDecodingError.ratioLimitExceeded(limit: 200)) {
            try Self.decode(body, as: "zstd, gzip", partSize: 1 << 20)
        }
    }

    /// A response without body bytes (HEAD, 204, 304) is no stream, and starts no decoder.
    @Test func bodyWithoutBytesIsNotTruncated() throws {
        let decoder = try #require(try Self.decoder("br, zstd"))
        #expect(try decoder.decode(ByteBuffer()).isEmpty)
        try decoder.finish()
    }

    @Test func ratioLimitOfIntMaxDoesNotOverflow() throws {
        let body = try Self.encode(ByteBuffer(repeating: 0, count: 1 << 20), .gzip)
        let decoder = try #require(try Self.decoder("gzip", ratioLimit: .max))
        var output = Data()
        var rest = body
        while let part = rest.readSlice(length: min(100, rest.readableBytes)), part.readableBytes > 0 {
            output += try decoder.decode(part)
        }
        try decoder.finish()
        #expect(output.count == 1 << 20)
    }

    // MARK: Registry

    /// Every field counts, in order, as one list; the last coding applied is undone first;
    /// `identity` and empty members are skipped.
    @Test func codingsToUndoReadEveryContentEncodingField() throws {
        let registry = ContentDecoderRegistry.standard
        let headers: NIOHTTP1.HTTPHeaders = [
            "Content-Type": "text/plain",
            "Content-Encoding": "gzip, identity,",
            "content-encoding": " BR ",
        ]

        #expect(try registry.codingsToUndo(for: headers)?.map(\.token) == ["br", "gzip"])
        #expect(try registry.codingsToUndo(for: ["Content-Encoding": "identity"])?.map(\.token) == nil)
        #expect(try registry.codingsToUndo(for: ["Content-Encoding": "gzip, compress"])?.map(\.token) == nil)
        #expect(try registry.codingsToUndo(for: [:])?.map(\.token) == nil)
        #expect(throws: ContentDecodingError.tooManyCodings(count: 5, limit: 4)) {
            try registry.codingsToUndo(for: ["Content-Encoding": "br, br, br, br, br"])
        }
    }

    /// `Accept-Encoding` lists the available codings in the registry's order with Alamofire's
    /// q-values: without zstd it is Alamofire's own value.
    @Test func acceptEncodingListsOnlyAvailableCodingsInOrder() {
        let missing = ContentCoding(token: "zstd", isAvailable: false) { () throws(ContentDecodingError) in
            throw .decoderUnavailable(coding: "zstd")
        }
        let withoutZstd = ContentDecoderRegistry([.brotli, missing, .gzip, .deflate])

        #expect(withoutZstd.acceptEncoding == "br;q=1.0, gzip;q=0.9, deflate;q=0.8")
        #expect(withoutZstd.coding(named: "zstd")?.token == nil)
        #expect(ContentDecoderRegistry.standard.codings.map(\.token) == ["br", "zstd", "gzip", "deflate"])
        #expect(ContentDecoderRegistry.standard.coding(named: "X-Gzip")?.token == "gzip")
    }
}
