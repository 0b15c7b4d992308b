import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `WWW-Authenticate` challenge of a 401 response that Lupine can answer: Basic (RFC 7617) or
/// Digest (RFC 7616, algorithms MD5 and SHA-256, with or without `-sess`, qop `auth` or none).
struct AuthenticationChallenge: Equatable {
    /// Lowercased scheme: "basic" or "digest".
    let scheme: String
    /// Lowercased auth-param names and their values.
    let parameters: [String: String]

    /// The realm, or "" when the challenge names none.
    var realm: String { parameters["realm"] ?? "" }

    /// The challenge to answer among the response's fields: Digest is preferred, as URLSession does.
    static func answerable(in fields: [HTTPHeader]) -> AuthenticationChallenge? {
        let challenges = fields
            .filter { $0.name.lupineEqualsIgnoringASCIICase("WWW-Authenticate") }
            .compactMap { AuthenticationChallenge(field: $0.value) }
        return challenges.first { $0.scheme == "digest" && DigestAnswer(challenge: $0) != nil }
            ?? challenges.first { $0.scheme == "basic" }
    }

    /// Parses `Scheme name="quoted", name=token, ...`; nil for an empty field.
    init?(field: String) {
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        let schemeEnd = trimmed.firstIndex(of: " ") ?? trimmed.endIndex
        guard schemeEnd > trimmed.startIndex else { return nil }
        scheme = trimmed[..<schemeEnd].lowercased()
        parameters = Self.parameters(in: trimmed[schemeEnd...])
    }

    /// The auth-params of a challenge (RFC 9110 section 11.2): a quoted-string value may hold commas
    /// and quoted-pairs (`\"`, `\\`), and is taken as is, white space included. Read by Unicode
    /// scalar: a quote followed by a combining mark is still a quote.
    private static func parameters(in list: Substring) -> [String: String] {
        var result: [String: String] = [:]
        var rest = list.unicodeScalars[...]
        while let equals = rest.firstIndex(of: "=") {
            let name = String(String.UnicodeScalarView(rest[..<equals])).split(separator: ",").last?
                .trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            rest = rest[rest.index(after: equals)...]
            var value = String.UnicodeScalarView()
            let isQuoted = rest.first == "\""
            if isQuoted {
                rest = rest.dropFirst()
                while let scalar = rest.popFirst(), scalar != "\"" {
                    if scalar == "\\", let escaped = rest.popFirst() {
                        value.append(escaped)
                    } else {
                        value.append(scalar)
                    }
                }
            } else {
                let valueEnd = rest.firstIndex(of: ",") ?? rest.endIndex
                value.append(contentsOf: rest[..<valueEnd])
                rest = rest[valueEnd...]
            }
            let text = String(value)
            if !name.isEmpty { result[name] = isQuoted ? text : text.trimmingCharacters(in: .whitespaces) }
        }
        return result
    }

    /// The protection space URLSession would look the credential up in.
    func protectionSpace(for url: URL) -> URLProtectionSpace? {
        guard let host = url.host else { return nil }
        let scheme = url.scheme?.lowercased() ?? "http"
        return URLProtectionSpace(host: host,
                                  port: url.port ?? (scheme == "https" ? 443 : 80),
                                  protocol: scheme,
                                  realm: realm,
                                  authenticationMethod: self.scheme == "digest"
                                      ? NSURLAuthenticationMethodHTTPDigest
                                      : NSURLAuthenticationMethodHTTPBasic)
    }

    /// `urlRequest` carrying the answer to this challenge with `credential`, or nil when the
    /// credential has no user or password.
    func answer(_ urlRequest: URLRequest, with credential: URLCredential) -> URLRequest? {
        guard let user = credential.user, let password = credential.password else { return nil }
        let authorization: String
        if scheme == "digest" {
            guard let digest = DigestAnswer(challenge: self) else { return nil }
            authorization = digest.authorization(user: user, password: password, for: urlRequest)
        } else {
            authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
        var answered = urlRequest
        answered.setValue(authorization, forHTTPHeaderField: "Authorization")
        return answered
    }
}
