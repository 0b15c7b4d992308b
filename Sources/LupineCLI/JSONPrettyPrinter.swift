/// Re-indents JSON text without re-encoding it, so that keys keep their order and numbers and
/// strings their exact spelling. The input must be valid JSON: it is not checked here.
enum JSONPrettyPrinter {
    /// `json` with one member or element per line, nested `indent` deeper per level; empty
    /// objects and arrays stay `{}` and `[]`.
    static func format(_ json: some Collection<UInt8>, indent: String = "  ") -> String {
        let bytes = Array(json)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        var depth = 0
        var index = 0

        func newline() {
            output.append(UInt8(ascii: "\n"))
            for _ in 0..<depth { output.append(contentsOf: indent.utf8) }
        }

        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "\""):
                index = copyString(from: bytes, openingQuoteAt: index - 1, into: &output)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                let next = firstNonWhitespace(in: bytes, from: index)
                if next < bytes.count, bytes[next] == closing(of: byte) {
                    output.append(bytes[next])
                    index = next + 1
                } else {
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                output.append(byte)
            case UInt8(ascii: ","):
                output.append(byte)
                newline()
            case UInt8(ascii: ":"):
                output.append(contentsOf: ": ".utf8)
            default:
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Copies the string literal starting at `start` (its opening quote) and returns the index
    /// just past its closing quote.
    private static func copyString(from bytes: [UInt8], openingQuoteAt start: Int, into output: inout [UInt8]) -> Int {
        output.append(bytes[start])
        var index = start + 1
        var escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            output.append(byte)
            index += 1
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                break
            }
        }
        return index
    }

    private static func firstNonWhitespace(in bytes: [UInt8], from start: Int) -> Int {
        var index = start
        while index < bytes.count, [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(bytes[index]) {
            index += 1
        }
        return index
    }

    private static func closing(of opening: UInt8) -> UInt8 {
        opening == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
    }
}
