import ArgumentParser
import Lupine

/// A `Name: value` command-line argument: one request header, as curl's `-H` takes it.
struct HeaderArgument: ExpressibleByArgument, Sendable {
    /// The header as Lupine sends it.
    let header: HTTPHeader

    init?(argument: String) {
        guard let colon = argument.firstIndex(of: ":") else { return nil }
        let name = argument[..<colon].trimmingCharacters(in: .whitespaces)
        let value = argument[argument.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard Self.isFieldName(name), !value.contains(where: \.isNewline) else { return nil }
        header = HTTPHeader(name: name, value: value)
    }

    /// Whether `name` is an RFC 9110 token, as a field name must be: no spaces, no separators.
    static func isFieldName(_ name: String) -> Bool {
        let separators = Set("()<>@,;:\\\"/[]?={} \t")
        return !name.isEmpty && name.allSatisfy { $0.isASCII && !$0.isNewline && !separators.contains($0) }
    }
}
