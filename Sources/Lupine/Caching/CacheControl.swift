import Foundation

/// The directives of `Cache-Control` header fields (RFC 9111, section 5.2), as a cache reads them.
///
/// Directive names are case-insensitive; a quoted argument is unquoted. A directive that appears
/// twice keeps its first value. A `max-age` whose argument is not a non-negative integer is kept
/// as `invalid` (RFC 9111 then treats the response as stale).
struct CacheControl: Equatable {
    /// Directive name (lowercased) to argument; nil for a directive without one.
    private(set) var directives: [String: String?] = [:]

    /// Parses the comma-separated directives of every given field value.
    ///
    /// Optional whitespace is ASCII (RFC 9110, section 5.6.3): it is trimmed without Foundation,
    /// whose `trimmingCharacters(in:)` bridges through NSString on Linux and cost about 2% of a
    /// small request answered with `Cache-Control: no-store`.
    init(_ fieldValues: [String]) {
        for value in fieldValues {
            for item in Self.split(value) {
                let trimmed = item.lupineTrimmingASCIIWhitespace()
                guard !trimmed.isEmpty else { continue }
                let name: String
                var argument: String?
                if let equals = trimmed.firstIndex(of: "=") {
                    name = trimmed[..<equals].lupineTrimmingASCIIWhitespace().lowercased()
                    var raw = trimmed[trimmed.index(after: equals)...].lupineTrimmingASCIIWhitespace()
                    if raw.count >= 2, raw.hasPrefix("\""), raw.hasSuffix("\"") {
                        raw = raw.dropFirst().dropLast()
                    }
                    argument = String(raw)
                } else {
                    name = trimmed.lowercased()
                }
                if directives[name] == nil { directives[name] = .some(argument) }
            }
        }
    }

    /// Whether the directive is present, with or without an argument.
    func has(_ name: String) -> Bool { directives[name] != nil }

    /// A delta-seconds argument: `.absent`, `.seconds(n)`, or `.invalid` for a malformed one.
    func seconds(_ name: String) -> DeltaSeconds {
        guard let entry = directives[name] else { return .absent }
        guard let argument = entry, let seconds = Self.deltaSeconds(argument) else { return .invalid }
        return .seconds(seconds)
    }

    /// A delta-seconds value (RFC 9111, section 1.2.2): one or more ASCII digits; a value too large
    /// to hold is taken as the largest one (2^31 - 1). Nil for anything else.
    static func deltaSeconds(_ text: String) -> TimeInterval? {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit) else { return nil }
        return TimeInterval(min(Int(text) ?? Int(Int32.max), Int(Int32.max)))
    }

    /// The argument of a delta-seconds directive.
    enum DeltaSeconds: Equatable {
        case absent
        case invalid
        case seconds(TimeInterval)

        /// The number of seconds, when there is a valid one.
        var value: TimeInterval? {
            if case let .seconds(value) = self { return value }
            return nil
        }
    }

    /// Splits at commas that are not inside a quoted string.
    private static func split(_ value: String) -> [Substring] {
        // The items are slices of `value`, not copies: the byte offsets of a native string's
        // UTF-8 view map to indices in constant time.
        var bytesOf = value
        return bytesOf.withUTF8 { bytes in
            let utf8 = value.utf8
            var items: [Substring] = []
            forEachItem(in: bytes) { item in
                let start = utf8.index(utf8.startIndex, offsetBy: item.lowerBound)
                items.append(value[start..<utf8.index(start, offsetBy: item.count)])
                return true
            }
            return items
        }
    }

    /// Whether the field value `value` lists `directive` (a lowercase ASCII name), with or without
    /// an argument: read in place, over the value's bytes, without parsing it into directives.
    ///
    /// Asked of every response offered to the cache; walking `Substring`s item by item cost
    /// half a microsecond per small response, a byte loop a tenth of that.
    static func lists(_ directive: String, in value: String) -> Bool {
        var value = value, directive = directive
        return value.withUTF8 { bytes in
            directive.withUTF8 { name in
                var found = false
                forEachItem(in: bytes) { item in
                    // The item's name ends at its first "=".
                    var nameEnd = item.lowerBound
                    while nameEnd < item.upperBound, bytes[nameEnd] != UInt8(ascii: "=") { nameEnd += 1 }
                    var nameStart = item.lowerBound
                    while nameStart < nameEnd, bytes[nameStart].lupineIsASCIIWhitespace { nameStart += 1 }
                    while nameEnd > nameStart, bytes[nameEnd - 1].lupineIsASCIIWhitespace { nameEnd -= 1 }
                    found = nameEnd - nameStart == name.count
                        && (0..<name.count).allSatisfy { bytes[nameStart + $0].lupineASCIILowercased == name[$0] }
                    return !found
                }
                return found
            }
        }
    }

    /// Calls `body` with the byte range of each comma-separated item of `bytes`, commas inside
    /// quotes excepted, until it returns false.
    private static func forEachItem(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Range<Int>) -> Bool) {
        var start = 0
        var quoted = false
        for index in bytes.indices {
            if bytes[index] == UInt8(ascii: "\"") { quoted.toggle() }
            if bytes[index] == UInt8(ascii: ","), !quoted {
                guard body(start..<index) else { return }
                start = index + 1
            }
        }
        _ = body(start..<bytes.count)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
