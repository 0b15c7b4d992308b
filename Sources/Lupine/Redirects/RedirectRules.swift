import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's rules for following a redirect, as a pure function of the hop's request and the
/// 3xx response: which request goes next, or why none may.
enum RedirectRules {
    /// URLSession stops after this many hops with `URLError(.httpTooManyRedirects)`.
    static let maximumRedirects = 16

    enum Decision: Equatable {
        /// Not a redirect that is followed: the response is final.
        case notARedirect
        /// Follow with this request.
        case follow(URLRequest)
        /// Refuse, failing the request with this code.
        case refuse(URLError.Code)
    }

    static func decision(for sentRequest: @autoclosure () -> URLRequest, statusCode: Int, location: String?,
                         redirectsSoFar: Int) -> Decision {
        // The request is read only for a redirect: most responses are not one.
        guard [301, 302, 303, 307, 308].contains(statusCode), let location, !location.isEmpty else { return .notARedirect }
        let request = sentRequest()
        guard let currentURL = request.url,
              let target = URL(string: location, relativeTo: currentURL)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return .notARedirect }

        guard redirectsSoFar < maximumRedirects else { return .refuse(.httpTooManyRedirects) }
        if currentURL.scheme?.lowercased() == "https", scheme == "http" {
            return .refuse(.appTransportSecurityRequiresSecureConnection)
        }

        var next = request
        next.url = target
        let method = request.httpMethod?.uppercased() ?? "GET"
        // 301 and 302 turn POST into GET; 303 turns everything but HEAD into GET. 307 and 308 keep
        // the method and the body.
        let becomesGET = ((statusCode == 301 || statusCode == 302) && method == "POST")
            || (statusCode == 303 && method != "GET" && method != "HEAD")
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        } else if next.httpBodyStream != nil {
            // The hop that keeps the body cannot send it again: the stream was read by the first
            // hop and cannot be rewound. URLSession fails such a task with this code rather than
            // sending an empty or partial body.
            return .refuse(.requestBodyStreamExhausted)
        }
        // Credentials and cookies never travel to another origin.
        if !sameOrigin(currentURL, target) {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
            next.setValue(nil, forHTTPHeaderField: "Proxy-Authorization")
            next.setValue(nil, forHTTPHeaderField: "Cookie")
        }
        return .follow(next)
    }

    static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased()
            && effectivePort(lhs) == effectivePort(rhs)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
