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
        var items: [Substring] = []
        forEachItem(of: value) { items.append($0) }
        return items
    }

    /// Whether the field value `value` lists `directive` (a lowercase name), with or without an
    /// argument: read in place, without parsing the value into directives.
    static func lists(_ directive: String, in value: String) -> Bool {
        var found = false
        forEachItem(of: value) { item in
            // Over UTF-8 bytes: a Character search would break the item into graphemes.
            let name = item.utf8.firstIndex(of: UInt8(ascii: "=")).map { item[..<$0] } ?? item
            if !found, name.lupineTrimmingASCIIWhitespace().lupineEqualsIgnoringASCIICase(directive) { found = true }
        }
        return found
    }

    /// Calls `body` with each comma-separated item of `value`, commas inside quotes excepted.
    private static func forEachItem(of value: String, _ body: (Substring) -> Void) {
        // Over UTF-8 bytes: commas and quotes are ASCII, so the indices are Character boundaries.
        let bytes = value.utf8
        var start = bytes.startIndex
        var quoted = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { quoted.toggle() }
            if byte == UInt8(ascii: ","), !quoted {
                body(value[start..<index])
                start = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        body(value[start...])
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
