import Crypto
import Foundation
import NIOHTTP1

/// `/digest-auth/QOP/U/P[/ALGORITHM]`: a Digest challenge (RFC 7616), checked by recomputing the
/// client's response. QOP is `auth` or `none`; ALGORITHM is MD5 (default) or SHA-256.
enum DigestAuthRoutes {
    static let realm = "lupine@127.0.0.1"
    static let nonce = "dcd98b7102dd2f0e8b11d0f600bfb0c093"
    static let opaque = "5ccc069c403ebaf9f0171e9517f40e41"

    static func digest(_ request: TestRequest, qop: String, user: String, password: String, algorithm: String = "MD5") -> ResponsePlan {
        let algorithm = algorithm.uppercased()
        guard qop == "auth" || qop == "none", algorithm == "MD5" || algorithm == "SHA-256" else {
            return .response(.error(.badRequest, "qop must be auth or none, algorithm MD5 or SHA-256"))
        }
        if let fields = authorizationFields(of: request),
           fields["username"] == user,
           fields["nonce"] == nonce,
           let uri = fields["uri"],
           let response = fields["response"],
           response == expectedResponse(fields: fields, uri: uri, method: request.method.rawValue,
                                        user: user, password: password, qop: qop, algorithm: algorithm) {
            return .response(.json(.object(["authenticated": .bool(true), "user": .string(user)])))
        }
        var challenge = "Digest realm=\"\(realm)\", nonce=\"\(nonce)\", opaque=\"\(opaque)\", algorithm=\(algorithm)"
        if qop == "auth" { challenge += ", qop=\"auth\"" }
        return .response(.empty(.unauthorized, headers: ["WWW-Authenticate": challenge]))
    }

    private static func expectedResponse(fields: [String: String], uri: String, method: String,
                                         user: String, password: String, qop: String, algorithm: String) -> String {
        let ha1 = hash("\(user):\(realm):\(password)", algorithm)
        let ha2 = hash("\(method):\(uri)", algorithm)
        guard qop == "auth" else { return hash("\(ha1):\(nonce):\(ha2)", algorithm) }
        let nc = fields["nc"] ?? "", cnonce = fields["cnonce"] ?? ""
        return hash("\(ha1):\(nonce):\(nc):\(cnonce):auth:\(ha2)", algorithm)
    }

    private static func hash(_ text: String, _ algorithm: String) -> String {
        let data = Data(text.utf8)
        let digest: [UInt8] = algorithm == "SHA-256" ? Array(SHA256.hash(data: data)) : Array(Insecure.MD5.hash(data: data))
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// The name=value pairs of an `Authorization: Digest ...` header.
    private static func authorizationFields(of request: TestRequest) -> [String: String]? {
        guard let header = request.header("authorization"), header.lowercased().hasPrefix("digest ") else { return nil }
        var fields: [String: String] = [:]
        var rest = header.dropFirst("digest ".count)[...]
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].split(separator: ",").last?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            var start = rest.index(after: equals)
            let value: Substring
            if start < rest.endIndex, rest[start] == "\"" {
                start = rest.index(after: start)
                let end = rest[start...].firstIndex(of: "\"") ?? rest.endIndex
                value = rest[start..<end]
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                let end = rest[start...].firstIndex(of: ",") ?? rest.endIndex
                value = rest[start..<end]
                rest = rest[end...]
            }
            fields[name] = String(value)
        }
        return fields
    }
}
