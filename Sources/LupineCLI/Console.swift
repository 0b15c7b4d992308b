import Foundation

/// Where the tool writes: lines to standard output, one-line errors to standard error.
///
/// Writes go straight to the file descriptors, unbuffered, so output and errors keep the order
/// they were written in, also through a pipe, and nothing is lost when the tool exits early.
enum Console {
    /// Writes `text` and a newline to standard output.
    static func line(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes raw bytes to standard output.
    static func write(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// Writes a progress or status message to standard error, keeping standard output for results.
    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Writes `text` to standard error as a single line: newlines inside it become spaces, so a
    /// script reading the error gets it whole from one line.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((singleLine(text) + "\n").utf8))
    }

    /// `text` with every run of line breaks and the whitespace around them replaced by one space.
    static func singleLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }
}
