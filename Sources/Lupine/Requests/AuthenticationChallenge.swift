import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `WWW-Authenticate` challenge of a 401 response, as URLSession reads it: the scheme and realm
/// that pick a credential, and the parameters a scheme needs to answer.
struct AuthenticationChallenge: Equatable {
    /// Lowercased scheme, such as "basic".
    let scheme: String
    /// The realm, or "" when the challenge names none.
    let realm: String

    /// The first challenge Lupine can answer among the response's `WWW-Authenticate` fields.
    static func answerable(in fields: [HTTPHeader]) -> AuthenticationChallenge? {
        fields
            .filter { $0.name.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame }
            .compactMap { AuthenticationChallenge(field: $0.value) }
            .first { $0.scheme == "basic" }
    }

    /// Parses `Scheme realm="...", other=...`; nil for an empty field.
    init?(field: String) {
        let trimmed = field.trimmingCharacters(in: .whitespaces)
        let schemeEnd = trimmed.firstIndex(of: " ") ?? trimmed.endIndex
        guard schemeEnd > trimmed.startIndex else { return nil }
        scheme = trimmed[..<schemeEnd].lowercased()
        realm = Self.parameter("realm", in: trimmed[schemeEnd...]) ?? ""
    }

    /// The value of `name` in an auth-param list (quoted or token).
    private static func parameter(_ name: String, in parameters: Substring) -> String? {
        var rest = parameters[...]
        while let equals = rest.firstIndex(of: "=") {
            let key = rest[..<equals].split(separator: ",").last?.trimmingCharacters(in: .whitespaces).lowercased()
            var valueStart = rest.index(after: equals)
            let value: Substring
            if valueStart < rest.endIndex, rest[valueStart] == "\"" {
                valueStart = rest.index(after: valueStart)
                let valueEnd = rest[valueStart...].firstIndex(of: "\"") ?? rest.endIndex
                value = rest[valueStart..<valueEnd]
                rest = valueEnd < rest.endIndex ? rest[rest.index(after: valueEnd)...] : ""
            } else {
                let valueEnd = rest[valueStart...].firstIndex(of: ",") ?? rest.endIndex
                value = rest[valueStart..<valueEnd]
                rest = rest[valueEnd...]
            }
            if key == name { return String(value) }
        }
        return nil
    }

    /// The protection space URLSession would look the credential up in.
    func protectionSpace(for url: URL) -> URLProtectionSpace? {
        guard let host = url.host else { return nil }
        let scheme = url.scheme?.lowercased() ?? "http"
        return URLProtectionSpace(host: host,
                                  port: url.port ?? (scheme == "https" ? 443 : 80),
                                  protocol: scheme,
                                  realm: realm,
                                  authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    }

    /// `urlRequest` carrying the answer to this challenge with `credential`, or nil when the
    /// credential has no user or password.
    func answer(_ urlRequest: URLRequest, with credential: URLCredential) -> URLRequest? {
        guard let user = credential.user, let password = credential.password else { return nil }
        var answered = urlRequest
        let token = Data("\(user):\(password)".utf8).base64EncodedString()
        answered.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        return answered
    }
}
