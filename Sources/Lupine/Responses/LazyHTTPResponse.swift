import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The final response of an exchange as the pipeline carries it: the head as received, with the
/// values the pipeline needs (status code, expected length) read from it directly, and the API's
/// `HTTPURLResponse` made on first read, once, with the values corelibs gives.
///
/// corelibs' `HTTPURLResponse` initializer capitalizes every header name through `NSString` and
/// parses the content type: it was the largest single cost of a small response. Subclassing
/// cannot defer it on Linux (`allHeaderFields` and `value(forHTTPHeaderField:)` are `public`, not
/// `open`, in corelibs), so the object itself is deferred: a request whose caller never looks at
/// the response (`serializingData().value`) never makes it.
final class LazyHTTPResponse: Sendable {
    let url: URL
    let head: TransportResponseHead
    private let made: Mutex<HTTPURLResponse?>

    /// A response made on first read from `head`.
    init(url: URL, head: TransportResponseHead) {
        self.url = url
        self.head = head
        made = Mutex(nil)
    }

    /// A response that exists already (a cache replay shares one between hits).
    init(url: URL, head: TransportResponseHead, response: HTTPURLResponse) {
        self.url = url
        self.head = head
        made = Mutex(response)
    }

    var statusCode: Int { head.statusCode }

    /// The `HTTPURLResponse` of the API (made now if it was not yet). corelibs' initializer never
    /// fails; Foundation's fails for a URL that is not HTTP.
    var response: HTTPURLResponse? {
        made.withLock { made in
            if let made { return made }
            made = HTTPURLResponse(url: url, statusCode: head.statusCode, httpVersion: head.httpVersion,
                                   headerFields: ResponseHeaderFields.dictionary(from: head.headerFields))
            return made
        }
    }

    /// Whether the `HTTPURLResponse` has been made.
    var isMade: Bool { made.withLock { $0 != nil } }

    /// What `response.expectedContentLength` is: the `Content-Length` value (repeated fields
    /// joined, as in the dictionary corelibs reads) as a whole number, else -1.
    var expectedContentLength: Int64 {
        var value: String?
        for field in head.headerFields where field.name.lupineEqualsIgnoringASCIICase("Content-Length") {
            value = value.map { $0 + ", " + field.value } ?? field.value
        }
        return value.flatMap { Int64($0) } ?? -1
    }
}
