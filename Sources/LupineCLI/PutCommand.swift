import ArgumentParser
import Lupine

/// `lupine put URL [key=value ...]`: key=value pairs go into a form body (a JSON body with `--json`).
struct PutCommand: AsyncParsableCommand {
    static let configuration = RequestCommandHelp.configuration(name: "put", parameters: "into the body (a form; JSON with --json or a key:=json field)")

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await RequestRunner(method: .put, options: options).run()
    }
}
