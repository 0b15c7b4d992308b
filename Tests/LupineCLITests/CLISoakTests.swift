import Foundation
import LupineTestServer
import Testing

extension CLITests {
    /// `lupine soak`, briefly: the options that choose what it sends.
    @Suite struct CLISoakTests {
        /// `--only` sends that one kind instead of the mix (how a growing kind is told apart).
        @Test func onlySendsOperationsOfThatKind() async throws {
            let server = try await LupineTestServer.start()
            let result = try await CLIProcess.run(["soak", "--only", "404 validated", "--requests", "10", "--warm-up", "0",
                                                   "--report-every", "10", "--server", server.baseURL])
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("soak: PASSED"))
            #expect(server.hits(for: "/status/404") == 10)
            // The mix would have begun with tiny GETs.
            #expect(server.hits(for: "/bytes/64") == 0)
            try await server.shutdown()
        }

        @Test func onlyRefusesAKindItDoesNotKnow() async throws {
            let result = try await CLIProcess.run(["soak", "--only", "huge GET", "--requests", "10", "--server", "http://127.0.0.1:9"])
            #expect(result.status == 64)
            #expect(result.errors.contains("--only: no kind named \"huge GET\""))
            #expect(result.standardOutput.isEmpty)
        }
    }
}
