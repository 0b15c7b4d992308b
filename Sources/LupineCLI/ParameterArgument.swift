import ArgumentParser

/// A `key=value` command-line argument: one request parameter.
///
/// The key ends at the first `=`, so the value may itself contain `=`; the value may be empty.
struct ParameterArgument: ExpressibleByArgument, Sendable {
    /// The parameter's name; never empty.
    let key: String
    /// The parameter's value, as typed.
    let value: String

    init?(argument: String) {
        guard let separator = argument.firstIndex(of: "="), separator != argument.startIndex else { return nil }
        key = String(argument[..<separator])
        value = String(argument[argument.index(after: separator)...])
    }
}
