import Foundation
import Lupine

/// `-v`: writes the conversation to standard error as curl does, `>` before what was sent and `<`
/// before what came back: each request as Lupine handed it to the transport, and each redirect
/// response with where it leads. The final response's head is written by the printer.
struct VerboseReporter: EventMonitor, RedirectHandler {
    let queue: DispatchQueue

    /// Receives the events on `queue`, the queue the response is printed on, so that the lines
    /// come out in the order things happened.
    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func request(_ request: Request, didSendURLRequest urlRequest: URLRequest) {
        Console.note(Self.requestLines(urlRequest).map { "> " + $0 }.joined(separator: "\n") + "\n>")
    }

    /// The request line (method and target), the Host field, the other fields by name, and the
    /// size of the body.
    static func requestLines(_ urlRequest: URLRequest) -> [String] {
        guard let url = urlRequest.url else { return [] }
        var target = url.path.isEmpty ? "/" : url.path
        if let query = url.query { target += "?" + query }
        var lines = ["\(urlRequest.httpMethod ?? "GET") \(target)"]
        let host = url.port.map { "\(url.host ?? ""):\($0)" } ?? (url.host ?? "")
        lines.append("Host: \(host)")
        let fields = (urlRequest.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        lines += fields.map { "\($0.key): \($0.value)" }
        if let body = urlRequest.httpBody {
            lines.append("[\(body.count) bytes of body]")
        } else if urlRequest.httpBodyStream != nil {
            lines.append("[body streamed from a file or standard input]")
        }
        return lines
    }

    func task(_ task: URLSessionTask,
              willBeRedirectedTo request: URLRequest,
              for response: HTTPURLResponse,
              completion: @escaping (URLRequest?) -> Void) {
        var lines = ["< " + ResponseHeadText.status(response.statusCode)]
        lines += response.headers.sorted { $0.name.lowercased() < $1.name.lowercased() }.map { "< \($0.name): \($0.value)" }
        lines.append("<")
        lines.append("(following the redirect to \(request.url?.absoluteString ?? "?"))")
        Console.note(lines.joined(separator: "\n"))
        completion(request)
    }

    /// One line about a retry.
    static func retrying(attempt: Int, limit: UInt, delay: TimeInterval?, error: any Error, url: URL?) {
        let cause: String
        if case let .responseValidationFailed(.unacceptableStatusCode(code))? = error.asAFError {
            cause = "\(Endpoint(url)) answered \(ResponseHeadText.status(code))."
        } else if let afError = error.asAFError {
            cause = FailureReport(afError, url: url, timeout: nil).message
        } else {
            cause = "\(error)"
        }
        let wait = delay.map { String(format: " in %.1f s", $0) } ?? ""
        Console.note("lupine: \(cause) Retrying (\(attempt) of \(limit))\(wait).")
    }
}
