import Foundation
import Lupine
@testable import LupineCLI
import LupineTestServer
import Testing

extension CLITests {
    /// What `lupine get` prints, with and without a terminal, and when.
    @Suite struct CLIOutputTests {
        /// The body as the server sends it, fetched with the library in this process.
        private func body(_ path: String) async throws -> Data {
            let server = try await testServer()
            return try await AF.request(server.url(path)).serializingData().value
        }

        @Test func pipedOutputIsTheBodyAloneByteForByte() async throws {
            let server = try await testServer()
            let expected = try await body("/json")
            let result = try await CLIProcess.run(["get", server.url("/json")])
            #expect(result.status == 0)
            #expect(result.standardOutput == expected)
            #expect(result.errors.isEmpty)
        }

        @Test func pipedBinaryBodyIsWrittenRaw() async throws {
            let server = try await testServer()
            let expected = try await body("/bytes/70000?seed=7")
            let result = try await CLIProcess.run(["get", server.url("/bytes/70000?seed=7")])
            #expect(result.status == 0)
            #expect(result.standardOutput == expected)
        }

        @Test func headersOnlyPrintsTheHeadAsReceivedInOrderWithCaseAndRepeats() async throws {
            let server = try await testServer()
            let url = server.url("/response-headers?Set-Cookie=a%3D1&X-MiXeD-Case=one&Set-Cookie=b%3D2&ETag=%22v1%22")
            let result = try await CLIProcess.run(["get", "-h", url])
            #expect(result.status == 0)
            let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.first == "HTTP/1.1 200 OK")
            let sent = ["Set-Cookie: a=1", "X-MiXeD-Case: one", "Set-Cookie: b=2", "ETag: \"v1\""]
            #expect(lines.filter(sent.contains) == sent)
            // The head only: no body, and no blank line before one.
            #expect(!result.output.contains("\"Set-Cookie\""))
            #expect(lines.last == "")
            #expect(lines.dropLast().allSatisfy { !$0.isEmpty })
        }

        @Test func headAndBodyWhenBothAreAskedForThroughAPipe() async throws {
            let server = try await testServer()
            let expected = try await body("/json")
            let result = try await CLIProcess.run(["get", "-h", "-b", server.url("/json")])
            #expect(result.status == 0)
            #expect(result.output.hasPrefix("HTTP/1.1 200 OK\n"))
            // The head, a blank line, then the body as sent.
            #expect(result.standardOutput.suffix(expected.count) == expected)
            #expect(result.standardOutput.dropLast(expected.count).suffix(2) == Data("\n\n".utf8))
        }

        @Test func terminalShowsStatusLineHeadersAndIndentedJSON() async throws {
            let server = try await testServer()
            let expected = try await body("/json")
            let terminal = try PseudoTerminal()
            let process = try CLIProcess(["get", server.url("/json")], terminal: terminal)
            #expect(try await process.finish() == 0)
            let screen = TerminalScreen.lines(process.standardOutput)
            #expect(screen.first == "HTTP/1.1 200 OK")
            let blank = try #require(screen.firstIndex(of: ""))
            #expect(screen[1..<blank].contains { $0.lowercased().hasPrefix("content-type: application/json") })
            let shown = Array(screen[(blank + 1)...])
            let indented = JSONPrettyPrinter.format(expected).split(separator: "\n").map(String.init)
            #expect(shown == indented)
        }

        @Test func terminalDoesNotShowABinaryBody() async throws {
            let server = try await testServer()
            let terminal = try PseudoTerminal()
            let process = try CLIProcess(["get", "-b", server.url("/bytes/4096")], terminal: terminal)
            #expect(try await process.finish() == 0)
            let screen = TerminalScreen.lines(process.standardOutput)
            #expect(screen == ["[binary body not shown: 4096 bytes; redirect standard output or use lupine download to save it]"])
        }

        @Test func headIsPrintedAndBodyStreamsBeforeTheResponseEnds() async throws {
            let server = try await testServer()
            // Four bytes over three seconds, the first at once.
            let process = try CLIProcess(["get", "-h", "-b", server.url("/drip?numbytes=4&duration=3")])
            try await process.wait("the head and the first body byte") { $0.outputText.contains("\n\n*") }
            #expect(process.outputText.hasPrefix("HTTP/1.1 200 OK\n"))
            #expect(process.isRunning, "the head and the first byte came only once the response had ended")
            #expect(process.outputText.filter { $0 == "*" }.count < 4)
            #expect(try await process.finish() == 0)
            #expect(process.outputText.hasSuffix("\n\n****"))
        }

        @Test func verboseShowsTheRequestSentAndEachRedirectOnStandardError() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", "-v", server.url("/redirect/2")])
            #expect(result.status == 0)
            let errors = result.errors
            #expect(errors.contains("> GET /redirect/2\n> Host: 127.0.0.1:\(server.port)\n"))
            #expect(errors.contains("> User-Agent: lupine/\(AFInfo.version)"))
            #expect(errors.components(separatedBy: "< 302 Found").count == 3)
            #expect(errors.components(separatedBy: "(following the redirect to ").count == 3)
            #expect(errors.contains("> GET /get"))
            #expect(errors.contains("< HTTP/1.1 200 OK"))
            // Standard output keeps the body alone.
            let echo = try JSONSerialization.jsonObject(with: result.standardOutput) as? [String: Any]
            #expect(echo?["url"] as? String == server.url("/get"))
        }

        @Test func defaultUserAgentNamesLupinesVersion() async throws {
            let server = try await testServer()
            let result = try await CLIProcess.run(["get", server.url("/user-agent")])
            #expect(result.output.contains("lupine/\(AFInfo.version)"))
        }
    }
}
