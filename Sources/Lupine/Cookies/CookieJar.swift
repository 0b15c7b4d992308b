import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 6265's storage and retrieval rules, kept by Lupine over any `HTTPCookieStorage`, which is
/// used only as the place cookies live.
///
/// corelibs-foundation's own matching cannot be relied on: `HTTPCookie.cookies(withResponseHeaderFields:for:)`
/// ignores `Max-Age` (so `Max-Age=0` does not delete) and defaults every path to "/", and
/// `HTTPCookieStorage.cookies(for:)` returns expired cookies, `Secure` cookies for http URLs and
/// cookies of other paths. So Lupine parses `Set-Cookie` itself and filters what it reads.
///
/// A host-only cookie is stored with the host as its domain; a cookie with a `Domain` attribute
/// with that domain after a dot (".example.com"), as Foundation does.
///
/// Which cookies are stored (RFC 6265, sections 5.3 and 5.4, with RFC 6265bis's prefixes):
/// - A `Domain` attribute must name the request's host or a domain above it, and no public
///   suffix of the Public Suffix List (see `PublicSuffixList`): a site may not set cookies for
///   every site under "com", "co.uk" or "github.io". A `Domain` that is a public suffix and the
///   request's host itself makes a host-only cookie.
/// - A request to an IP address takes a `Domain` attribute only when it is that address, and
///   the cookie is host-only.
/// - A cookie named `__Secure-...` is taken only from an https (or wss) URL and with `Secure`;
///   one named `__Host-...` also needs `Path=/` and no `Domain` (the prefixes are matched
///   ignoring case).
struct CookieJar: @unchecked Sendable {
    // HTTPCookieStorage is internally synchronized.
    let storage: HTTPCookieStorage
    let acceptPolicy: HTTPCookie.AcceptPolicy
    /// The list that decides public suffixes; nil for the process's (`PublicSuffixList.shared`),
    /// read only when a `Domain` attribute needs it.
    var publicSuffixes: PublicSuffixList? = nil

    // MARK: Storing

    /// Stores the cookies of a response's `Set-Cookie` lines, received for `url`.
    ///
    /// A cookie the rules above turn down is ignored; `Max-Age` wins over `Expires`; a cookie
    /// already expired deletes the stored one with the same name, domain and path.
    func store(_ setCookieLines: [String], from url: URL, mainDocumentURL: URL?, now: Date = Date()) {
        guard acceptPolicy != .never, let host = Self.host(of: url) else { return }
        for line in setCookieLines {
            guard let parsed = SetCookie(line), let domain = domain(of: parsed, host: host),
                  Self.meetsPrefixRules(parsed, from: url),
                  let cookie = Self.cookie(from: parsed, domain: domain, url: url, now: now) else { continue }
            if acceptPolicy == .onlyFromMainDocumentDomain, let mainHost = mainDocumentURL.flatMap(Self.host),
               !Self.domainMatches(host: mainHost, cookieDomain: cookie.domain) {
                continue
            }
            if let expiry = cookie.expiresDate, expiry <= now {
                deleteStored(named: cookie.name, domain: cookie.domain, path: cookie.path)
            } else {
                storage.setCookie(cookie)
            }
        }
    }

    /// The domain a cookie is stored under: the host for a host-only cookie, "." and the
    /// `Domain` attribute for a domain cookie; nil when the cookie is to be ignored.
    private func domain(of parsed: SetCookie, host: String) -> String? {
        guard let attribute = parsed.domain else { return host }
        guard let domain = PublicSuffixList.canonical(attribute) else { return nil }
        // An IP address has no parent domain: only the address itself may be named.
        if Self.isIPAddress(host) { return domain == host ? host : nil }
        if (publicSuffixes ?? PublicSuffixList.shared).isPublicSuffix(domain) {
            return domain == host ? host : nil
        }
        // Another site may not be named.
        guard domain == host || host.hasSuffix("." + domain) else { return nil }
        return "." + domain
    }

