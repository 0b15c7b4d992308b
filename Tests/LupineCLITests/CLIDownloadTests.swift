import Foundation
import Lupine
import LupineTestServer
import Testing

extension CLITests {
    /// `lupine download`: files, names, the progress bar, Ctrl-C, and resuming after a kill.
    ///
    /// Each test gives the process a temporary directory of its own (TMPDIR), where Lupine keeps the
    /// partial file, so that what is left there can be checked, and removes it at the end.
    @Suite struct CLIDownloadTests {
        /// A megabyte whose transfer stops, connection open, after a quarter (a download to interrupt).
        static let stallingPath = "/bytes/1048576?stall-after=262144"

        private func expected(_ path: String) async throws -> Data {
            let server = try await testServer()
            return try await AF.request(server.url(path)).serializingData().value
        }

        /// The size of Lupine's partial download file in `directory`, if there is one.
        private func partialSize(in directory: ScratchDirectory) -> Int? {
            guard let name = directory.entries().first(where: { $0.hasPrefix("LupineDownload_") }),
                  let size = (try? FileManager.default.attributesOfItem(atPath: directory.file(name).path))?[.size] as? NSNumber
            else { return nil }
            return size.intValue
        }

        @Test func savesTheBodyAndDrawsNothingWithoutATerminal() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("body.bin")
            let result = try await CLIProcess.run(["download", server.url("/bytes/300000?seed=3"), "-o", file.path])
            #expect(result.status == 0)
            #expect(result.standardOutput.isEmpty)
            #expect(result.standardError.isEmpty)
            #expect(try Data(contentsOf: file) == (try await expected("/bytes/300000?seed=3")))
        }

