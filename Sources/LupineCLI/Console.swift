import Foundation
import Synchronization

/// Where the tool writes: results to standard output, notes and one-line errors to standard error.
///
/// Writes go straight to the file descriptors, unbuffered, so output and errors keep the order
/// they were written in, also through a pipe, and nothing is lost when the tool exits early.
///
/// Standard output may close under the tool (`lupine get URL | head -1`): SIGPIPE is ignored (see
/// `LupineCommand.main()`), so the write fails with EPIPE, and the tool ends at once, quietly, with
/// curl's status for a write error (23), after the clean-ups registered with `Termination`. Any
/// other failure to write standard output ends it the same way, with a one-line reason. A failure
/// to write standard error is ignored: there is nowhere left to report it.
enum Console {
    /// Keeps the bytes of one call together when several threads write.
    private static let lock = Mutex(())

    /// Writes `text` and a newline to standard output.
    static func line(_ text: String = "") {
        write(Data((text + "\n").utf8))
    }

    /// Writes raw bytes to standard output.
    static func write(_ data: Data) {
        let failure = lock.withLock { _ in FileDescriptorWriter.write(data, to: STDOUT_FILENO) }
        guard let failure else { return }
        if failure != EPIPE {
            error("lupine: cannot write to standard output: \(String(cString: strerror(failure))).")
        }
        Termination.exit(ExitStatus.writeError)
    }

    /// Writes a progress or status message to standard error, keeping standard output for results.
    static func note(_ text: String) {
        writeError(Data((text + "\n").utf8))
    }

    /// Writes `text` to standard error as a single line: newlines inside it become spaces, so a
    /// script reading the error gets it whole from one line.
    static func error(_ text: String) {
        writeError(Data((singleLine(text) + "\n").utf8))
    }

    /// Writes raw bytes to standard error (the progress bar), ignoring failures.
    static func writeError(_ data: Data) {
        _ = lock.withLock { _ in FileDescriptorWriter.write(data, to: STDERR_FILENO) }
    }

    /// `text` with every run of line breaks and the whitespace around them replaced by one space.
    static func singleLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}
