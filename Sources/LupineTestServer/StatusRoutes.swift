import NIOCore
import NIOHTTP1

/// `/status/N`, `/no-content` and `/empty`.
enum StatusRoutes {
    private static let redirectCodes: Set<Int> = [301, 302, 303, 307, 308]

    static func status(_ text: String) -> ResponsePlan {
        guard let code = Int(text), (100...599).contains(code) else {
            return .response(.error(.badRequest, "status must be 100...599"))
        }
        if code < 200 {
            // An interim response is never the last word, and there is no final response to
            // follow it, so it is written raw and the connection closes.
            return .fault(.rawBytesThenClose(ByteBuffer(string: "HTTP/1.1 \(code) Informational\r\n\r\n")))
        }
        var headers = HTTPHeaders()
        if redirectCodes.contains(code) {
            headers.add(name: "Location", value: "/redirect/1")
        }
        if code == 401 {
            headers.add(name: "WWW-Authenticate", value: "Basic realm=\"Fake Realm\"")
        }
        return .response(.empty(HTTPResponseStatus(statusCode: code), headers: headers))
    }

    static func noContent() -> ResponsePlan {
        .response(.empty(.noContent))
    }

    static func empty() -> ResponsePlan {
        .response(.empty(.ok, headers: ["Content-Type": "application/json"]))
    }
}
