import Foundation

/// What the cache files a response under: the whole URL (scheme, host, port, path and query)
/// without its fragment, which never reaches the server.
///
/// swift-corelibs-foundation's `URLCache` keys by host, port and path only, so it answered
/// `/users?id=2` with the response stored for `/users?id=1`; Lupine's store never uses that key
/// to find a response.
struct HTTPCacheKey: Hashable, Sendable {
    let string: String

    init(_ url: URL) {
        let absolute = url.absoluteString
        if let fragment = absolute.utf8.firstIndex(of: UInt8(ascii: "#")) {
            string = String(absolute[..<fragment])
        } else {
            string = absolute
        }
    }

    init(string: String) {
        self.string = string
    }
}