    /// RFC 6265bis's cookie prefixes: `__Secure-` needs `Secure` and a secure origin; `__Host-`
    /// also needs `Path=/` and no `Domain` attribute, so that only its host ever receives it.
    private static func meetsPrefixRules(_ parsed: SetCookie, from url: URL) -> Bool {
        let isSecureOrigin = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        if hasPrefixIgnoringASCIICase(parsed.name, "__Secure-") {
            return parsed.isSecure && isSecureOrigin
        }
        if hasPrefixIgnoringASCIICase(parsed.name, "__Host-") {
            return parsed.isSecure && isSecureOrigin && parsed.domain == nil && parsed.path == "/"
        }
        return true
    }

    private static func hasPrefixIgnoringASCIICase(_ name: String, _ prefix: String) -> Bool {
        name.utf8.count >= prefix.utf8.count
            && zip(name.utf8, prefix.utf8).allSatisfy { $0.lupineASCIILowercased == $1.lupineASCIILowercased }
    }

    private static func cookie(from parsed: SetCookie, domain: String, url: URL, now: Date) -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: parsed.name,
            .value: parsed.value,
            .domain: domain,
            .path: parsed.path ?? defaultPath(of: url),
            .version: "0",
        ]
        if let maxAge = parsed.maxAge {
            properties[.expires] = maxAge <= 0 ? Date(timeIntervalSince1970: 0) : now.addingTimeInterval(TimeInterval(maxAge))
        } else if let expires = parsed.expires {
            properties[.expires] = expires
        }
        if parsed.isSecure { properties[.secure] = "TRUE" }
        return HTTPCookie(properties: properties)
    }

    private func deleteStored(named name: String, domain: String, path: String) {
        for stored in storage.cookies ?? [] where stored.name == name && stored.domain == domain && stored.path == path {
            storage.deleteCookie(stored)
        }
    }

    // MARK: Reading

    /// Whether the storage holds any cookie (one question to it, nothing of a URL read).
    var hasCookies: Bool {
        !(storage.cookies?.isEmpty ?? true)
    }

    /// The unexpired cookies to send to `url`: domain, path and `Secure` matched, longest path
    /// first. Expired cookies met on the way are deleted.
    func cookies(for url: URL, now: Date = Date()) -> [HTTPCookie] {
        // An empty storage answers before the URL is taken apart (a Foundation call per part).
        guard let stored = storage.cookies, !stored.isEmpty, let host = Self.host(of: url) else { return [] }
        let isSecure = url.scheme?.lowercased() == "https"
        let path = Self.requestPath(of: url)
        var matching: [HTTPCookie] = []
        for cookie in stored {
            if let expiry = cookie.expiresDate, expiry <= now {
                storage.deleteCookie(cookie)
                continue
            }
            guard Self.domainMatches(host: host, cookieDomain: cookie.domain),
                  Self.pathMatches(path, cookiePath: cookie.path),
                  isSecure || !cookie.isSecure else { continue }
            matching.append(cookie)
        }
        // Stable: cookies with equal paths keep the storage's order.
        return matching.enumerated()
            .sorted { ($0.element.path.count, -$0.offset) > ($1.element.path.count, -$1.offset) }
            .map(\.element)
    }

    /// The `Cookie` field value for `url`, or nil when no cookie matches.
    func cookieHeaderValue(for url: URL, now: Date = Date()) -> String? {
        let cookies = cookies(for: url, now: now)
        guard !cookies.isEmpty else { return nil }
        return cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    // MARK: Matching (RFC 6265, section 5.1)

    static func domainMatches(host: String, cookieDomain: String) -> Bool {
        let domain = cookieDomain.lowercased()
        guard domain.hasPrefix(".") else { return host == domain }
        let suffix = String(domain.dropFirst())
        return host == suffix || (!isIPAddress(host) && host.hasSuffix(domain))
    }

    static func pathMatches(_ requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).hasPrefix("/")
    }

    /// The directory of the URL's path: up to, not including, its last "/" ("/" at the top).
    static func defaultPath(of url: URL) -> String {
        let path = requestPath(of: url)
        guard path.hasPrefix("/"), let lastSlash = path.lastIndex(of: "/"), lastSlash != path.startIndex else { return "/" }
        return String(path[..<lastSlash])
    }

    /// The URL's path as sent (percent-encoded, a trailing "/" kept); "/" when empty.
    private static func requestPath(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    private static func host(of url: URL) -> String? {
        guard let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        return host
    }

    private static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || host.allSatisfy { $0 == "." || ($0.isASCII && $0.isNumber) }
    }
}
