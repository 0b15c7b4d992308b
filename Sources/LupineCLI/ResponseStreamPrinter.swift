import Foundation
import Lupine

/// Prints a response while it arrives: the head as soon as it comes, then each body chunk.
///
/// Used on one serial queue only (the queue of the request's handlers); writes block that queue,
/// so a slow reader of standard output slows the transfer down instead of filling memory.
final class ResponseStreamPrinter: @unchecked Sendable {
    /// What is printed, and how.
    struct Settings {
        /// Print the head on standard output.
        var printsHead: Bool
        /// Print the body on standard output.
        var printsBody: Bool
        /// Standard output is a terminal: JSON re-indented, binary bodies not shown.
        var formatsForTerminal: Bool
        /// `-v` without the head on standard output: the head goes to standard error.
        var headToStandardError: Bool
        /// `--fail`: a status of 400 or more prints nothing.
        var failsOnHTTPError: Bool

        /// The settings for `-h`, `-b`, `--fail` and `-v`, with standard output a terminal or not.
        init(output: OutputOptions, verbose: Bool, standardOutputIsTerminal: Bool) {
            let explicit = output.headersOnly || output.bodyOnly
            printsHead = explicit ? output.headersOnly : standardOutputIsTerminal
            printsBody = explicit ? output.bodyOnly : true
            formatsForTerminal = standardOutputIsTerminal
            headToStandardError = verbose && !printsHead
            failsOnHTTPError = output.fail
        }
    }

    /// How the body of the current response is written.
    private enum BodyMode {
        /// As it arrives.
        case raw
        /// As it arrives, converted from Latin-1 to the terminal's UTF-8.
        case latin1
        /// Held until complete, then re-indented (JSON of known, modest length on a terminal).
        case bufferedJSON
        /// Counted, not shown (binary data on a terminal).
        case binary
        /// Not printed.
        case none
    }

    /// JSON up to this length is re-indented on a terminal; longer bodies stream as they come.
    static let largestReindentedJSON: Int64 = 8 << 20

    private let settings: Settings
    private let retryGate: RetryGate?
    private var mode = BodyMode.raw
    private var buffer = Data()
    private var wroteBodyBytes = false
    private var lastByte: UInt8?
    private var binaryByteCount: Int64 = 0
    private var headPrinted = false

    /// The status that made `--fail` stop the request, if it did.
    private(set) var failedHead: TransportResponseHead?
    /// True when the printer stopped the request because it had printed all it wanted (`-h`).
    private(set) var stoppedAfterHead = false

    init(settings: Settings, retryGate: RetryGate?) {
        self.settings = settings
        self.retryGate = retryGate
    }

    /// A final response head arrived for `request`: prints it, and says whether its body is wanted.
    func head(_ head: TransportResponseHead, contentType: String?, expectedLength: Int64, request: Request) -> Request.ResponseDisposition {
        if let retryGate, retryGate.setsAside(request, statusCode: head.statusCode) {
            if settings.headToStandardError { writeHeadToStandardError(head) }
            mode = .none
            return .allow
        }
        if settings.failsOnHTTPError, head.statusCode >= 400 {
            if settings.headToStandardError { writeHeadToStandardError(head) }
            failedHead = head
            return .cancel
        }
        retryGate?.outputBegins()
        if settings.headToStandardError { writeHeadToStandardError(head) }
        if settings.printsHead {
            Console.write(Data((ResponseHeadText.lines(head).joined(separator: "\n") + "\n").utf8))
            headPrinted = true
        }
        guard settings.printsBody else {
            mode = .none
            stoppedAfterHead = true
            return .cancel
        }
        mode = bodyMode(contentType: contentType, expectedLength: expectedLength)
        return .allow
    }

    private func writeHeadToStandardError(_ head: TransportResponseHead) {
        Console.note(ResponseHeadText.lines(head).map { "< " + $0 }.joined(separator: "\n") + "\n<")
    }

    private func bodyMode(contentType: String?, expectedLength: Int64) -> BodyMode {
        guard settings.formatsForTerminal else { return .raw }
        let type = (contentType ?? "").lowercased()
        let mediaType = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let isJSON = mediaType == "application/json" || mediaType.hasSuffix("+json")
        if isJSON, expectedLength >= 0, expectedLength <= Self.largestReindentedJSON { return .bufferedJSON }
        if type.contains("charset=iso-8859-1") || type.contains("charset=latin1") { return .latin1 }
        return .raw
    }

    /// A chunk of the body arrived.
    func chunk(_ data: Data) {
        switch mode {
        case .none:
            return
        case .bufferedJSON:
            buffer.append(data)
        case .binary:
            binaryByteCount += Int64(data.count)
        case .raw, .latin1:
            if settings.formatsForTerminal, data.contains(0) {
                mode = .binary
                binaryByteCount += Int64(data.count)
                return
            }
            if case .latin1 = mode {
                // Every byte is a Latin-1 character: the conversion cannot fail.
                writeBody(Data((String(data: data, encoding: .isoLatin1) ?? "").utf8))
            } else {
                writeBody(data)
            }
        }
    }

    /// The response is complete (or failed): writes what was held back, and ends the last line on
    /// a terminal.
    func finish() {
        switch mode {
        case .bufferedJSON:
            guard !buffer.isEmpty else { break }
            if (try? JSONSerialization.jsonObject(with: buffer, options: .fragmentsAllowed)) != nil {
                writeBody(Data(JSONPrettyPrinter.format(buffer).utf8))
            } else {
                writeBody(buffer)
            }
            buffer = Data()
        case .binary:
            writeBody(Data("[binary body not shown: \(binaryByteCount) bytes; redirect standard output or use lupine download to save it]".utf8))
        case .raw, .latin1, .none:
            break
        }
        if settings.formatsForTerminal, wroteBodyBytes, lastByte != UInt8(ascii: "\n") {
            Console.write(Data("\n".utf8))
        }
    }

    private func writeBody(_ data: Data) {
        guard !data.isEmpty else { return }
        if !wroteBodyBytes, headPrinted { Console.write(Data("\n".utf8)) }
        wroteBodyBytes = true
        lastByte = data.last
        Console.write(data)
    }
}
