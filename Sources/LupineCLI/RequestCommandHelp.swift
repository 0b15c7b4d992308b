import ArgumentParser

/// The help text the request subcommands share.
enum RequestCommandHelp {
    /// The configuration of the request subcommand `name`; `parameters` says where its
    /// `key=value` fields go.
    ///
    /// Help is `--help` only: `-h` is httpie's `--headers`, which these commands take.
    static func configuration(name: String, parameters: String) -> CommandConfiguration {
        CommandConfiguration(
            commandName: name,
            abstract: "Send a \(name.uppercased()) request with Lupine and print the response as it arrives; key=value fields go \(parameters).",
            discussion: discussion,
            helpNames: [.long]
        )
    }

    /// What the request and download commands print, and their exit statuses.
    static let discussion = """
        Redirects are followed. On a terminal the status line (with the HTTP version), the header \
        fields as received, a blank line and the body are printed (JSON re-indented, binary bodies \
        not shown); when standard output is not a terminal, the body alone is written, byte for byte. \
        -h prints the head only and -b the body only. Output streams: the head as soon as it comes, \
        then each part of the body. A body comes from key=value fields, typed key:=json fields, @file, \
        or standard input when it is a pipe or a file (post, put and patch; --ignore-stdin skips it). \
        The User-Agent is lupine/<version>.
        """ + "\n\n" + ExitStatus.help
}
