import ArgumentParser
import Lupine

/// `lupine download URL [-o FILE] [-c]`: saves a response body to a file, with a progress bar.
struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download",
        abstract: "Save a response body to a file with Lupine, with a progress bar on a terminal.",
        discussion: """
            The file is -o FILE, else the name the server gives (Content-Disposition), else the last \
            segment of the URL's path; a name the tool chose never replaces an existing file (-1, -2... \
            is appended). The body streams to disk. On a terminal, standard error shows the bytes, the \
            percentage when the length is known, the rate and the time left; nothing is drawn otherwise. \
            Ctrl-C removes the partial file, unless --continue is given: then Lupine's resume data is kept \
            in FILE.lupine-resume, and the same command with --continue resumes the download (Range and \
            If-Range; a server that answers with the whole body starts it over). A status of 400 or more \
            saves nothing and exits with 22.
            """ + "\n\n" + ExitStatus.help,
        helpNames: [.long]
    )

    @OptionGroup var options: RequestOptions

    func run() async throws {
        try await DownloadRunner(method: .get, options: options).run()
    }
}
