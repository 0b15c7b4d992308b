import ArgumentParser

/// The help text the request subcommands share.
enum RequestCommandHelp {
    /// The configuration of the request subcommand `name`; `parameters` says where its
    /// `key=value` pairs go.
    static func configuration(name: String, parameters: String) -> CommandConfiguration {
        CommandConfiguration(
            commandName: name,
            abstract: "Send a \(name.uppercased()) request with Lupine and print the response; key=value pairs go \(parameters).",
            discussion: ExitStatus.help
        )
    }
}
