import ArgumentParser
import Lupine

/// `lupine head URL [key=value ...]`: key=value pairs go into the query string (a JSON body with `--json`).
struct HeadCommand: AsyncParsableCommand {
    static let configuration = RequestCommandHelp.configuration(name: "head", parameters: "into the query string")

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await RequestRunner(method: .head, options: options).run()
    }
}
