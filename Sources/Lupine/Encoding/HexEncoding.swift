/// Lowercase hexadecimal text for bytes: digests in cache file names, Digest authentication and
/// key descriptions.
///
/// Written out by hand: `String(format: "%02x")` goes through NSString on Linux and cost a
/// quarter of a small GET's CPU time when the cache named its files with it.
enum HexEncoding {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Two lowercase hexadecimal digits per byte, in order.
    static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