        /// As curl's: the saved file is readable by others when the umask (022 here) allows it,
        /// not owner-only as Lupine's file in the temporary directory was.
        @Test func theSavedFileHasTheUmasksPermissions() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("body.bin")
            let previous = umask(0o022)
            defer { umask(previous) }
            let result = try await CLIProcess.run(["download", server.url("/bytes/1024"), "-o", file.path])
            #expect(result.status == 0, "\(result.errors)")
            let permissions = (try FileManager.default.attributesOfItem(atPath: file.path))[.posixPermissions] as? NSNumber
            #expect(permissions?.intValue == 0o644)
        }

        @Test func getDownloadNamesTheFileAfterTheURLWithoutReplacingOne() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            for _ in 0..<2 {
                let result = try await CLIProcess.run(["get", "--download", server.url("/bytes/1024")], directory: scratch.url)
                #expect(result.status == 0, "\(result.errors)")
            }
            #expect(scratch.entries() == ["1024", "1024-1"])
        }

        @Test func continueNamesTheFileAfterTheURLAskedForEvenThroughARedirect() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let result = try await CLIProcess.run(["download", "-c", server.url("/redirect-to?url=/bytes/2048")], directory: scratch.url)
            #expect(result.status == 0, "\(result.errors)")
            #expect(scratch.entries() == ["redirect-to"])
        }

        @Test func serverNamesTheFileWithContentDisposition() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let disposition = "attachment; filename=\"../report.csv\"".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let result = try await CLIProcess.run(["download", server.url("/response-headers?Content-Disposition=\(disposition)")],
                                                  directory: scratch.url)
            #expect(result.status == 0, "\(result.errors)")
            #expect(scratch.entries() == ["report.csv"])
        }

        @Test func errorStatusSavesNothingAndIs22() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let result = try await CLIProcess.run(["download", server.url("/status/404"), "-o", scratch.file("out").path],
                                                  environment: ["TMPDIR": scratch.url.path])
            #expect(result.status == 22)
            #expect(result.errors == "lupine: 127.0.0.1 port \(server.port) answered 404 Not Found; nothing was saved.\n")
            #expect(scratch.entries().isEmpty)
        }

        @Test func ctrlCRemovesThePartialFile() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("big.bin")
            let process = try CLIProcess(["download", server.url(Self.stallingPath), "-o", file.path],
                                         environment: ["TMPDIR": scratch.url.path])
            try await process.wait("a quarter of the body on disk") { _ in partialSize(in: scratch) == 262_144 }
            process.send(SIGINT)
            #expect(try await process.finish() == 130)
            #expect(scratch.entries().isEmpty, "left behind: \(scratch.entries())")
        }

        @Test func downloadKilledWithContinueResumesWhereItStopped() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("big.bin")
            let arguments = ["download", server.url(Self.stallingPath), "-o", file.path, "--continue"]
            let environment = ["TMPDIR": scratch.url.path]
            let first = try CLIProcess(arguments, environment: environment)
            try await first.wait("a quarter of the body on disk") { _ in partialSize(in: scratch) == 262_144 }
            first.send(SIGTERM)
            #expect(try await first.finish() == 143)
            #expect(first.errorText.contains("run the same command with --continue to resume it"))
            #expect(scratch.entries().contains("big.bin.lupine-resume"))
            #expect(!scratch.entries().contains("big.bin"))

            // The resumed request carries a Range: the server only stalls requests without one.
            let second = try await CLIProcess.run(arguments, environment: environment)
            #expect(second.status == 0, "\(second.errors)")
            #expect(try Data(contentsOf: file) == (try await expected("/bytes/1048576")))
            #expect(scratch.entries() == ["big.bin"])
        }

        @Test func progressBarOnATerminal() async throws {
            let server = try await testServer()
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let file = scratch.file("big.bin")
            let arguments = ["download", server.url(Self.stallingPath), "-o", file.path, "-c"]
            let environment = ["TMPDIR": scratch.url.path]

            // While the transfer stalls at a quarter: percent, bar, bytes, rate and time left.
            let terminal = try PseudoTerminal(columns: 100)
            let interrupted = try CLIProcess(arguments, environment: environment, terminal: terminal)
            try await interrupted.wait("the bar at 25%") { TerminalScreen.lines($0.standardOutput).last?.hasPrefix(" 25% [") == true }
            let frame = try #require(TerminalScreen.lines(interrupted.standardOutput).last)
            #expect(frame.count == 99)
            #expect(frame.contains("]  256 KiB / 1.00 MiB  "))
            #expect(frame.contains("/s  ETA "))
            interrupted.send(SIGINT)
            #expect(try await interrupted.finish() == 130)
            let afterInterrupt = TerminalScreen.lines(interrupted.standardOutput)
            #expect(afterInterrupt.last?.hasPrefix("lupine: The download stopped; run the same command with --continue") == true)

            // Resumed to the end: the last frame shows the whole file and the time taken.
            let resumedTerminal = try PseudoTerminal(columns: 100)
            let resumed = try CLIProcess(arguments, environment: environment, directory: scratch.url, terminal: resumedTerminal)
            #expect(try await resumed.finish() == 0)
            let screen = TerminalScreen.lines(resumed.standardOutput)
            #expect(screen.count == 2, "\(screen)")
            let done = try #require(screen.first)
            #expect(done.hasPrefix("100% [====="))
            #expect(done.contains("=] 1.00 MiB / 1.00 MiB  "))
            #expect(done.contains("/s   in 0:0"))
            #expect(screen.last == "Saved big.bin")
            #expect(try Data(contentsOf: file) == (try await expected("/bytes/1048576")))
        }
    }

    /// Ctrl-C during `lupine measure-memory` leaves no temporary file behind.
    @Suite struct CLIInterruptTests {
        @Test func measureMemoryRemovesItsFilesOnCtrlC() async throws {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let process = try CLIProcess(["measure-memory", "--mebibytes", "2048"], environment: ["TMPDIR": scratch.url.path])
            try await process.wait("a file in the temporary directory") { _ in
                scratch.entries().contains { name in
                    let size = (try? FileManager.default.attributesOfItem(atPath: scratch.file(name).path))?[.size] as? NSNumber
                    return (size?.intValue ?? 0) > 1 << 20
                }
            }
            process.send(SIGINT)
            #expect(try await process.finish() == 130)
            #expect(scratch.entries().isEmpty, "left behind: \(scratch.entries())")
        }
    }
}
