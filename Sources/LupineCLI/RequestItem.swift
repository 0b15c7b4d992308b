import ArgumentParser
import Foundation

/// One request item after the URL, in httpie's syntax.
///
/// | item            | meaning                                                              |
/// |-----------------|----------------------------------------------------------------------|
/// | `Name:value`    | a request header                                                     |
/// | `key==value`    | a query parameter (repeat the key for more values)                   |
/// | `key=value`     | a field: the query string of get, head and delete, the body otherwise |
/// | `key:=json`     | a body field holding typed JSON (`n:=3`, `ok:=true`, `tags:='["a"]'`) |
/// | `key=@file`     | a field whose value is the text of `file`                            |
/// | `key:=@file`    | a typed JSON field read from `file`                                  |
/// | `@file`, `@-`   | the whole request body, from `file` or standard input                |
///
/// The first separator in the item decides (`a=b:c` is the field `a`); a backslash before a
/// character keeps it in the name (`a\=b=c` is the field `a=b`).
enum RequestItem: Sendable, Equatable {
    case header(name: String, value: String)
    case query(name: String, value: String)
    case field(name: String, value: String)
    /// A field holding typed JSON, as typed (already checked to parse).
    case jsonField(name: String, json: String)
    /// The whole body, from a file (`-` for standard input).
    case bodyFile(path: String)

    /// The separators, longest first where two start alike.
    private static let separators = [":=@", ":=", "==", "=@", "=", ":"]

    /// Parses one item; the error says what is wrong with it.
    static func parse(_ argument: String) throws -> RequestItem {
        if argument.hasPrefix("@") {
            let path = String(argument.dropFirst())
            guard !path.isEmpty else { throw ValidationError("'@' needs a file name, or '-' for standard input.") }
            return .bodyFile(path: path)
        }
        var name = ""
        var index = argument.startIndex
        while index < argument.endIndex {
            let character = argument[index]
            if character == "\\", argument.index(after: index) < argument.endIndex {
                index = argument.index(after: index)
                name.append(argument[index])
                index = argument.index(after: index)
                continue
            }
            if let separator = separators.first(where: { argument[index...].hasPrefix($0) }) {
                let value = String(argument[argument.index(index, offsetBy: separator.count)...])
                return try item(name: name, separator: separator, value: value)
            }
            name.append(character)
            index = argument.index(after: index)
        }
        throw ValidationError("'\(argument)' is not a request item: use Name:value, key==value, key=value, key:=json or @file.")
    }

    private static func item(name: String, separator: String, value: String) throws -> RequestItem {
        guard !name.isEmpty else { throw ValidationError("A request item needs a name before '\(separator)'.") }
        switch separator {
        case ":":
            let headerName = name.trimmingCharacters(in: .whitespaces)
            guard HeaderArgument.isFieldName(headerName) else {
                throw ValidationError("'\(name)' is not a header name (letters, digits and !#$%&'*+-.^_`|~ only).")
            }
            guard !value.contains(where: \.isNewline) else { throw ValidationError("The header \(headerName) holds a line break.") }
            return .header(name: headerName, value: value.trimmingCharacters(in: .whitespaces))
        case "==":
            return .query(name: name, value: value)
        case "=":
            return .field(name: name, value: value)
        case "=@":
            return .field(name: name, value: try fileText(value))
        case ":=":
            return .jsonField(name: name, json: try checkedJSON(value, name: name))
        default:
            return .jsonField(name: name, json: try checkedJSON(try fileText(value), name: name))
        }
    }

    private static func fileText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("Cannot read '\(path)' as UTF-8 text.")
        }
        return text
    }

    /// `text` trimmed, after checking that it is one JSON value.
    private static func checkedJSON(_ text: String, name: String) throws -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (try? JSONSerialization.jsonObject(with: Data(trimmed.utf8), options: .fragmentsAllowed)) != nil else {
            throw ValidationError("The value of \(name) is not JSON: \(trimmed)")
        }
        return trimmed
    }
}
