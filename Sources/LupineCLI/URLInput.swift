import Foundation

/// The URL as typed, completed as httpie completes it: without a scheme it means `http://`, and a
/// leading colon means localhost (`:8080/get` is `http://localhost:8080/get`).
enum URLInput {
    /// `typed` with the scheme and host it leaves out.
    static func completed(_ typed: String) -> String {
        let text = typed.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix(":") {
            // ":8080/path", ":/path" and ":" name a port (or none) on localhost.
            let rest = text.dropFirst()
            let port = rest.prefix { $0.isASCII && $0.isNumber }
            let path = rest.dropFirst(port.count)
            return "http://localhost" + (port.isEmpty ? "" : ":\(port)") + path
        }
        return hasScheme(text) ? text : "http://" + text
    }

    /// Whether `text` starts with `scheme://` (RFC 3986: a letter, then letters, digits, + - .).
    private static func hasScheme(_ text: String) -> Bool {
        guard let separator = text.range(of: "://") else { return false }
        let scheme = text[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }
}
