import ArgumentParser
import Lupine

/// `lupine get URL [key=value ...]`: key=value pairs go into the query string (a JSON body with `--json`).
struct GetCommand: AsyncParsableCommand {
    static let configuration = RequestCommandHelp.configuration(name: "get", parameters: "into the query string")

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await RequestRunner(method: .get, options: options).run()
    }
}
