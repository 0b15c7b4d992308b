import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `Authorization: Digest ...` answer to a Digest challenge (RFC 7616).
struct DigestAnswer {
    private enum Algorithm: String {
        case md5 = "MD5", md5Session = "MD5-SESS", sha256 = "SHA-256", sha256Session = "SHA-256-SESS"

        var isSession: Bool { self == .md5Session || self == .sha256Session }

        func hash(_ text: String) -> String {
            let bytes = Data(text.utf8)
            switch self {
            case .md5, .md5Session: return HexEncoding.lowercase(Insecure.MD5.hash(data: bytes))
            case .sha256, .sha256Session: return HexEncoding.lowercase(SHA256.hash(data: bytes))
            }
        }
    }

    private let challenge: AuthenticationChallenge
    private let algorithm: Algorithm
    private let nonce: String
    /// "auth" when the server offers it; nil for the RFC 2069 form without qop.
    private let qop: String?

    /// Nil when the challenge has no nonce, an unknown algorithm, or only qop values Lupine does
    /// not implement (`auth-int`).
    init?(challenge: AuthenticationChallenge) {
        guard let nonce = challenge.parameters["nonce"],
              let algorithm = Algorithm(rawValue: (challenge.parameters["algorithm"] ?? "MD5").uppercased())
        else { return nil }
        if let offered = challenge.parameters["qop"] {
            let values = offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard values.contains("auth") else { return nil }
            qop = "auth"
        } else {
            qop = nil
        }
        self.challenge = challenge
        self.algorithm = algorithm
        self.nonce = nonce
    }

    /// The header value for `user` and `password` sending `request`.
    func authorization(user: String, password: String, for request: URLRequest, clientNonce: String = DigestAnswer.makeClientNonce()) -> String {
        let realm = challenge.realm
        let uri = Self.requestTarget(of: request)
        let method = request.httpMethod ?? "GET"
        let nonceCount = "00000001"
        var ha1 = algorithm.hash("\(user):\(realm):\(password)")
        if algorithm.isSession { ha1 = algorithm.hash("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 = algorithm.hash("\(method):\(uri)")
        let response = qop.map { algorithm.hash("\(ha1):\(nonce):\(nonceCount):\(clientNonce):\($0):\(ha2)") }
            ?? algorithm.hash("\(ha1):\(nonce):\(ha2)")

        var fields = [
            "username=\(Self.quoted(user))",
            "realm=\(Self.quoted(realm))",
            "nonce=\(Self.quoted(nonce))",
            "uri=\(Self.quoted(uri))",
            "algorithm=\(challenge.parameters["algorithm"] ?? "MD5")",
            "response=\(Self.quoted(response))",
        ]
        if let qop { fields += ["qop=\(qop)", "nc=\(nonceCount)", "cnonce=\(Self.quoted(clientNonce))"] }
        if let opaque = challenge.parameters["opaque"] { fields.append("opaque=\(Self.quoted(opaque))") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// Path and query as sent on the request line.
    static func requestTarget(of request: URLRequest) -> String {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    static func makeClientNonce() -> String {
        HexEncoding.lowercase((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    /// A quoted-string; escaped by Unicode scalar, since a backslash or a quote followed by a
    /// combining mark is one Character that a String replacement would not find.
    private static func quoted(_ value: String) -> String {
        var text = String.UnicodeScalarView(["\""])
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { text.append("\\") }
            text.append(scalar)
        }
        text.append("\"")
        return String(text)
    }
}
