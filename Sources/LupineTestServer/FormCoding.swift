/// Parsing of `application/x-www-form-urlencoded` text, which is also how query strings are read.
enum FormCoding {
    /// Splits on `&`, then on the first `=`; a piece without `=` has an empty value.
    static func parse(_ text: Substring) -> [FormField] {
        text.split(separator: "&").map { piece in
            guard let equals = piece.firstIndex(of: "=") else {
                return FormField(name: decode(piece), value: "")
            }
            return FormField(
                name: decode(piece[..<equals]),
                value: decode(piece[piece.index(after: equals)...])
            )
        }
    }

    /// Percent-decodes `text`. Malformed escapes are kept literally rather than rejected,
    /// because test clients deliberately send odd URLs and should see them echoed back.
    static func decode(_ text: Substring, plusAsSpace: Bool = true) -> String {
        let input = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "+") && plusAsSpace {
                output.append(UInt8(ascii: " "))
                index += 1
            } else if byte == UInt8(ascii: "%"), index + 2 < input.count,
                let high = HexDigit.value(of: input[index + 1]),
                let low = HexDigit.value(of: input[index + 2])
            {
                output.append(high << 4 | low)
                index += 3
            } else {
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
