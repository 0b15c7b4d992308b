import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Cookies, as URLSession handles them for its tasks: read from and stored in the configuration's
// `httpCookieStorage`, per RFC 6265 (see `CookieJar`).
extension Session {
    /// The cookie rules over the configuration's storage; nil when the configuration has none.
    var cookieJar: CookieJar? { hopSettings.cookieJar }

    /// The `Cookie` field to send with `request`: the stored cookies matching its URL, when the
    /// configuration's `httpShouldSetCookies` and the request's `httpShouldHandleCookies` allow it.
    /// A request that sets its own `Cookie` field is sent with that field alone.
    ///
    /// Called as each hop is prepared, off the transport's thread: the Public Suffix List, which
    /// the storing of a response's cookies may need on that thread, is read here the first time.
    func cookieHeader(for request: URLRequest, headerFields: [String: String]) -> HTTPHeader? {
        if hopSettings.storesCookies { Self.preparePublicSuffixes() }
        // An empty storage answers first, before the request is read (a Foundation call each).
        guard hopSettings.sendsCookies, let jar = cookieJar, jar.hasCookies, request.httpShouldHandleCookies,
              !headerFields.keys.contains(where: { $0.lupineEqualsIgnoringASCIICase("Cookie") }),
              let url = request.url,
              let value = jar.cookieHeaderValue(for: url) else { return nil }
        ThreadContract.userCode("the cookie storage")
        return HTTPHeader(name: "Cookie", value: value)
    }

    /// Reads the process's Public Suffix List, once (for a Session whose responses may store
    /// cookies); afterwards this costs one check of a lazily made constant.
    private static func preparePublicSuffixes() {
        _ = PublicSuffixList.shared.ruleCount
    }

    /// Stores the cookies of every `Set-Cookie` line of a response head received for `request`
    /// (redirect hops included), unless the request opted out with `httpShouldHandleCookies`; the
    /// configuration's `httpCookieAcceptPolicy` applies.
    func storeCookies(from head: TransportResponseHead, for request: URLRequest) {
        // Most responses set no cookie: they are answered from the head alone, before the
        // request or the storage is asked anything.
        var lines: [String] = []
        for field in head.headerFields where field.name.lupineEqualsIgnoringASCIICase("Set-Cookie") {
            lines.append(field.value)
        }
        guard !lines.isEmpty, request.httpShouldHandleCookies, let url = request.url, let jar = cookieJar else { return }
        ThreadContract.userCode("the cookie storage")
        jar.store(lines, from: url, mainDocumentURL: request.mainDocumentURL)
    }
}
