import Foundation
import Lupine
import LupineTestServer
import Testing

extension CLITests {
    /// curl's exit statuses, each with a one-line error naming the host and port.
    @Suite struct CLIExitStatusTests {
        /// The lines of standard error.
        private func errorLines(_ result: CLIResult) -> [String] {
            result.errors.split(separator: "\n").map(String.init)
        }

        @Test func closedPipeEndsQuietlyWithStatus23() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.shell(#"""
                "$LUPINE" get "$URL" | head -2 > /dev/null
                echo "lupine exited with ${PIPESTATUS[0]}"
                """#, environment: ["URL": server.url("/stream/10000")])
            #expect(result.output == "lupine exited with 23\n")
            #expect(result.errors.isEmpty, "a closed pipe is no error to report: \(result.errors)")
        }

        @Test func demoRunsItsTourAndEndsWithStatus0() async throws {
            let result = try await CLIProcess.run(["demo"])
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("Lupine \(AFInfo.version) demo"))
            #expect(result.errors.isEmpty)
        }

        /// The reader is gone before the demo writes: with `head -1` as the reader, the whole tour
        /// (2 KiB) could fit in the pipe's buffer before a slow `head` exited, and the demo then
        /// rightly ended with 0 (seen once under load).
        @Test func demoIntoAClosedPipeEndsQuietlyWithStatus23() async throws {
            let result = try await CLIProcess.shell(#"""
                "$LUPINE" demo | :
                echo "lupine exited with ${PIPESTATUS[0]}"
                """#)
            #expect(result.output == "lupine exited with 23\n")
            #expect(result.errors.isEmpty)
        }

        @Test func hostThatDoesNotResolveIs6() async throws {
            let result = try await CLIProcess.run(["get", "http://lupine-cli-test.invalid/get"])
            #expect(result.status == 6)
            #expect(errorLines(result) == ["lupine: Cannot resolve the host name lupine-cli-test.invalid (port 80)."])
            #expect(result.standardOutput.isEmpty)
        }

        @Test func refusedConnectionIs7AndNamesHostAndPort() async throws {
            let port = try closedPort()
            let result = try await CLIProcess.run(["get", "127.0.0.1:\(port)/get"])
            #expect(result.status == 7)
            #expect(errorLines(result) == ["lupine: Cannot connect to 127.0.0.1 port \(port): the connection was refused, or the host is unreachable."])
        }

        @Test func timeoutIs28() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "--timeout", "0.5", server.url("/delay/5")])
            #expect(result.status == 28)
            #expect(errorLines(result) == ["lupine: No complete answer from 127.0.0.1 port \(server.port) within 0.5 s (--timeout)."])
        }

        @Test func httpsToAPlainPortIs35WithoutTheTLSLibrarysText() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "https://127.0.0.1:\(server.port)/get"])
            #expect(result.status == 35)
            #expect(errorLines(result) == ["lupine: The TLS handshake with 127.0.0.1 port \(server.port) failed (does it speak https on that port?)."])
        }

        @Test func verboseAddsTheEnginesOwnTextOnASecondLine() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "-v", "https://127.0.0.1:\(server.port)/get"])
            #expect(result.status == 35)
            let lines = errorLines(result).filter { $0.hasPrefix("lupine: ") }
            #expect(lines.count == 2)
            #expect(lines.last?.hasPrefix("lupine: detail: ") == true)
        }

        @Test func failOnAnHTTPErrorIs22AndPrintsNothing() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "--fail", server.url("/status/404")])
            #expect(result.status == 22)
            #expect(result.standardOutput.isEmpty)
            #expect(errorLines(result) == ["lupine: 127.0.0.1 port \(server.port) answered 404 Not Found."])
        }

        @Test func anHTTPErrorWithoutFailIsPrintedAndIs0() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "-h", server.url("/status/404")])
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("HTTP/1.1 404 Not Found\n"))
        }

        @Test func malformedURLIs3() async throws {
            let result = try await CLIProcess.run(["get", "http://"])
            #expect(result.status == 3)
            #expect(errorLines(result).count == 1)
        }

        @Test func unsupportedSchemeIs1() async throws {
            let result = try await CLIProcess.run(["get", "ftp://127.0.0.1/file"])
            #expect(result.status == 1)
            #expect(errorLines(result) == ["lupine: Lupine does not request ftp:// URLs; use http or https."])
        }

        @Test func connectionClosedMidBodyIs56() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", server.url("/fault/close-mid-body")])
            #expect(result.status == 56)
            #expect(errorLines(result) == ["lupine: 127.0.0.1 port \(server.port) closed the connection before the response was complete."])
        }
    }
}
