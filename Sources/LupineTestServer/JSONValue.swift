/// A JSON document model for response bodies.
///
/// Objects serialize with sorted keys so every response is byte-for-byte deterministic.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// Kept as its literal text so numbers from a request body echo back exactly as they were sent.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
        .number(String(value))
    }

    /// Groups name/value pairs the way httpbin reports `args` and `form`:
    /// a name seen once maps to a string, a repeated name to an array of strings.
    static func grouping(_ fields: [FormField]) -> JSONValue {
        var grouped: [String: [String]] = [:]
        for field in fields {
            grouped[field.name, default: []].append(field.value)
        }
        return .object(
            grouped.mapValues { values in
                values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
            }
        )
    }

    /// The compact single-line serialization.
    var serialized: String {
        var output = ""
        write(to: &output)
        return output
    }

    func write(to output: inout String) {
        switch self {
        case .null:
            output += "null"
        case .bool(let flag):
            output += flag ? "true" : "false"
        case .number(let literal):
            output += literal
        case .string(let text):
            Self.writeString(text, to: &output)
        case .array(let items):
            output += "["
            for (index, item) in items.enumerated() {
                if index > 0 { output += ", " }
                item.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output += ", " }
                Self.writeString(key, to: &output)
                output += ": "
                members[key, default: .null].write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
