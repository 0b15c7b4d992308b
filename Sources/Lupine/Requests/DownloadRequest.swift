import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// A request whose response body is written to a file as it arrives, then moved to its destination.
///
/// The body never sits in memory: it streams to a temporary file (writes happen off the event loop,
/// and the socket is paused while the disk lags behind). When the response is complete, and before
/// the validators run, the file is moved where the `Destination` says (by default beside the
/// temporary file, named `Alamofire_<temporary name>`). A failed or cancelled download removes its
/// temporary file, unless it produced resume data, which keeps the partial file for
/// `Session.download(resumingWith:)`.
public final class DownloadRequest: Request, @unchecked Sendable {
    /// How the downloaded file is placed at its destination.
    public struct Options: OptionSet, Sendable {
        /// Creates the destination's missing parent directories before moving the file.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Deletes a file already at the destination before moving the file.
        public static let removePreviousFile = Options(rawValue: 1 << 1)

        /// The raw bits.
        public let rawValue: Int

        /// Creates options from raw bits.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }
    }

    /// Tells where the temporary file of a complete download goes, and how.
    ///
    /// Called on the request's underlying queue with the temporary file and the response.
    public typealias Destination = @Sendable (_ temporaryURL: URL,
                                              _ response: HTTPURLResponse) -> (destinationURL: URL, options: Options)

    /// What a download starts from.
    public enum Downloadable: Sendable {
        /// A request built from a `URLRequestConvertible`.
        case request(any URLRequestConvertible)
        /// Resume data from a cancelled or failed download (Lupine's format, see `Session.download(resumingWith:)`).
        case resumeData(Data)
    }

    /// What the download started from.
    public let downloadable: Downloadable

    /// Resume data produced by `cancel(producingResumeData: true)`, `cancel(byProducingResumeData:)`, or a
    /// transfer that failed part-way through a resumable response; nil otherwise.
    public var resumeData: Data? {
        downloadState.withLockedValue { $0.resumeData } ?? error?.downloadResumeData
    }

    /// Where the file is after a successful move; nil before, and when the download failed.
    public var fileURL: URL? { downloadState.withLockedValue { $0.fileURL } }

    struct DownloadState {
        var destination: Destination?
        /// Decoded resume data of a `.resumeData` download.
        var resume: ResumeData?
        /// Bytes kept from the resume data; sent as `Range` on the next attempt, 0 for none.
        var resumeOffset: Int64 = 0
        /// The file the current attempt writes to.
        var temporaryURL: URL?
        var writer: DownloadFileWriter?
        var received: Int64 = 0
        var expectedTotal: Int64 = -1
        /// Bytes handed to the writer and not yet on disk.
        var unwrittenBytes = 0
        /// Reading is paused because the writer lags behind.
        var isWriterBehind = false
        var writeFailed = false
        var shouldProduceResumeData = false
        var resumeData: Data?
        var resumeDataHandler: (@Sendable (Data?) -> Void)?
        var fileURL: URL?
        var validators: [@Sendable () -> Void] = []
    }

    let downloadState = NIOLockedValueBox(DownloadState())

    /// The socket is paused above this many unwritten bytes and resumed below `resumeBelow`.
    static let pauseAbove = 4 << 20
    static let resumeBelow = 1 << 20

    init(downloadable: Downloadable, destination: Destination?, context: RequestContext) {
        self.downloadable = downloadable
        super.init(context: context)
        downloadState.withLockedValue { state in
            state.destination = destination
            if case let .resumeData(data) = downloadable, let resume = ResumeData(data: data) {
                state.resume = resume
                if let partial = resume.usablePartialFile {
                    state.resumeOffset = resume.bytesOnDisk
                    state.temporaryURL = partial
                }
            }
        }
        if case .resumeData = downloadable {
            onFinish { self.settleUnusedPartialFile() }
        }
    }

    override var urlRequestConvertible: (any URLRequestConvertible)? {
        switch downloadable {
        case let .request(convertible):
            return convertible
        case .resumeData:
            let (resume, offset) = downloadState.withLockedValue { ($0.resume, $0.resumeOffset) }
            guard let resume else { return UndecodableResumeData() }
            return ResumeRequestConvertible(resumeData: resume, offset: offset)
        }
    }

    // MARK: Cancellation

    /// Cancels the download without producing resume data; the temporary file is removed.
    @discardableResult
    override public func cancel() -> Self {
        cancel(producingResumeData: false)
    }

