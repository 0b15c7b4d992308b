import ArgumentParser
import Lupine

/// `lupine patch URL [key=value ...]`: key=value pairs go into a form body (a JSON body with `--json`).
struct PatchCommand: AsyncParsableCommand {
    static let configuration = RequestCommandHelp.configuration(name: "patch", parameters: "into a form body")

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await RequestRunner(method: .patch, options: options).run()
    }
}
