import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request: CustomStringConvertible {
    /// `"<METHOD> <URL>"`, plus `" (<status>)"` once a response exists; `"No request created yet."`
    /// before any URLRequest exists.
    public var description: String {
        guard let request = mutableState.withLock({ $0.machine.ledger.lastPerformedRequest })?.urlRequest ?? lastRequest,
              let url = request.url,
              let method = request.httpMethod else { return "No request created yet." }
        let requestDescription = "\(method) \(url.absoluteString)"
        return response.map { "\(requestDescription) (\($0.statusCode))" } ?? requestDescription
    }
}

extension Request {
    /// A curl command equivalent to `lastRequest`: method, credentials, cookies of the Session's
    /// cookie storage, the Session's and the request's headers, body and URL, one option per line.
    /// Returns `"$ curl command could not be created"` when there is no request with a URL, a host
    /// and a method.
    public func cURLDescription() -> String {
        guard let request = lastRequest,
              let url = request.url,
              let host = url.host,
              let method = request.httpMethod else { return "$ curl command could not be created" }

        var components = ["$ curl -v", "-X \(method)"]
        let configuration = delegate?.sessionConfiguration
        components += credentialOptions(host: host, url: url, storage: configuration?.urlCredentialStorage)

        // Read with Lupine's matching (`CookieJar`): the cookies the request is sent with.
        if let configuration, configuration.httpShouldSetCookies, let storage = configuration.httpCookieStorage,
           case let cookies = CookieJar(storage: storage, acceptPolicy: configuration.httpCookieAcceptPolicy).cookies(for: url),
           !cookies.isEmpty {
            components.append("-b \"\(cookies.map { "\($0.name)=\($0.value)" }.joined(separator: ";"))\"")
        }

        var headers = HTTPHeaders()
        for header in configuration?.headers ?? HTTPHeaders() where !header.name.lupineEqualsIgnoringASCIICase("Cookie") {
            headers.update(header)
        }
        for header in request.headers where !header.name.lupineEqualsIgnoringASCIICase("Cookie") {
            headers.update(header)
        }
        for header in headers {
            components.append("-H \"\(header.name): \(header.value.replacingOccurrences(of: "\"", with: "\\\""))\"")
        }

        if let body = request.httpBody {
            let escaped = String(decoding: body, as: UTF8.self)
                .replacingOccurrences(of: "\\\"", with: "\\\\\"")
                .replacingOccurrences(of: "\"", with: "\\\"")
            components.append("-d \"\(escaped)\"")
        }

        components.append("\"\(url.absoluteString)\"")
        return components.joined(separator: " \\\n\t")
    }

    /// `-u user:password` for the stored Basic credentials of the host, else the request's own.
    private func credentialOptions(host: String, url: URL, storage: URLCredentialStorage?) -> [String] {
        guard let storage else { return [] }
        let space = URLProtectionSpace(host: host, port: url.port ?? 0, protocol: url.scheme, realm: host,
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let stored = storage.credentials(for: space).map { Array($0.values) }
        let credentials = stored ?? (credential.map { [$0] } ?? [])
        return credentials.compactMap { credential in
            guard let user = credential.user, let password = credential.password else { return nil }
            return "-u \(user):\(password)"
        }
    }
}
