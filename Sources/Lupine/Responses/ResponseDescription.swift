import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the `debugDescription` of `DataResponse` and `DownloadResponse`, so both share one layout.
///
/// Layout: `[Request]: <METHOD> <url>` with its `[Headers]` and `[Body]`; `[Response]:` with `[Status Code]`,
/// `[Headers]` and, for data responses, `[Body]`; for downloads `[File URL]` and `[Resume Data]`; then
/// `[Network Duration]`, `[Serialization Duration]` and `[Result]`. Nested lines are indented by four spaces.
/// Without a request there is only `[Request]: None` and `[Result]`.
enum ResponseDescription {
    /// What follows the response headers: a data response's body, or a download's file and resume data.
    enum ResponseBody {
        /// A data response's body, printed inside `[Response]`.
        case data(Data?)
        /// A download's file URL and resume data, printed after `[Response]`.
        case file(fileURL: URL?, resumeData: Data?)
    }

    /// Bodies larger than this many bytes are printed as a byte count.
    static let maximumPrintableBodyLength = 100_000
    /// A body is printed only when its `Content-Type` contains one of these.
    static let printableContentTypeFragments = ["json", "xml", "text"]
    /// Indentation of nested lines.
    static let indentation = "    "

    /// The full multi-line description.
    static func debugDescription(request: URLRequest?,
                                 response: HTTPURLResponse?,
                                 responseBody: ResponseBody,
                                 metrics: URLSessionTaskMetrics?,
                                 serializationDuration: TimeInterval,
                                 result: String) -> String {
        guard let request else { return "[Request]: None\n[Result]: \(result)" }

        var lines = [describe(request)]
        lines.append(response.map { describe($0, body: responseBody) } ?? "[Response]: None")
        if case let .file(fileURL, resumeData) = responseBody {
            lines.append("[File URL]: \(fileURL?.path ?? "None")")
            lines.append("[Resume Data]: \(resumeData.map { "\($0)" } ?? "None")")
        }
        lines.append("[Network Duration]: \(metrics.map { "\($0.taskInterval.duration)s" } ?? "None")")
        lines.append("[Serialization Duration]: \(serializationDuration)s")
        lines.append("[Result]: \(result)")
        return lines.joined(separator: "\n")
    }

    /// `[Request]: <METHOD> <url>` with its headers and body.
    static func describe(_ request: URLRequest) -> String {
        let headers = request.allHTTPHeaderFields ?? [:]
        let method = request.httpMethod ?? HTTPMethod.get.rawValue
        let url = request.url?.absoluteString ?? "None"
        return """
        [Request]: \(method) \(url)
        \(indented(describe(headers: headers)))
        \(indented(describe(body: request.httpBody, headers: headers)))
        """
    }

    /// `[Response]:` with its status code and headers, and its body when `body` is `.data`.
    static func describe(_ response: HTTPURLResponse, body: ResponseBody) -> String {
        let headers = stringHeaders(response.allHeaderFields)
        var parts = ["[Response]:",
                     indented("[Status Code]: \(response.statusCode)"),
                     indented(describe(headers: headers))]
        if case let .data(data) = body {
            parts.append(indented(describe(body: data, headers: headers)))
        }
        return parts.joined(separator: "\n")
    }

    /// `[Headers]:` with one `Name: value` line per header, sorted case-insensitively, or `[Headers]: None`.
    static func describe(headers: [String: String]) -> String {
        guard !headers.isEmpty else { return "[Headers]: None" }
        let lines = headers
            .sorted { lhs, rhs in
                let (left, right) = (lhs.key.lowercased(), rhs.key.lowercased())
                return left == right ? lhs.key < rhs.key : left < right
            }
            .map { "\($0.key): \($0.value)" }
        return "[Headers]:\n" + indented(lines.joined(separator: "\n"))
    }

    /// `[Body]:` with the body as text when it is short and textual, `[Body]: <n> bytes` otherwise, or
    /// `[Body]: None` when there is none.
    static func describe(body: Data?, headers: [String: String]) -> String {
        guard let body, !body.isEmpty else { return "[Body]: None" }
        let contentType = headers.first { $0.key.lupineEqualsIgnoringASCIICase("Content-Type") }?.value
        guard body.count <= maximumPrintableBodyLength,
              let contentType,
              printableContentTypeFragments.contains(where: { contentType.contains($0) })
        else { return "[Body]: \(body.count) bytes" }

        let text = String(decoding: body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return "[Body]:\n" + indented(text)
    }

    /// Header fields as strings; entries whose name or value is not a string are left out.
    static func stringHeaders(_ fields: [AnyHashable: Any]) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in fields {
            guard let name = name.base as? String, let value = value as? String else { continue }
            headers[name] = value
        }
        return headers
    }

    /// `text` with every line, the first included, indented by four spaces.
    static func indented(_ text: String) -> String {
        indentation + text.replacingOccurrences(of: "\n", with: "\n" + indentation)
    }
}
