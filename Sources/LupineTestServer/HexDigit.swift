/// Hexadecimal digits: decoding shared by percent-decoding and JSON `\u` escapes, and the
/// lowercase encoding of digests.
enum HexDigit {
    /// `bytes` as lowercase hex, two digits a byte.
    static func lowercase<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        bytes.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The value of an ASCII hex digit, or nil for any other byte.
    static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
