/// A request header field that cannot be sent: its name is not an HTTP token, or its value contains
/// CR, LF or NUL.
///
/// Lupine checks every header field before sending and fails the request with
/// `AFError.createURLRequestFailed(error:)` wrapping this error, so a value taken from user input
/// cannot inject extra header lines.
public struct InvalidHTTPHeaderError: Error, Sendable, CustomStringConvertible {
    enum Problem: Sendable, Equatable {
        /// The name is empty or has a character outside RFC 9110 `tchar`.
        case invalidName
        /// The value contains CR, LF or NUL.
        case invalidValue
    }

    /// The name of the offending header field, exactly as the request holds it.
    public let name: String

    let problem: Problem

    init(name: String, problem: Problem) {
        self.name = name
        self.problem = problem
    }

    /// What is wrong with the field. The value itself is never included (it may be a credential).
    public var description: String {
        switch problem {
        case .invalidName:
            "HTTP header name \(name.debugDescription) is not a valid token (RFC 9110 section 5.1)."
        case .invalidValue:
            "The value of HTTP header \(name.debugDescription) contains CR, LF or NUL."
        }
    }

    /// The first problem of a header field, or nil when it can be sent.
    static func problem(name: String, value: String) -> Problem? {
        if name.isEmpty || !name.utf8.allSatisfy(isTokenCharacter) {
            return .invalidName
        }
        if value.utf8.contains(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }) {
            return .invalidValue
        }
        return nil
    }

    /// RFC 9110 `tchar`: ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
