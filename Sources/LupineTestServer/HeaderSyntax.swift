/// Checks for header names and values taken from request input, so an echoed header can never
/// break the response framing (CR/LF injection) or make the encoder reject the response.
enum HeaderSyntax {
    /// Whether `name` is an RFC 9110 token.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `value` holds only visible characters, spaces and tabs (obs-text allowed).
    static func isValidValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// Headers that define message framing; letting a client set them would corrupt the response.
    static func isFramingHeader(_ name: String) -> Bool {
        ["content-length", "transfer-encoding", "connection"].contains(name.lowercased())
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
