import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import Synchronization

/// A DataRequest that sends a body: bytes in memory, a file streamed from disk in chunks, or an
/// `InputStream` read in chunks as the connection accepts them. Never read whole into memory
/// unless it already is.
///
/// The body is created once per attempt from `upload` (after the URLRequest is built and adapted).
/// `uploadProgress` counts the bytes written to the connection; its total is the body's length,
/// or unknown (-1) for a stream. All of DataRequest's validation and response API applies.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    /// What is uploaded.
    public enum Uploadable: @unchecked Sendable {
        /// Bytes in memory.
        case data(Data)
        /// The content of a file, streamed from disk; with `shouldRemove` the file is deleted when
        /// the request is cleaned up (after it finished, failed or was cancelled), or when a retry
        /// sends a body other than this file.
        case file(URL, shouldRemove: Bool)
        /// A stream, read in chunks. It is read once: a retry or a 307/308 redirect re-sends
        /// whatever the stream still gives.
        case stream(InputStream)
    }

    /// The provider of the URLRequest and of the Uploadable.
    public let upload: any UploadableConvertible
    /// Used to remove a temporary upload file.
    public let fileManager: FileManager

    /// The Uploadable of the current attempt: nil before it is created and after a retry reset.
    public var uploadable: Uploadable? {
        get { uploadState.withLock { $0.uploadable } }
        set { uploadState.withLock { $0.uploadable = newValue } }
    }

    private struct UploadState {
        var uploadable: Uploadable?
        /// The Uploadable of the attempt before a retry, until the next one is created: its file is
        /// removed then, unless the new attempt sends the same file (a multipart form is encoded
        /// once and sent again as it is).
        var replaced: Uploadable?
        /// Set by `cleanup()`: an Uploadable created afterwards is removed at once.
        var isCleanedUp = false
        /// The reader of the stream Uploadable sent last, and which stream it reads (the reader
        /// holds its stream, so no other stream can have that identifier meanwhile).
        var streamChunks: (stream: ObjectIdentifier, chunks: InputStreamChunks)?
    }

    private let uploadState = Mutex(UploadState())

    init(convertible: any UploadConvertible, fileManager: FileManager, context: RequestContext) {
        upload = convertible
        self.fileManager = fileManager
        super.init(convertible: convertible, context: context)
    }

    // MARK: Body source

    override var createsBodyBeforeSending: Bool { true }

    override var createsBodyOnDisk: Bool { (upload as? MultipartUpload)?.encodesOnNextUse ?? false }

    /// Creates this attempt's Uploadable (on the Session's request queue).
    override func createBody() -> AFError? {
        let uploadable: Uploadable
        do {
            uploadable = try upload.createUploadable()
        } catch {
            removeReplacedFile(keeping: nil)
            let afError = error.asAFError ?? .createUploadableFailed(error: error)
            self.error = afError
            notify(.didFailToCreateUploadable) { $0.request(self, didFailToCreateUploadableWithError: afError) }
            return afError
        }
        removeReplacedFile(keeping: uploadable)
        let isCleanedUp = uploadState.withLock { state -> Bool in
            if !state.isCleanedUp { state.uploadable = uploadable }
            return state.isCleanedUp
        }
        if isCleanedUp {
            // Finished (cancelled) while the body was being made: nothing will send or remove it.
            removeFileIfNeeded(uploadable)
            return .explicitlyCancelled
        }
        notify(.didCreateUploadable) { $0.request(self, didCreateUploadable: uploadable) }
        return nil
    }

    override func transportBody(for urlRequest: URLRequest) throws -> TransportRequestBody? {
        switch uploadable {
        case let .data(data):
            return .data(data)
        case let .file(fileURL, _):
            var isDirectory: ObjCBool = false
            guard fileManager.fileExists(atPath: fileURL.path, isDirectory: &isDirectory) else {
                throw AFError.sessionTaskFailed(error: URLError(.fileDoesNotExist, userInfo: [NSURLErrorFailingURLErrorKey: fileURL]))
            }
            guard !isDirectory.boolValue else {
                throw AFError.sessionTaskFailed(error: URLError(.fileIsDirectory, userInfo: [NSURLErrorFailingURLErrorKey: fileURL]))
            }
            return .file(fileURL)
        case let .stream(stream):
            // Monitors get the stream to observe it; only the transport reads it.
            nonisolated(unsafe) let stream = stream
            notify(.didProvideInputStream) { $0.request(self, didProvideInputStream: stream) }
            return streamChunks(reading: stream).transportBody(for: urlRequest)
        case nil:
            return try super.transportBody(for: urlRequest)
        }
    }

    /// The reader of `stream`: one for every hop and attempt that sends this stream, so that a
    /// redirect or a retry sends what the stream still gives. A reader of its own would open the
    /// stream again, which a stream already read and closed refuses: the hop would fail with
    /// `.cannotOpenFile`.
    private func streamChunks(reading stream: InputStream) -> InputStreamChunks {
        let identifier = ObjectIdentifier(stream)
        nonisolated(unsafe) let stream = stream
        return uploadState.withLock { state in
            if let kept = state.streamChunks, kept.stream == identifier { return kept.chunks }
            let chunks = InputStreamChunks(stream)
            state.streamChunks = (identifier, chunks)
            return chunks
        }
    }

    /// Forgets this attempt's Uploadable. Its file is kept until the next attempt's Uploadable is
    /// known (or the request is cleaned up), since that may be the same file.
    override func resetForRetry() {
        super.resetForRetry()
        let superseded = uploadState.withLock { state -> Uploadable? in
            defer { state.uploadable = nil }
            guard let current = state.uploadable else { return nil }
            defer { state.replaced = current }
            return state.replaced
        }
        if let superseded { removeFileIfNeeded(superseded) }
    }

    /// Removes the file of the attempt before a retry, unless `next` sends that same file.
    private func removeReplacedFile(keeping next: Uploadable?) {
        let replaced = uploadState.withLock { state -> Uploadable? in
            defer { state.replaced = nil }
            return state.replaced
        }
        guard let replaced else { return }
        if case let .file(replacedURL, _) = replaced, case let .file(nextURL, _)? = next,
           replacedURL.standardizedFileURL == nextURL.standardizedFileURL {
            return
        }
        removeFileIfNeeded(replaced)
    }

    // MARK: Cleanup

    /// Deletes the upload file when the Uploadable is `.file(_, shouldRemove: true)`, then lets the
    /// Session forget the request. Runs once the request has finished and its serializers ran.
    override public func cleanup() {
        let (uploadable, replaced) = uploadState.withLock { state -> (Uploadable?, Uploadable?) in
            state.isCleanedUp = true
            defer { state.replaced = nil }
            return (state.uploadable, state.replaced)
        }
        if let uploadable { removeFileIfNeeded(uploadable) }
        if let replaced { removeFileIfNeeded(replaced) }
        super.cleanup()
    }

    /// Removes the file of `uploadable` if it should go, on `DiskIO`'s threads.
    private func removeFileIfNeeded(_ uploadable: Uploadable) {
        guard case let .file(fileURL, shouldRemove) = uploadable, shouldRemove else { return }
        DiskIO.run {
            ThreadContract.diskIO("removing an upload's temporary file")
            try? self.fileManager.removeItem(at: fileURL)
        }
    }
}
