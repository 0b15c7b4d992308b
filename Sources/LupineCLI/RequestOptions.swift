import ArgumentParser
import Lupine

/// What every request subcommand (`get`, `post`, `put`, `patch`, `delete`, `head`) accepts.
struct RequestOptions: ParsableArguments {
    @Argument(help: "The URL to request, scheme included (for example http://127.0.0.1:8080/get).")
    var url: String

    @Argument(help: ArgumentHelp(
        "Request parameters: the query string for get, head and delete, a form body otherwise; a JSON body with --json.",
        valueName: "key=value"))
    var parameters: [ParameterArgument] = []

    @Option(name: [.customShort("H"), .customLong("header")],
            help: ArgumentHelp("A request header; repeat the option for more.", valueName: "Name: value"))
    var headers: [HeaderArgument] = []

    @Flag(help: "Send the parameters as a JSON body and ask for JSON (Accept: application/json).")
    var json = false

    @Option(help: ArgumentHelp(
        "Give up after this many seconds in all: connecting, sending and receiving. Without it, a request fails after 60 seconds without any data.",
        valueName: "seconds"))
    var timeout: Double?

    func validate() throws {
        var seen = Set<String>()
        for parameter in parameters where !seen.insert(parameter.key).inserted {
            throw ValidationError("The parameter '\(parameter.key)' is given more than once.")
        }
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            throw ValidationError("--timeout must be a positive number of seconds.")
        }
    }

    /// The parameters by key; nil when there are none, so that nothing is encoded.
    var parameterValues: [String: String]? {
        guard !parameters.isEmpty else { return nil }
        return Dictionary(parameters.map { ($0.key, $0.value) }) { _, last in last }
    }

    /// The `-H` headers, plus `Accept: application/json` for `--json` unless an Accept header was given.
    var requestHeaders: HTTPHeaders {
        var requestHeaders = HTTPHeaders(headers.map(\.header))
        if json, requestHeaders["Accept"] == nil {
            requestHeaders.add(.accept("application/json"))
        }
        return requestHeaders
    }
}
