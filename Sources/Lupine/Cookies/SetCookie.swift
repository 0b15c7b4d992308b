import Foundation

/// One `Set-Cookie` header line, parsed as RFC 6265 (section 5.2) tells a user agent to: lenient
/// about spacing and case, ignoring attributes it cannot read, the last of a repeated attribute
/// winning.
struct SetCookie: Equatable {
    var name: String
    var value: String
    /// The `Domain` attribute, lowercased, without a leading dot; nil when absent or empty.
    var domain: String?
    /// The `Path` attribute when it starts with "/"; nil means the default path.
    var path: String?
    /// The `Expires` attribute, when it is a date.
    var expires: Date?
    /// The `Max-Age` attribute in seconds (zero or negative means "expire now").
    var maxAge: Int?
    var isSecure = false
    var isHTTPOnly = false

    /// The cookie a `Set-Cookie` field value describes; nil for a line a user agent ignores
    /// (no "=" in the name-value pair, or an empty name).
    init?(_ line: String) {
        // Trimmed of spaces and tabs (RFC 6265's WSP) in Swift: Foundation's trimmingCharacters
        // bridges through NSString on Linux, five times per cookie.
        let parts = line.split(separator: ";", omittingEmptySubsequences: false)
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return nil }
        name = String(pair[..<equals].lupineTrimmingASCIIWhitespace())
        value = String(pair[pair.index(after: equals)...].lupineTrimmingASCIIWhitespace())
        guard !name.isEmpty else { return nil }
        for attribute in parts.dropFirst() {
            let key: String
            let argument: String
            if let equals = attribute.firstIndex(of: "=") {
                key = attribute[..<equals].lupineTrimmingASCIIWhitespace().lowercased()
                argument = String(attribute[attribute.index(after: equals)...].lupineTrimmingASCIIWhitespace())
            } else {
                key = attribute.lupineTrimmingASCIIWhitespace().lowercased()
                argument = ""
            }
            apply(key, argument)
        }
    }

    private mutating func apply(_ key: String, _ argument: String) {
        switch key {
        case "expires":
            if let date = HTTPDate.parse(argument) { expires = date }
        case "max-age":
            if let seconds = Self.maxAgeSeconds(argument) { maxAge = seconds }
        case "domain":
            var domain = Substring(argument.lowercased())
            if domain.hasPrefix(".") { domain = domain.dropFirst() }
            self.domain = domain.isEmpty ? nil : String(domain)
        case "path":
            path = argument.hasPrefix("/") ? argument : nil
        case "secure":
            isSecure = true
        case "httponly":
            isHTTPOnly = true
        default:
            break
        }
    }

    /// `-?DIGIT+`; a number too large to hold counts as the largest one.
    private static func maxAgeSeconds(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let magnitude = Int(digits) ?? Int(Int32.max)
        return text.hasPrefix("-") ? -magnitude : magnitude
    }
}
