import NIOCore
import NIOHTTP1

/// A streamed SplitMix64 body, or a byte range of one, with the head that announces it.
struct ByteRangeResponse {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var seed: UInt64
    /// First byte of the `/bytes` stream sent.
    var offset: UInt64
    /// Bytes sent (fewer than announced when the response is cut short).
    var count: UInt64
    var ending: StreamEnding
}

/// Byte ranges (RFC 9110 section 14) for `/bytes/N` and `/range-ignored/N`, for resumable downloads.
///
/// `/bytes/N?seed=S` carries validators (`ETag: "bytes-N-S"`, a fixed `Last-Modified`),
/// `Cache-Control: no-store` and `Accept-Ranges: bytes`. A single `Range: bytes=a-b`, `bytes=a-` or `bytes=-n` is answered with
/// `206` and `Content-Range`; one past the end with `416`. An `If-Range` that matches neither
/// validator makes the server ignore the range and send the whole body with `200`.
///
/// Query parameters:
/// - `validator=etag|last-modified|both|none` (default `both`): which validators are sent and
///   honoured in `If-Range`;
/// - `close-after=K`: a request without `Range` gets the head of the whole body, K bytes, then the
///   connection closes (a download failing mid-body; its resumption with `Range` succeeds);
/// - `stall-after=K`: likewise, but the connection stays open and silent after K bytes (a download
///   to cancel at a known point).
///
/// `/range-ignored/N?seed=S` takes the same parameters but always answers `200` with the whole body.
enum RangeSupport {
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    static func entityTag(count: UInt64, seed: UInt64) -> String {
        "\"bytes-\(count)-\(seed)\""
    }

    static func bytes(_ request: TestRequest, count: UInt64, seed: UInt64, honoursRanges: Bool = true) -> ResponsePlan {
        guard let validators = Validators(request.queryValue("validator"), count: count, seed: seed) else {
            return .response(.error(.badRequest, "validator must be etag, last-modified, both or none"))
        }
        var cut: (bytes: UInt64, ending: StreamEnding)?
        for (name, ending) in [("close-after", StreamEnding.closeConnection), ("stall-after", .stall)] {
            guard let text = request.queryValue(name) else { continue }
            guard let parsed = UInt64(text) else { return .response(.error(.badRequest, "\(name) must be a byte count")) }
            cut = (min(parsed, count), ending)
        }
        var headers = validators.headers
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "Accept-Ranges", value: "bytes")

        let rangeApplies = honoursRanges && (request.header("If-Range").map(validators.matches) ?? true)
        guard let rangeText = request.header("Range"), rangeApplies, let range = ByteRange(rangeText) else {
            headers.add(name: "Content-Length", value: String(count))
            // Only a request without Range is cut short, so that resuming it succeeds.
            let cut = request.header("Range") == nil ? cut : nil
            return .byteRange(ByteRangeResponse(status: .ok, headers: headers, seed: seed, offset: 0,
                                                count: cut?.bytes ?? count, ending: cut?.ending ?? .endResponse))
        }
        guard let (first, last) = range.resolved(length: count) else {
            var unsatisfiable = TestResponse.text("range not satisfiable\n", contentType: "text/plain")
            unsatisfiable.status = .rangeNotSatisfiable
            unsatisfiable.headers.add(name: "Content-Range", value: "bytes */\(count)")
            return .response(unsatisfiable)
        }
        let length = last - first + 1
        headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(count)")
        headers.add(name: "Content-Length", value: String(length))
        return .byteRange(ByteRangeResponse(status: .partialContent, headers: headers, seed: seed, offset: first,
                                            count: length, ending: .endResponse))
    }

    static func rangeIgnored(_ request: TestRequest, count text: String) -> ResponsePlan {
        guard let count = UInt64(text), count <= StreamingRoutes.maximumByteCount else {
            return .response(.error(.badRequest, "byte count must be 0...\(StreamingRoutes.maximumByteCount)"))
        }
        let seed = request.queryValue("seed").flatMap(UInt64.init) ?? 0
        return bytes(request, count: count, seed: seed, honoursRanges: false)
    }

    /// The validators a `/bytes` response carries.
    private struct Validators {
        let entityTag: String?
        let lastModified: String?

        init?(_ choice: String?, count: UInt64, seed: UInt64) {
            let tag = RangeSupport.entityTag(count: count, seed: seed)
            switch choice ?? "both" {
            case "both": (entityTag, lastModified) = (tag, RangeSupport.lastModified)
            case "etag": (entityTag, lastModified) = (tag, nil)
            case "last-modified": (entityTag, lastModified) = (nil, RangeSupport.lastModified)
            case "none": (entityTag, lastModified) = (nil, nil)
            default: return nil
            }
        }

        var headers: HTTPHeaders {
            var headers = HTTPHeaders()
            if let entityTag { headers.add(name: "ETag", value: entityTag) }
            if let lastModified { headers.add(name: "Last-Modified", value: lastModified) }
            // The fixed Last-Modified would make the body heuristically fresh for years in an HTTP
            // cache, and tests that fetch the same /bytes URL twice expect two real exchanges.
            headers.add(name: "Cache-Control", value: "no-store")
            return headers
        }

        /// `If-Range` holds a strong entity tag or an HTTP date, compared exactly.
        func matches(_ ifRange: String) -> Bool {
            let value = ifRange.trimmingSpaces()
            if value.hasPrefix("\"") { return value == entityTag }
            return value == lastModified
        }
    }
}

/// One range of a `Range: bytes=...` field; several ranges, or another unit, are not parsed (and
/// the field is then ignored, as RFC 9110 allows).
private struct ByteRange {
    let first: UInt64?
    let last: UInt64?
    let suffixLength: UInt64?

    init?(_ field: String) {
        let value = field.trimmingSpaces()
        guard value.lowercased().hasPrefix("bytes="), !value.contains(",") else { return nil }
        let spec = value.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let start = spec[..<dash].trimmingSpaces()
        let end = spec[spec.index(after: dash)...].trimmingSpaces()
        if start.isEmpty {
            guard let suffix = UInt64(end), suffix > 0 else { return nil }
            (first, last, suffixLength) = (nil, nil, suffix)
        } else {
            guard let first = UInt64(start) else { return nil }
            let last = end.isEmpty ? nil : UInt64(end)
            if !end.isEmpty, last.map({ $0 < first }) ?? true { return nil }
            (self.first, self.last, suffixLength) = (first, last, nil)
        }
    }

    /// The first and last byte positions within a body of `length` bytes; nil when unsatisfiable.
    func resolved(length: UInt64) -> (UInt64, UInt64)? {
        guard length > 0 else { return nil }
        if let suffixLength { return (length - min(suffixLength, length), length - 1) }
        guard let first, first < length else { return nil }
        return (first, min(last ?? length - 1, length - 1))
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[start...end])
    }
}
