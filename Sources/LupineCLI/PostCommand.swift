import ArgumentParser
import Lupine

/// `lupine post URL [key=value ...]`: key=value pairs go into a form body (a JSON body with `--json`).
struct PostCommand: AsyncParsableCommand {
    static let configuration = RequestCommandHelp.configuration(name: "post", parameters: "into a form body")

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await RequestRunner(method: .post, options: options).run()
    }
}
