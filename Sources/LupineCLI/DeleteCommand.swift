import ArgumentParser
import Lupine

/// `lupine delete URL [key=value ...]`: key=value pairs go into the query string (a JSON body with `--json`).
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = RequestCommandHelp.configuration(name: "delete", parameters: "into the query string")

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await RequestRunner(method: .delete, options: options).run()
    }
}
