import ArgumentParser
import Foundation
import Lupine

/// The `lupine` command-line tool: one-off HTTP requests and downloads, a tour of the library, and
/// the test server in the foreground.
@main
struct LupineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lupine",
        abstract: "Lupine \(AFInfo.version): Alamofire's API on SwiftNIO, from the command line.",
        discussion: """
            `lupine get URL` (post, put, patch, delete, head) sends one request and prints the response \
            as it arrives, with httpie's request items (Name:value, key==value, key=value, key:=json, \
            @file) and curl's exit statuses. `lupine download URL` saves a body to a file with a progress \
            bar and resumes with --continue. `lupine demo` tours the library against a local test server, \
            and `lupine serve` keeps that server running.
            """,
        version: AFInfo.version,
        subcommands: [
            GetCommand.self,
            PostCommand.self,
            PutCommand.self,
            PatchCommand.self,
            DeleteCommand.self,
            HeadCommand.self,
            DownloadCommand.self,
            DemoCommand.self,
            ServeCommand.self,
            MeasureMemoryCommand.self,
            SoakCommand.self,
        ]
    )

    /// Runs the command after the process-wide setup: SIGPIPE is ignored, so that writing to a
    /// closed pipe fails with EPIPE, which `Console` turns into a quiet end (status 23), instead of
    /// killing the process in the middle of a clean-up.
    static func main() async {
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