    /// Cancels the download; with `true`, resume data is produced when the response can be resumed
    /// (a GET whose response has a strong `ETag` or a `Last-Modified` date, no content coding, and at
    /// least one byte on disk). It is then in `resumeData` and in the `DownloadResponse`.
    @discardableResult
    public func cancel(producingResumeData shouldProduceResumeData: Bool) -> Self {
        if !isCancelled, !isFinished {
            downloadState.withLockedValue { $0.shouldProduceResumeData = shouldProduceResumeData }
        }
        return super.cancel()
    }

    /// Cancels the download, producing resume data, and calls `completionHandler` with it (nil when
    /// the download could not be resumed) on the request's underlying queue, before the response
    /// handlers run.
    @preconcurrency
    @discardableResult
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (_ data: Data?) -> Void) -> Self {
        downloadState.withLockedValue { $0.resumeDataHandler = completionHandler }
        cancel(producingResumeData: true)
        // Without a transfer in flight the resume data decision never runs: answer when finished.
        onFinish { self.callResumeDataHandler() }
        return self
    }

    private func callResumeDataHandler() {
        let (handler, data) = downloadState.withLockedValue { state in
            defer { state.resumeDataHandler = nil }
            return (state.resumeDataHandler, state.resumeData)
        }
        guard let handler else { return }
        underlyingQueue.async { handler(data) }
    }

    // MARK: Validation

    /// Adds a validation closure, run when the file is at its destination (in the order added, while
    /// there is no error). A failure that is not an `AFError` becomes
    /// `.responseValidationFailed(reason: .customValidationFailed(error:))`.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        let validator: @Sendable () -> Void = { [unowned self] in
            guard self.error == nil, let response = self.response else { return }
            let request = self.request
            let fileURL = self.fileURL
            ThreadContract.userCode("a validator")
            let result = validation(request, response, fileURL)
            if case let .failure(error) = result {
                self.error = error.asAFError ?? .responseValidationFailed(reason: .customValidationFailed(error: error))
            }
            self.notify(.didValidateDownload) { $0.request(self, didValidateRequest: request, response: response, fileURL: fileURL, withResult: result) }
        }
        downloadState.withLockedValue { $0.validators.append(validator) }
        return self
    }

    override func runValidators() {
        let validators = downloadState.withLockedValue { $0.validators }
        validators.forEach { $0() }
    }

    // MARK: Sink: the body goes to a file

    private enum HeadOutcome {
        case write(expected: Int64, received: Int64)
        case fail(URLError.Code)
    }

    override func didReceiveResponseHead(_ lazyResponse: LazyHTTPResponse, task: any TransportTask) {
        // A download reads the response's fields (its range); one request per file, made at once.
        guard let response = lazyResponse.response else { return }
        let length = response.expectedContentLength
        let start = downloadState.withLockedValue { state -> HeadOutcome in
            let previous = state.writer
            state.writer = nil
            let offset = state.resumeOffset
            var appendAt: Int64?
            if offset > 0 {
                if response.statusCode == 206 {
                    // A range that does not start where the file ends would splice the file.
                    guard ContentRange(response)?.start == offset else { return .fail(.badServerResponse) }
                    appendAt = offset
                } else {
                    // The server ignored the range, or the resource changed: start over from zero.
                    state.resumeOffset = 0
                }
            }
            let url = state.temporaryURL ?? DownloadFiles.newTemporaryURL(for: id)
            state.temporaryURL = url
            // A writer this one replaces finishes with the file first, on the writers' queues.
            state.writer = DownloadFileWriter(url: url, appendingAt: appendAt, expectedLength: length >= 0 ? length : nil, after: previous)
            state.received = appendAt ?? 0
            state.expectedTotal = length >= 0 ? (appendAt ?? 0) + length : -1
            return .write(expected: state.expectedTotal, received: state.received)
        }
        switch start {
        case let .write(expected, received):
            // A resumed download reports its offset at once (URLSession's didResumeAtOffset).
            updateDownloadProgress(expected: expected, received: received, notifying: received > 0)
        case let .fail(code):
            failTransfer(with: code, task: task)
        }
    }

    override func didReceiveBodyPart(_ data: Data, task: any TransportTask) {
        let count = data.count
        let (writer, received, shouldPause) = downloadState.withLockedValue { state in
            state.received += Int64(count)
            state.unwrittenBytes += count
            // Recorded with the decision, so that the writer catching up cannot reach the demand first.
            let shouldPause = !state.isWriterBehind && state.unwrittenBytes > Self.pauseAbove
            if shouldPause {
                state.isWriterBehind = true
                readDemand.record(.diskWriter, present: true, ifTask: task)
            }
            return (state.writer, state.received, shouldPause)
        }
        if shouldPause { readDemand.settle() }
        guard let writer else { return }
        writer.write(data) { [self] failure in
            if failure != nil {
                downloadState.withLockedValue { $0.writeFailed = true }
                failTransfer(with: .cannotWriteToFile, task: task)
                return
            }
            didWrite(count, by: writer, task: task)
        }
        updateDownloadProgress(expected: nil, received: received)
    }

    /// `count` bytes reached the disk: reading resumes once the writer has caught up (unless
    /// another reason holds it, such as `suspend()`).
    private func didWrite(_ count: Int, by writer: DownloadFileWriter, task: any TransportTask) {
        let caughtUp = downloadState.withLockedValue { state -> Bool in
            // A write of an attempt that ended counts no more (its counts were reset).
            guard state.writer === writer else { return false }
            state.unwrittenBytes -= count
            guard state.isWriterBehind, state.unwrittenBytes < Self.resumeBelow else { return false }
            state.isWriterBehind = false
            readDemand.record(.diskWriter, present: false, ifTask: task)
            return true
        }
        if caughtUp { readDemand.settle() }
    }

    /// The body's end: the file is closed on its writer's queue, then moved to its destination,
    /// or kept as resume data or removed; `next` runs on the root queue once that is done.
    override func transferWillComplete(error: AFError?, then next: @escaping @Sendable () -> Void) {
        let writer = downloadState.withLockedValue { state in
            defer {
                state.writer = nil
                state.isWriterBehind = false
                state.unwrittenBytes = 0
            }
            return state.writer
        }
        guard let writer else {
            DiskIO.run {
                self.keepOrRemovePartialFile(bytesOnDisk: nil, writer: nil, error: error)
                self.onRootQueue {
                    self.callResumeDataHandler()
                    next()
                }
            }
            return
        }
        writer.close { closed in
            guard error == nil else {
                self.keepOrRemovePartialFile(bytesOnDisk: try? closed.get(), writer: writer, error: error)
                self.onRootQueue {
                    self.callResumeDataHandler()
                    next()
                }
                return
            }
            // The destination is the user's closure: on the root queue.
            self.onRootQueue { self.finishDownload(from: writer.url, closed: closed, then: next) }
        }
    }

    /// A resumed download that finished without an exchange (cancelled before it started) still
    /// holds the partial file of its resume data: it becomes resume data again when asked for,
    /// else it is removed.
    private func settleUnusedPartialFile() {
        let unused = downloadState.withLockedValue { state -> URL? in
            guard state.writer == nil, state.resumeData == nil, state.resumeOffset > 0, let url = state.temporaryURL
            else { return nil }
            if state.shouldProduceResumeData, var resume = state.resume {
                resume.temporaryFile = url.path
                state.resumeData = resume.encoded()
                return nil
            }
            state.temporaryURL = nil
            state.resumeOffset = 0
            return url
        }
        DownloadFiles.removeLater(unused)
    }

    override func resetForRetry() {
        let leftover = downloadState.withLockedValue { state in
            defer {
                state.temporaryURL = nil
                state.resumeOffset = 0
                state.received = 0
                state.expectedTotal = -1
                state.writeFailed = false
                state.resumeData = nil
                state.fileURL = nil
            }
            // A retry starts from zero: the partial file of resume data made by this request goes.
            return state.resumeData == nil ? nil : state.temporaryURL
        }
        DownloadFiles.removeLater(leftover)
    }
}

/// The first byte position of a `Content-Range: bytes <first>-<last>/<length>` response field.
struct ContentRange {
    let start: Int64

    init?(_ response: HTTPURLResponse) {
        guard let value = response.headers["Content-Range"]?.trimmingCharacters(in: .whitespaces),
              value.lowercased().hasPrefix("bytes ")
        else { return nil }
        let range = value.dropFirst("bytes ".count).prefix { $0 != "/" }
        guard let first = range.split(separator: "-").first, let start = Int64(first.trimmingCharacters(in: .whitespaces))
        else { return nil }
        self.start = start
    }
}
