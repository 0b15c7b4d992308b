import ArgumentParser
import LupineTestServer

/// `lupine serve [--port N]`: runs LupineTestServer in the foreground until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the httpbin-style test server on 127.0.0.1 until Ctrl-C (SIGINT) or SIGTERM.",
        discussion: """
            The first line printed is the server's base URL. Endpoints include /get /post /put /patch \
            /delete /anything /status/N /headers /bytes/N /stream/N /delay/N /redirect/N \
            /redirect-to?url= /gzip /deflate /basic-auth/USER/PASSWORD /cookies /response-headers \
            /json /xml and /fault/NAME.
            """
    )

    @Option(help: "The TCP port to listen on; 0 picks a free one.")
    var port = 8080

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be 0...65535.")
        }
    }

    func run() async throws {
        // Take the signals over before the server runs, so that none can kill it half-way.
        let signals = SignalWaiter()
        let server: LupineTestServer
        do {
            server = try await LupineTestServer.start(port: port)
        } catch {
            Console.error("lupine: The test server could not start on port \(port): \(error)")
            throw ExitCode.failure
        }
        Console.line(server.baseURL)
        Console.note("Serving on \(server.baseURL); press Ctrl-C to stop.")
        let signalNumber = await signals.wait()
        Console.note("Received signal \(signalNumber); shutting down.")
        try await server.shutdown()
        Console.note("Stopped.")
    }
}
