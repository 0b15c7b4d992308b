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
        /// the request is cleaned up (after it finished, failed or was cancelled) or retried.
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
        /// Set by `cleanup()`: an Uploadable created afterwards is removed at once.
        var isCleanedUp = false
    }

    private let uploadState = Mutex(UploadState())

    init(convertible: any UploadConvertible, fileManager: FileManager, context: RequestContext) {
        upload = convertible
        self.fileManager = fileManager
        super.init(convertible: convertible, context: context)
    }

    // MARK: Body source

    override var createsBodyBeforeSending: Bool { true }

    /// Creates this attempt's Uploadable (on the Session's request queue).
    override func createBody() -> AFError? {
        let uploadable: Uploadable
        do {
            uploadable = try upload.createUploadable()
        } catch {
            let afError = error.asAFError ?? .createUploadableFailed(error: error)
            self.error = afError
            notify(.didFailToCreateUploadable) { $0.request(self, didFailToCreateUploadableWithError: afError) }
            return afError
        }
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
            return InputStreamChunks(stream).transportBody
        case nil:
            return try super.transportBody(for: urlRequest)
        }
    }

    override func resetForRetry() {
        super.resetForRetry()
        let previous = uploadState.withLock { state -> Uploadable? in
            defer { state.uploadable = nil }
            return state.uploadable
        }
        if let previous { removeFileIfNeeded(previous) }
    }

    // MARK: Cleanup

    /// Deletes the upload file when the Uploadable is `.file(_, shouldRemove: true)`, then lets the
    /// Session forget the request. Runs once the request has finished and its serializers ran.
    override public func cleanup() {
        let uploadable = uploadState.withLock { state -> Uploadable? in
            state.isCleanedUp = true
            return state.uploadable
        }
        if let uploadable { removeFileIfNeeded(uploadable) }
        super.cleanup()
    }

    private func removeFileIfNeeded(_ uploadable: Uploadable) {
        guard case let .file(fileURL, shouldRemove) = uploadable, shouldRemove else { return }
        try? fileManager.removeItem(at: fileURL)
    }
}
