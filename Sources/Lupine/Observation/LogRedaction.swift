import Foundation

/// What `LoggingEventMonitor` hides before a line is written, and tracing before a URL becomes
/// a span attribute: the user information of URLs (`user:password@`), the values of sensitive
/// query items, and the values of sensitive header fields. Names are matched without regard to
/// case.
struct LogRedaction: Sendable {
    /// What stands in for a hidden value.
    let mask: String
    /// Whether a URL's user information becomes `mask:mask` (OpenTelemetry's form) rather than
    /// `mask` alone.
    let masksUserAndPassword: Bool
    /// Header fields whose values are hidden, lowercased.
    let headerNames: Set<String>
    /// Query item names whose values are hidden, lowercased.
    let queryKeys: Set<String>

    init(headerNames: Set<String>, queryKeys: Set<String>, mask: String = "***", masksUserAndPassword: Bool = false) {
        self.mask = mask
        self.masksUserAndPassword = masksUserAndPassword
        self.headerNames = Set(headerNames.map { $0.lowercased() })
        self.queryKeys = Set(queryKeys.map { $0.lowercased() })
    }

    /// `url` as text, its user information and sensitive query values replaced by `mask`.
    func redact(_ url: URL) -> String {
        let text = url.absoluteString
        guard var components = URLComponents(string: text) else { return redactUserInfo(in: text) }
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil {
            components.percentEncodedUser = mask
            components.percentEncodedPassword = masksUserAndPassword ? mask : nil
        }
        if !queryKeys.isEmpty, let items = components.percentEncodedQueryItems,
           items.contains(where: { isSensitive(queryItem: $0) }) {
            components.percentEncodedQueryItems = items.map { item in
                isSensitive(queryItem: item) ? URLQueryItem(name: item.name, value: mask) : item
            }
        }
        return components.string ?? redactUserInfo(in: text)
    }

    /// `value`, or `mask` when the header field `name` is sensitive.
    func redact(headerValue value: String, name: String) -> String {
        headerNames.contains(name.lowercased()) ? mask : value
    }

    /// `text` with the user information of every `scheme://user:password@` in it replaced: error
    /// descriptions may quote the URL they failed on.
    func redactUserInfo(in text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = rest.range(of: "://") {
            result += rest[..<separator.upperBound]
            rest = rest[separator.upperBound...]
            // The authority ends at the first of / ? # or white space; user information is
            // whatever comes before its last @.
            let authorityEnd = rest.firstIndex { "/?#".contains($0) || $0.isWhitespace } ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                result += masksUserAndPassword ? "\(mask):\(mask)" : mask
                rest = rest[at...]
            }
        }
        return result + rest
    }

    private func isSensitive(queryItem item: URLQueryItem) -> Bool {
        guard item.value != nil else { return false }
        let name = item.name.removingPercentEncoding ?? item.name
        return queryKeys.contains(name.lowercased())
    }
}
