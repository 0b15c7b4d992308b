/// A strict RFC 8259 parser for request bodies.
///
/// Nesting depth is capped because bodies come from the network and deep recursion
/// would otherwise let a client exhaust the server's stack.
struct JSONParser {
    private enum Failure: Error {
        case invalid
    }

    private static let maximumDepth = 256

    private let bytes: [UInt8]
    private var index = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Parses a complete document, or returns nil when `bytes` are not exactly one JSON value.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var parser = JSONParser(bytes: bytes)
        do {
            parser.skipWhitespace()
            let value = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            return parser.index == bytes.count ? value : nil
        } catch {
            return nil
        }
    }

    private var current: UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
            index += 1
        }
    }

    private mutating func consume(_ byte: UInt8) throws {
        guard current == byte else { throw Failure.invalid }
        index += 1
    }

    private mutating func consume(literal: String) throws {
        for byte in literal.utf8 {
            try consume(byte)
        }
    }

    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard depth < Self.maximumDepth, let byte = current else { throw Failure.invalid }
        switch byte {
        case UInt8(ascii: "{"):
            return try parseObject(depth: depth)
        case UInt8(ascii: "["):
            return try parseArray(depth: depth)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try consume(literal: "true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try consume(literal: "false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try consume(literal: "null")
            return .null
        default:
            return .number(try parseNumber())
        }
    }

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        try consume(UInt8(ascii: "{"))
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            let key = try parseString()
            skipWhitespace()
            try consume(UInt8(ascii: ":"))
            skipWhitespace()
            members[key] = try parseValue(depth: depth + 1)
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try consume(UInt8(ascii: "}"))
            return .object(members)
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        try consume(UInt8(ascii: "["))
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try consume(UInt8(ascii: "]"))
            return .array(items)
        }
    }

    private mutating func parseNumber() throws -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else {
            try consumeDigits()
        }
        if current == UInt8(ascii: ".") {
            index += 1
            try consumeDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            try consumeDigits()
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func consumeDigits() throws {
        let start = index
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
            index += 1
        }
        guard index > start else { throw Failure.invalid }
    }

    private mutating func parseString() throws -> String {
        try consume(UInt8(ascii: "\""))
        var utf8: [UInt8] = []
        while true {
            guard let byte = current else { throw Failure.invalid }
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: utf8, as: UTF8.self) else { throw Failure.invalid }
                return text
            case UInt8(ascii: "\\"):
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw Failure.invalid
            default:
                utf8.append(byte)
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws {
        guard let byte = current else { throw Failure.invalid }
        index += 1
        let simple: UInt8?
        switch byte {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default: throw Failure.invalid
        }
        if let simple {
            utf8.append(simple)
            return
        }
        var value = UInt32(try parseHex4())
        if (0xD800...0xDBFF).contains(value) {
            // A high surrogate is only meaningful when a low surrogate escape follows it.
            try consume(UInt8(ascii: "\\"))
            try consume(UInt8(ascii: "u"))
            let low = UInt32(try parseHex4())
            guard (0xDC00...0xDFFF).contains(low) else { throw Failure.invalid }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(value) else { throw Failure.invalid }
        UTF8.encode(scalar) { utf8.append($0) }
    }

    private mutating func parseHex4() throws -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = HexDigit.value(of: byte) else { throw Failure.invalid }
            index += 1
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
