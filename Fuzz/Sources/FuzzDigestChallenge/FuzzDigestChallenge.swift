import Crypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// `WWW-Authenticate` challenges and the Digest answer (RFC 7616, RFC 9110 section 11).
///
/// - Any field value: parsing and answering never crash, and an answer passes the checks every
///   request goes through before it is sent.
/// - A Digest challenge built from arbitrary realm, nonce and opaque values (quoted, with
///   quoted-pairs, in any order and case, among unknown parameters): Lupine reads the values back
///   exactly, and its answer is the one a server computes from the values it sent.
@main
enum FuzzDigestChallengeMain {
    static func main() {
        exit(runFuzzer(fuzzDigestChallenge))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDigestChallenge(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    if input.byte() % 3 == 0 {
        checkAnyField(&input)
    } else {
        checkBuiltChallenge(&input)
    }
    return 0
}

/// A header field value as an HTTP parser delivers it: no CR, LF or NUL.
func fieldText(_ input: inout FuzzInput) -> String {
    String(decoding: input.chunk().filter { $0 != 0x0D && $0 != 0x0A && $0 != 0 }, as: UTF8.self)
}

func checkAnyField(_ input: inout FuzzInput) {
    var fields: [HTTPHeader] = []
    for _ in 0..<Int(input.byte() % 3 + 1) {
        fields.append(HTTPHeader(name: input.bool() ? "WWW-Authenticate" : "www-authenticate", value: fieldText(&input)))
    }
    guard let challenge = AuthenticationChallenge.answerable(in: fields) else { return }
    fuzzRequire(challenge.scheme == "digest" || challenge.scheme == "basic", "answerable scheme \(challenge.scheme)")
    guard let url = URL(string: "http://127.0.0.1:9/dir/index.html?q=1") else { return }
    let credential = URLCredential(user: input.string(), password: input.string(), persistence: .none)
    guard let answered = challenge.answer(URLRequest(url: url), with: credential) else { return }
    do {
        try answered.lupineValidateForSending()
    } catch {
        fuzzRequire(false, "the answer to \(fields.map(\.value)) fails the sending checks: \(error)")
    }
}

/// RFC 9110 quoted-string: `"` and `\` escaped with a backslash, any other character as is
/// (optionally escaped too: a quoted-pair may escape any character).
func quoted(_ value: String, escapeEverything: Bool) -> String {
    // By Unicode scalar: a quote followed by a combining mark is one Character, but still a quote.
    var text = "\""
    for scalar in value.unicodeScalars {
        if scalar == "\"" || scalar == "\\" || escapeEverything { text.unicodeScalars.append("\\") }
        text.unicodeScalars.append(scalar)
    }
    return text + "\""
}

/// Parameter values: visible ASCII and spaces, tabs and UTF-8 (what a quoted-string may hold).
func parameterValue(_ input: inout FuzzInput) -> String {
    String(decoding: input.chunk().filter { $0 == 0x09 || $0 >= 0x20 && $0 != 0x7F }, as: UTF8.self)
}

func checkBuiltChallenge(_ input: inout FuzzInput) {
    let realm = parameterValue(&input)
    let nonce = parameterValue(&input)
    let opaque = input.bool() ? parameterValue(&input) : nil
    let algorithms = ["MD5", "md5", "SHA-256", "sha-256", "MD5-sess", "SHA-256-SESS", nil]
    let algorithm = algorithms[Int(input.byte()) % algorithms.count]
    let qops = ["auth", "auth,auth-int", "auth-int, auth", " auth ", nil]
    let qop = qops[Int(input.byte()) % qops.count]
    let escapeEverything = input.bool()

    var parameters = ["realm=" + quoted(realm, escapeEverything: escapeEverything),
                      "nonce=" + quoted(nonce, escapeEverything: escapeEverything)]
    if let opaque { parameters.append("opaque=" + quoted(opaque, escapeEverything: escapeEverything)) }
    if let algorithm { parameters.append("algorithm=" + (input.bool() ? algorithm : quoted(algorithm, escapeEverything: false))) }
    if let qop { parameters.append("qop=" + quoted(qop, escapeEverything: false)) }
    if input.bool() { parameters.append("stale=FALSE") }
    if input.bool() { parameters.append("charset=UTF-8") }
    if input.bool() { parameters.append("domain=" + quoted("/a, /b", escapeEverything: false)) }
    // Any order, any amount of optional white space around the commas.
    var order = Array(parameters.indices)
    for index in order.indices.reversed() where index > 0 {
        order.swapAt(index, Int(input.byte()) % (index + 1))
    }
    let separators = [", ", ",", " , ", ",\t"]
    let joined = order.map { parameters[$0] }.enumerated().map { index, parameter in
        (index == 0 ? "" : separators[Int(input.byte()) % separators.count]) + parameter
    }.joined()
    let schemes = ["Digest", "digest", "DIGEST"]
    let field = schemes[Int(input.byte()) % schemes.count] + " " + joined

    guard let challenge = AuthenticationChallenge(field: field) else {
        fuzzRequire(false, "\(field.debugDescription) did not parse")
        return
    }
    fuzzRequire(challenge.scheme == "digest", "scheme \(challenge.scheme) from \(field.debugDescription)")
    fuzzRequire(challenge.parameters["realm"] == realm,
                "realm \(String(describing: challenge.parameters["realm"]).debugDescription) from \(field.debugDescription), sent \(realm.debugDescription)")
    fuzzRequire(challenge.parameters["nonce"] == nonce, "nonce read back wrong from \(field.debugDescription)")
    if let opaque { fuzzRequire(challenge.parameters["opaque"] == opaque, "opaque read back wrong from \(field.debugDescription)") }

    guard let answer = DigestAnswer(challenge: challenge) else {
        // Refused only for what Lupine does not implement: qop without auth.
        fuzzRequire(qop != nil && !qop!.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "auth" },
                    "\(field.debugDescription) was not answered")
        return
    }
    let user = parameterValue(&input)
    let password = parameterValue(&input)
    let path = input.string().addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
    guard let url = URL(string: "http://127.0.0.1:9/\(path)") else { return }
    var request = URLRequest(url: url)
    request.httpMethod = input.bool() ? "GET" : "POST"
    let clientNonce = "0a4f113b"
    let authorization = answer.authorization(user: user, password: password, for: request, clientNonce: clientNonce)

    var answered = request
    answered.setValue(authorization, forHTTPHeaderField: "Authorization")
    do {
        try answered.lupineValidateForSending()
    } catch {
        fuzzRequire(false, "the answer fails the sending checks: \(error)")
    }
    // What a server computes from what it sent and what the answer says.
    guard authorization.hasPrefix("Digest "),
          let fields = authParameters(authorization.dropFirst("Digest ".count))
    else {
        fuzzRequire(false, "the answer does not parse: \(authorization.debugDescription)")
        return
    }
    fuzzRequire(fields["username"] == user, "username \(String(describing: fields["username"])) for \(user.debugDescription)")
    fuzzRequire(fields["realm"] == realm && fields["nonce"] == nonce, "realm or nonce echoed wrong: \(authorization.debugDescription)")
    if let opaque { fuzzRequire(fields["opaque"] == opaque, "opaque echoed wrong") }
    let uri = fields["uri"] ?? ""
    let upper = (algorithm ?? "MD5").uppercased()
    func hash(_ text: String) -> String {
        let bytes = Data(text.utf8)
        let digest: [UInt8] = upper.hasPrefix("SHA-256") ? Array(SHA256.hash(data: bytes)) : Array(Insecure.MD5.hash(data: bytes))
        return digest.map { String(format: "%02x", $0) }.joined()
    }
    var ha1 = hash("\(user):\(realm):\(password)")
    if upper.hasSuffix("-SESS") { ha1 = hash("\(ha1):\(nonce):\(clientNonce)") }
    let ha2 = hash("\(request.httpMethod ?? "GET"):\(uri)")
    let expected = qop == nil
        ? hash("\(ha1):\(nonce):\(ha2)")
        : hash("\(ha1):\(nonce):\(fields["nc"] ?? ""):\(fields["cnonce"] ?? ""):auth:\(ha2)")
    fuzzRequire(fields["response"] == expected, "response \(String(describing: fields["response"])) expected \(expected) for \(field.debugDescription)")
    fuzzRequire(uri == DigestAnswer.requestTarget(of: request), "uri \(uri) for \(url)")
}

/// The auth-params of a credentials value (RFC 9110 section 11.2), read independently of Lupine:
/// `name=token` or `name="quoted-string"` with quoted-pairs, separated by commas.
func authParameters(_ text: Substring) -> [String: String]? {
    var result: [String: String] = [:]
    var characters = Array(text.unicodeScalars)[...]
    func skipSpace() { while let first = characters.first, first == " " || first == "\t" { characters.removeFirst() } }
    while true {
        skipSpace()
        guard !characters.isEmpty else { return result }
        guard let equals = characters.firstIndex(of: "=") else { return nil }
        var nameText = ""
        nameText.unicodeScalars.append(contentsOf: characters[..<equals])
        let name = nameText.trimmingCharacters(in: .whitespaces).lowercased()
        characters = characters[(equals + 1)...]
        var value = ""
        if characters.first == "\"" {
            characters.removeFirst()
            var closed = false
            while let character = characters.popFirst() {
                if character == "\\" {
                    guard let escaped = characters.popFirst() else { return nil }
                    value.unicodeScalars.append(escaped)
                } else if character == "\"" {
                    closed = true
                    break
                } else {
                    value.unicodeScalars.append(character)
                }
            }
            guard closed else { return nil }
        } else {
            while let character = characters.first, character != "," {
                value.unicodeScalars.append(character)
                characters.removeFirst()
            }
            value = value.trimmingCharacters(in: .whitespaces)
        }
        result[name] = value
        skipSpace()
        guard let next = characters.popFirst() else { return result }
        guard next == "," else { return nil }
    }
}
