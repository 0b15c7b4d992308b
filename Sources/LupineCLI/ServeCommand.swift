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
            /redirect-to?url= /gzip /deflate /brotli /zstd /encoded?codings=gzip,br /basic-auth/USER/PASSWORD \
            /cookies /response-headers /upload /discard \
            /json /xml and /fault/NAME.
            """
    )

    @Option(help: "The TCP port to listen on; 0 picks a free one.")
    var port = 8080

    @Option(help: """
        A certificate chain (PEM): also run, on free ports, a TLS server and an HTTP/2 server presenting \
        it, an HTTP proxy and a SOCKS5 proxy, and print 'tls URL', 'h2 URL', 'http-proxy HOST:PORT' and \
        'socks-proxy HOST:PORT' after the base URL (for lupine soak).
        """)
    var tlsCertificate: String?

    @Option(help: "The private key (PEM) of --tls-certificate.")
    var tlsKey: String?

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be 0...65535.")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-certificate and --tls-key go together.")
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
        var extras: SoakServers?
        if let tlsCertificate, let tlsKey {
            do {
                extras = try await SoakServers.start(certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
            } catch {
                Console.error("lupine: The TLS servers and proxies could not start: \(error)")
                try? await server.shutdown()
                throw ExitCode.failure
            }
        }
        Console.line(([server.baseURL] + (extras?.lines ?? [])).joined(separator: "\n"))
        Console.note("Serving on \(server.baseURL); press Ctrl-C to stop.")
        let signalNumber = await signals.wait()
        Console.note("Received signal \(signalNumber); shutting down.")
        try await extras?.shutdown()
        try await server.shutdown()
        Console.note("Stopped.")
    }
}
