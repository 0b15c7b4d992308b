import Foundation

/// Percent-escapes strings as `addingPercentEncoding(withAllowedCharacters:)` does for one set of
/// allowed characters, doing ASCII strings in Swift.
///
/// On Linux, Foundation's method asks a CFCharacterSet about every character: about a microsecond
/// per call, paid twice per query parameter. The allowed ASCII bytes are looked up once here, and a
/// string with any non-ASCII character still goes to Foundation, so the result is Foundation's in
/// every case. Not for `.urlPathAllowed`: with that set Foundation also escapes a colon in the first
/// path segment, which a table of bytes cannot know.
struct PercentEscaper: Sendable {
    private let allowedCharacters: CharacterSet
    /// Whether each ASCII byte may appear unescaped.
    private let allowsASCIIByte: [Bool]

    private static let uppercaseHexDigits = Array("0123456789ABCDEF".utf8)

    init(allowing allowedCharacters: CharacterSet) {
        self.allowedCharacters = allowedCharacters
        allowsASCIIByte = (0..<128).map { allowedCharacters.contains(Unicode.Scalar(UInt8($0))) }
    }

    /// `string` with every character outside the allowed set written as `%XX` (uppercase hex) for
    /// each of its UTF-8 bytes; nil only where Foundation answers nil.
    func escape(_ string: String) -> String? {
        var isUnchanged = true
        for byte in string.utf8 {
            guard byte < 0x80 else { return string.addingPercentEncoding(withAllowedCharacters: allowedCharacters) }
            if !allowsASCIIByte[Int(byte)] { isUnchanged = false }
        }
        if isUnchanged { return string }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(string.utf8.count * 3)
        for byte in string.utf8 {
            if allowsASCIIByte[Int(byte)] {
                escaped.append(byte)
            } else {
                escaped.append(UInt8(ascii: "%"))
                escaped.append(Self.uppercaseHexDigits[Int(byte >> 4)])
                escaped.append(Self.uppercaseHexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }
}
