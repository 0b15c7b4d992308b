import Foundation
import Lupine

/// Turns a response body into the text the request commands print.
enum BodyFormatter {
    /// The body as text: JSON objects and arrays re-indented (keys in the server's order), other text as
    /// it came (UTF-8, or Latin-1 when the response says so), binary data as a one-line note.
    static func text(for body: Data, response: HTTPURLResponse) -> String {
        guard !body.isEmpty else { return "" }
        if let pretty = prettyJSON(body) { return pretty }
        if let text = String(data: body, encoding: encoding(of: response)), !text.contains("\0") {
            return text
        }
        return "[\(body.count) bytes of binary data not shown]"
    }

    /// `body` re-indented, when it is a JSON object or array.
    private static func prettyJSON(_ body: Data) -> String? {
        guard let first = body.first(where: { !" \t\r\n".utf8.contains($0) }),
              first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
              (try? JSONSerialization.jsonObject(with: body)) != nil
        else { return nil }
        return JSONPrettyPrinter.format(body)
    }

    private static func encoding(of response: HTTPURLResponse) -> String.Encoding {
        switch response.textEncodingName?.lowercased() {
        case "iso-8859-1", "latin1", "iso_8859-1": .isoLatin1
        case "us-ascii", "ascii": .ascii
        default: .utf8
        }
    }
}
