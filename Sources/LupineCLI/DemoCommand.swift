import ArgumentParser
import Lupine
import LupineTestServer

/// `lupine demo`: a short tour of Lupine against a local LupineTestServer, doubling as a smoke
/// test for CI.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tour Lupine against a local test server, checking every step.",
        discussion: """
            Starts LupineTestServer on a free loopback port, then shows a decoded JSON GET, a form POST, \
            a failing validation, redirects, a gzip body and a completion handler. Exits 0 when every \
            step behaved as expected; otherwise prints a one-line reason to standard error and exits 1.
            """
    )

    func run() async throws {
        let server: LupineTestServer
        do {
            server = try await LupineTestServer.start()
        } catch {
            Console.error("lupine demo: the test server could not start: \(error)")
            throw ExitCode.failure
        }
        Console.line("Lupine \(AFInfo.version) demo, against LupineTestServer at \(server.baseURL)")
        let tour = DemoTour(server: server)
        let failure = await tour.run()
        do {
            try await server.shutdown()
        } catch {
            Console.error("lupine demo: the test server did not shut down cleanly: \(error)")
            throw ExitCode.failure
        }
        if let failure {
            Console.error("lupine demo: \(failure)")
            throw ExitCode.failure
        }
        Console.line("All \(tour.steps.count) steps behaved as expected.")
    }
}
