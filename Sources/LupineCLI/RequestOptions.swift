import ArgumentParser
import Lupine

/// What every request subcommand (`get`, `post`, `put`, `patch`, `delete`, `head`, `download`)
/// accepts: the URL, the request items, and the options of the connection and of the output.
struct RequestOptions: ParsableArguments {
    @Argument(help: ArgumentHelp(
        "The URL. Without a scheme it means http://; a leading colon means localhost (:8080/get).",
        valueName: "url"))
    var url: String

    @Argument(help: ArgumentHelp(
        """
        Request items, httpie's syntax: Name:value (header), key==value (query parameter, repeatable), \
        key=value (field: the query of get, head and delete, else the body), key:=json (typed JSON body \
        field), key=@file and key:=@file (a field read from a file), @file or @- (the whole body, from a \
        file or standard input).
        """,
        valueName: "item"))
    var items: [String] = []

    @Option(name: [.customShort("H"), .customLong("header")],
            help: ArgumentHelp("A request header, as curl takes it; repeat the option for more.", valueName: "Name: value"))
    var headers: [HeaderArgument] = []

    @Flag(help: "Send the fields as a JSON body (typed fields do so too) and ask for JSON (Accept: application/json).")
    var json = false

    @Flag(help: "Do not read a request body from standard input when it is not a terminal.")
    var ignoreStdin = false

    @OptionGroup(title: "Connection")
    var connection: ConnectionOptions

    @OptionGroup(title: "Output")
    var output: OutputOptions

    func validate() throws {
        _ = try parsedItems()
        try connection.validate()
    }

    /// The items, parsed; the error names the first wrong one.
    func parsedItems() throws -> [RequestItem] {
        try items.map(RequestItem.parse)
    }
}

/// How the connection is made: credentials, limits, retries, proxy and TLS.
struct ConnectionOptions: ParsableArguments {
    @Option(name: [.customShort("a"), .customLong("auth")],
            help: ArgumentHelp("Credentials: sent as Basic, and answering a Digest challenge when the server asks for one.",
                               valueName: "user:password"))
    var auth: String?

    @Option(help: ArgumentHelp(
        "Give up after this many seconds in all: connecting, sending and receiving (per attempt). Without it, a request fails after 60 seconds without any data.",
        valueName: "seconds"))
    var timeout: Double?

    @Option(help: ArgumentHelp(
        "Retry up to N times after a transient failure (connection refused or lost, timeout, 408, 500, 502, 503, 504), with Lupine's RetryPolicy and its backoff; never once output has begun.",
        valueName: "N"))
    var retry: UInt = 0

    @Option(help: ArgumentHelp("Send the request through this proxy: http://[user:password@]host:port or socks5://host:port.",
                               valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp("Trust the server only if its chain holds a certificate of this file (PEM or DER); the file's certificates act as the trust anchors.",
                               valueName: "file"))
    var pinCert: String?

    @Option(help: ArgumentHelp("Present this client certificate (PEM or DER, chain allowed) when the server asks for one.",
                               valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The private key of --cert (PEM or DER); without it, the key is read from the --cert file.",
                               valueName: "file"))
    var key: String?

    @Flag(name: [.customShort("v"), .customLong("verbose")],
          help: "Show on standard error the request sent, each redirect, retries, and the detail of errors.")
    var verbose = false

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            throw ValidationError("--timeout must be a positive number of seconds.")
        }
        if let auth, !auth.contains(":") {
            throw ValidationError("-a takes user:password (an empty password is written user:).")
        }
        if key != nil, cert == nil {
            throw ValidationError("--key goes with --cert.")
        }
    }

    /// The user and password of `-a`.
    var credentials: (user: String, password: String)? {
        guard let auth, let colon = auth.firstIndex(of: ":") else { return nil }
        return (String(auth[..<colon]), String(auth[auth.index(after: colon)...]))
    }
}

/// What is printed, and where the body goes.
struct OutputOptions: ParsableArguments {
    @Flag(name: [.customShort("h"), .customLong("headers")],
          help: "Print the response head only (the status line and the header fields as received).")
    var headersOnly = false

    @Flag(name: [.customShort("b"), .customLong("body")],
          help: "Print the response body only. It is the default when standard output is not a terminal.")
    var bodyOnly = false

    @Flag(name: [.customShort("f"), .customLong("fail")],
          help: "Print nothing and exit with 22 when the response status is 400 or more.")
    var fail = false

    @Flag(name: [.customShort("d"), .customLong("download")],
          help: "Save the body to a file instead, as `lupine download` does.")
    var download = false

    @Option(name: [.customShort("o"), .customLong("output")],
            help: ArgumentHelp("With a download, the file to write (default: the name the server or the URL gives).",
                               valueName: "file"))
    var outputFile: String?

    @Flag(name: [.customShort("c"), .customLong("continue")],
          help: "With a download, resume an interrupted one, and keep this one resumable if it is interrupted.")
    var resume = false
}
