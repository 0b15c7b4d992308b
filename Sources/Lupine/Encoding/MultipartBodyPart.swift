import Foundation

/// One part of a multipart body: its header fields, where its bytes come from, and how many bytes
/// it declared.
///
/// The body is never read whole: files and streams are passed on in chunks, so writing a body to
/// disk keeps memory bounded whatever the size of the parts.
struct MultipartBodyPart {
    /// Where the bytes of a part come from.
    enum Source {
        /// Bytes already in memory.
        case data(Data)
        /// A regular file, opened each time the body is encoded.
        case file(URL)
        /// A caller's stream; it can be read only once.
        case stream(InputStream)
    }

    /// The part's header fields, written in insertion order.
    let headers: HTTPHeaders
    /// Where the body bytes come from.
    let source: Source
    /// The number of body bytes the part declared.
    let bodyContentLength: UInt64

    /// The header block: each field as `Name: value` followed by CRLF, then an empty line.
    ///
    /// A CR or LF inside a name or value is written as `%0D` / `%0A` (as browsers do, WHATWG
    /// "multipart/form-data encoding"), so no field can add a header line or end the header block.
    var encodedHeaders: Data {
        var text = ""
        for header in headers {
            text += "\(Self.escapingLineBreaks(header.name)): \(Self.escapingLineBreaks(header.value))\r\n"
        }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// Passes the body to `consume` in chunks of at most `chunkSize` bytes (a data part in one
    /// piece, since it is in memory already).
    ///
    /// Bytes beyond the declared length are never passed on. With `readsExactlyDeclaredLength`
    /// (a body written to disk, as Alamofire's `writeEncodedData(to:)` does), a file or stream is
    /// read no further than the declared length, so a longer source gives exactly the declared
    /// bytes; otherwise (a body encoded in memory, as Alamofire's `encode()`), the whole source is
    /// read and a longer one is an error. A shorter source is an error either way. Errors thrown
    /// by `consume` propagate unchanged.
    ///
    /// - Throws: `AFError.multipartEncodingFailed` with `.inputStreamReadFailed(error:)` when the
    ///   source cannot be read, or, wrapping `AFError.UnexpectedInputStreamLength`, when it yields
    ///   fewer bytes than declared (or more, unless `readsExactlyDeclaredLength`).
    func writeBody(chunkSize: Int, readsExactlyDeclaredLength: Bool = false, to consume: (Data) throws -> Void) throws {
        var bytesRead: UInt64 = 0
        let declared = bodyContentLength
        func deliver(_ chunk: Data) throws {
            let remaining = declared - min(bytesRead, declared)
            if remaining > 0 {
                let count = Int(min(UInt64(chunk.count), remaining))
                try consume(count == chunk.count ? chunk : chunk.prefix(count))
            }
            bytesRead += UInt64(chunk.count)
        }
        // How many more bytes to read from a file or stream; nil reads to its end.
        let limit: () -> Int? = {
            readsExactlyDeclaredLength ? Int(clamping: declared - min(bytesRead, declared)) : nil
        }

        switch source {
        case let .data(data):
            if !data.isEmpty { try deliver(data) }
        case let .file(url):
            try Self.readFile(at: url, chunkSize: chunkSize, limit: limit, into: deliver)
        case let .stream(stream):
            try Self.readStream(stream, chunkSize: chunkSize, limit: limit, into: deliver)
        }

        let isShort = bytesRead < declared
        guard !isShort, readsExactlyDeclaredLength || bytesRead == declared else {
            let mismatch = AFError.UnexpectedInputStreamLength(bytesExpected: declared, bytesRead: bytesRead)
            throw Self.readFailure(mismatch)
        }
    }

    private static func readFile(at url: URL, chunkSize: Int, limit: () -> Int?,
                                 into deliver: (Data) throws -> Void) throws {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw readFailure(error)
        }
        defer { try? handle.close() }

        while true {
            let wanted = min(chunkSize, limit() ?? chunkSize)
            guard wanted > 0 else { return }
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: wanted)
            } catch {
                throw readFailure(error)
            }
            guard let chunk, !chunk.isEmpty else { return }
            try deliver(chunk)
        }
    }

    private static func readStream(_ stream: InputStream, chunkSize: Int, limit: () -> Int?,
                                   into deliver: (Data) throws -> Void) throws {
        stream.open()
        defer { stream.close() }

        var buffer = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let wanted = min(buffer.count, limit() ?? buffer.count)
            guard wanted > 0 else { return }
            let count = stream.read(&buffer, maxLength: wanted)
            if count < 0 { throw readFailure(streamFailure(of: stream)) }
            if count == 0 { return }
            try deliver(Data(buffer[0..<count]))
        }
    }

    /// What went wrong with a stream whose `read` returned a negative count.
    ///
    /// On Linux, corelibs-foundation's `InputStream.streamError` traps, so it is only asked on
    /// Apple platforms.
    private static func streamFailure(of stream: InputStream) -> any Error {
        #if canImport(Darwin)
        return stream.streamError ?? CocoaError(.fileReadUnknown)
        #else
        return CocoaError(.fileReadUnknown)
        #endif
    }

    private static func readFailure(_ error: any Error) -> AFError {
        .multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
    }

    /// `text` with CR and LF percent-encoded.
    static func escapingLineBreaks(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": escaped.append(contentsOf: "%0D".unicodeScalars)
            case "\n": escaped.append(contentsOf: "%0A".unicodeScalars)
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}
