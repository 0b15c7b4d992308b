import ArgumentParser
import Lupine

/// The `lupine` command-line tool: a tour of the library, one-off HTTP requests, and the test
/// server in the foreground.
@main
struct LupineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lupine",
        abstract: "Lupine \(AFInfo.version): Alamofire's API on AsyncHTTPClient, from the command line.",
        discussion: """
            Run `lupine demo` for a tour of the library against a local test server, `lupine serve` \
            to keep that server running, or `lupine get URL` (post, put, patch, delete, head) to send \
            one request and print its response.
            """,
        version: AFInfo.version,
        subcommands: [
            DemoCommand.self,
            ServeCommand.self,
            GetCommand.self,
            PostCommand.self,
            PutCommand.self,
            PatchCommand.self,
            DeleteCommand.self,
            HeadCommand.self,
            MeasureMemoryCommand.self,
            SoakCommand.self,
        ]
    )
}
