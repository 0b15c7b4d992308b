import Lupine

/// The response head as the tool prints it: the status line with the protocol version, then the
/// header fields exactly as received (order, case of the names, repeated names apart).
enum ResponseHeadText {
    /// The lines of `head`, without the blank line that ends a head.
    static func lines(_ head: TransportResponseHead) -> [String] {
        [statusLine(head)] + head.headerFields.map { "\($0.name): \($0.value)" }
    }

    /// "HTTP/1.1 200 OK", "HTTP/2 404 Not Found".
    static func statusLine(_ head: TransportResponseHead) -> String {
        // HTTP/2 and HTTP/3 have no minor version (RFC 9113, 9114).
        let version = head.httpVersion == "HTTP/2.0" ? "HTTP/2" : head.httpVersion == "HTTP/3.0" ? "HTTP/3" : head.httpVersion
        return "\(version) \(status(head.statusCode))"
    }

    /// "404 Not Found", or "299" for a code without a phrase.
    static func status(_ code: Int) -> String {
        let reason = reasonPhrase(code)
        return reason.isEmpty ? "\(code)" : "\(code) \(reason)"
    }

    /// The reason phrase RFC 9110 gives a status code ("" for codes it does not name). The engine
    /// does not hand over the server's own phrase, which HTTP/2 does not have anyway.
    static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 103: "Early Hints"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 418: "I'm a teapot"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 425: "Too Early"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 511: "Network Authentication Required"
        default: ""
        }
    }
}
