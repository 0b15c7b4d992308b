import Foundation
import Lupine

/// Prints a response as the request commands show it: the status line, the headers sorted by
/// name, a blank line, then the body.
enum ResponsePrinter {
    static func print(_ response: HTTPURLResponse, body: Data) {
        var lines = [statusLine(for: response)]
        lines += response.headers.sorted { $0.name.lowercased() < $1.name.lowercased() }.map(\.description)
        lines.append("")
        let text = BodyFormatter.text(for: body, response: response)
        Console.line(lines.joined(separator: "\n"))
        if !text.isEmpty {
            Console.line(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        }
    }

    /// "HTTP 200 OK". The protocol version is not shown: HTTPURLResponse does not say which one
    /// was spoken.
    static func statusLine(for response: HTTPURLResponse) -> String {
        let code = response.statusCode
        let reason = HTTPURLResponse.localizedString(forStatusCode: code)
        return reason.isEmpty ? "HTTP \(code)" : "HTTP \(code) \(reason)"
    }
}
