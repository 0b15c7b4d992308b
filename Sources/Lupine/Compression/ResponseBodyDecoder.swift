import Foundation
import NIOCore
import NIOHTTP1

/// Decodes a response body sent with a `Content-Encoding` Lupine knows, part by part as the
/// exchange delivers it: one ``ContentDecoder`` per coding listed, the last applied undone first.
///
/// It holds the rules every coding shares, so that each decoder only translates bytes:
/// - the decompression ratio limit: no stage may produce more than `ratioLimit` times the bytes
///   received from the network (checked after every 16 KiB of output, so a bomb is stopped before
///   it takes memory, and for every stage, so a stacked bomb cannot spend CPU unseen);
/// - a body that ends inside a stream is truncated, not a short success;
/// - nothing may follow the end of a stream;
/// - a body with no bytes at all (a HEAD response, a 204 or 304 that names its coding) is no stream.
///
/// The exchange handler makes one only for a response that names a coding: a pipeline stage in
/// front of it would be crossed by every part of every response. Its errors are
/// ``ContentDecodingError``s, which the engine reports as `URLError(.cannotDecodeContentData)`.
final class ResponseBodyDecoder {
    /// Each stage writes its output in chunks of this size.
    static let chunkSize = 16_384

    /// One coding's decoder and the buffer it writes into.
    private final class Stage {
        let coding: ContentCoding
        let decoder: any ContentDecoder
        let chunk: UnsafeMutableRawBufferPointer
        /// Bytes this stage has produced so far.
        var producedBytes = 0
        /// Whether the body may end here for this stage.
        var isComplete = false
        /// Whether its stream ended: any later byte is trailing data.
        var hasEnded = false

        init(coding: ContentCoding) throws(ContentDecodingError) {
            self.coding = coding
            decoder = try coding.makeDecoder()
            chunk = .allocate(byteCount: ResponseBodyDecoder.chunkSize, alignment: 1)
        }

        deinit {
            chunk.deallocate()
        }
    }

    /// The codings to undo, outermost first.
    private let codings: [ContentCoding]
    private let ratioLimit: Int
    /// Made when the first byte arrives: a response without a body allocates no decoder.
    private var stages: [Stage] = []
    private var receivedBytes = 0

    /// A decoder for a response with these header fields, or nil when its body is delivered as
    /// received (no coding, or one Lupine does not decode; see
    /// ``ContentDecoderRegistry/codingsToUndo(for:)``).
    ///
    /// - Parameters:
    ///   - headers: The response's header fields.
    ///   - registry: The codings decoded.
    ///   - ratioLimit: Largest decoded/received ratio accepted.
    /// - Throws: ``ContentDecodingError/tooManyCodings(count:limit:)``.
    static func make(for headers: NIOHTTP1.HTTPHeaders, registry: ContentDecoderRegistry = .standard,
                     ratioLimit: Int) throws(ContentDecodingError) -> ResponseBodyDecoder? {
        guard let codings = try registry.codingsToUndo(for: headers) else { return nil }
        return ResponseBodyDecoder(codings: codings, ratioLimit: ratioLimit)
    }

    /// A decoder that undoes `codings`, outermost first.
    init(codings: [ContentCoding], ratioLimit: Int) {
        self.codings = codings
        self.ratioLimit = ratioLimit
    }

    /// The decoded bytes of one received part of the body (possibly none yet).
    ///
    /// - Throws: ``ContentDecodingError``: invalid data, bytes after a stream's end, the ratio
    ///   limit passed, or a decoder that could not start.
    func decode(_ part: ByteBuffer) throws(ContentDecodingError) -> Data {
        guard part.readableBytes > 0 else { return Data() }
        if stages.isEmpty {
            for coding in codings { stages.append(try Stage(coding: coding)) }
        }
        receivedBytes += part.readableBytes
        var output = Data()
        let result = part.withUnsafeReadableBytes { input -> ContentDecodingError? in
            do throws(ContentDecodingError) {
                try feed(input, toStage: 0, into: &output)
                return nil
            } catch {
                return error
            }
        }
        if let result { throw result }
        return output
    }

    /// The body ended: every stage must be at the end of a stream or frame.
    ///
    /// - Throws: ``ContentDecodingError/truncated(coding:)`` for the outermost stage that is not.
    func finish() throws(ContentDecodingError) {
        guard receivedBytes > 0 else { return }
        if let open = stages.first(where: { !$0.isComplete }) {
            throw .truncated(coding: open.coding.token)
        }
    }

    /// Runs `input` through stage `index`, handing what it produces to the next stage or, from
    /// the last, to `output`.
    private func feed(_ input: UnsafeRawBufferPointer, toStage index: Int, into output: inout Data) throws(ContentDecodingError) {
        let stage = stages[index]
        guard !stage.hasEnded else { throw .trailingData(coding: stage.coding.token) }
        var offset = 0
        while true {
            let step = try stage.decoder.decode(UnsafeRawBufferPointer(rebasing: input[offset...]), into: stage.chunk)
            offset += step.consumed
            if step.produced > 0 {
                stage.producedBytes += step.produced
                try checkRatio(of: stage.producedBytes)
                let produced = UnsafeRawBufferPointer(rebasing: stage.chunk[..<step.produced])
                if index + 1 < stages.count {
                    try feed(produced, toStage: index + 1, into: &output)
                } else if let start = produced.baseAddress {
                    output.append(start.assumingMemoryBound(to: UInt8.self), count: produced.count)
                }
            }
            switch step.boundary {
            case .endOfStream:
                stage.isComplete = true
                stage.hasEnded = true
                guard offset == input.count else { throw .trailingData(coding: stage.coding.token) }
                return
            case .endOfFrame:
                stage.isComplete = true
            case .inside:
                // A call that used no input (one that only drained pending output, or found no
                // more) leaves the stream where it was.
                if step.consumed > 0 { stage.isComplete = false }
            }
            // A full chunk: more output may be pending, whatever input is left.
            if step.produced == stage.chunk.count { continue }
            if offset == input.count { return }
            // Input left, room for output, and nothing done: the decoder is stuck.
            if step.consumed == 0, step.produced == 0 {
                throw .invalidData(coding: stage.coding.token, reason: "the decoder made no progress")
            }
        }
    }

    private func checkRatio(of producedBytes: Int) throws(ContentDecodingError) {
        let (bound, overflow) = receivedBytes.multipliedReportingOverflow(by: ratioLimit)
        if !overflow, producedBytes > bound { throw .ratioLimitExceeded(limit: ratioLimit) }
    }
}
