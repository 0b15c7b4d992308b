/// Splits a `multipart/form-data` body (RFC 7578) into its parts, for the `/multipart` echo.
///
/// Strict about framing so that a client bug shows: the body must open with the first boundary
/// line, every part needs a blank line after its header fields, and the body must end with the
/// closing boundary. Anything else is `nil`.
enum MultipartParser {
    struct Part {
        var headers: [(name: String, value: String)]
        var body: ArraySlice<UInt8>

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// A parameter of the `Content-Disposition` field, such as `name` or `filename`.
        func dispositionParameter(_ key: String) -> String? {
            guard let disposition = header("content-disposition") else { return nil }
            for item in disposition.split(separator: ";").dropFirst() {
                let pair = item.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == key else { continue }
                var value = pair[1].trimmingSpaces
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                    value = String(value.dropFirst().dropLast())
                }
                return value
            }
            return nil
        }
    }

    /// The boundary parameter of a `multipart/form-data` Content-Type, or nil.
    static func boundary(ofContentType contentType: String) -> String? {
        let items = contentType.split(separator: ";")
        guard let type = items.first, type.trimmingSpaces.lowercased() == "multipart/form-data" else { return nil }
        for item in items.dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingSpaces.lowercased() == "boundary" else { continue }
            let value = pair[1].trimmingSpaces
            return value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
                ? String(value.dropFirst().dropLast()) : value
        }
        return nil
    }

    static func parse(_ body: [UInt8], boundary: String) -> [Part]? {
        let opening = Array("--\(boundary)\r\n".utf8)
        let separator = Array("\r\n--\(boundary)".utf8)
        guard body.starts(with: opening) else { return nil }
        var parts: [Part] = []
        var position = opening.count
        while true {
            guard let end = firstIndex(of: separator, in: body, from: position) else { return nil }
            guard let part = parsePart(body[position..<end]) else { return nil }
            parts.append(part)
            position = end + separator.count
            let rest = body[position...]
            if rest.starts(with: Array("--\r\n".utf8)) || Array(rest) == Array("--".utf8) {
                return parts
            }
            guard rest.starts(with: Array("\r\n".utf8)) else { return nil }
            position += 2
        }
    }

    private static func parsePart(_ bytes: ArraySlice<UInt8>) -> Part? {
        let blankLine = Array("\r\n\r\n".utf8)
        guard let headerEnd = firstIndex(of: blankLine, in: Array(bytes), from: 0) else { return nil }
        let headerText = String(decoding: bytes.prefix(headerEnd), as: UTF8.self)
        var headers: [(name: String, value: String)] = []
        for line in headerText.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces))
        }
        return Part(headers: headers, body: bytes.dropFirst(headerEnd + blankLine.count))
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
