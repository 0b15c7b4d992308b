import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The two file-system operations `MultipartFormData` needs that `FileManager` does not offer.
enum MultipartFileAccess {
    /// Whether the file can be opened for reading right now.
    ///
    /// Opened without blocking, so a FIFO with no writer does not stall an `append`; closed at once.
    static func canOpenForReading(_ fileURL: URL) -> Bool {
        let descriptor = open(fileURL.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        close(descriptor)
        return true
    }

    /// Creates a new file for writing, failing if anything already exists at the path (checked
    /// atomically by the system, not before the fact).
    ///
    /// - Throws: `AFError.multipartEncodingFailed` with `.outputStreamFileAlreadyExists(at:)` when
    ///   the path is taken, `.outputStreamCreationFailed(for:)` for any other failure.
    static func createExclusively(_ fileURL: URL) throws -> FileHandle {
        let descriptor = open(fileURL.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason: AFError.MultipartEncodingFailureReason = errno == EEXIST
                ? .outputStreamFileAlreadyExists(at: fileURL)
                : .outputStreamCreationFailed(for: fileURL)
            throw AFError.multipartEncodingFailed(reason: reason)
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}

extension MultipartFormData {
    /// The body of an upload of this form.
    ///
    /// Bodies whose `contentLength` is below `threshold` are encoded in memory; larger ones are
    /// written in chunks to a new file named by a UUID in `temporaryDirectory` (created if
    /// needed), which the upload removes when it is cleaned up (`shouldRemove: true`). A failed
    /// write leaves no file behind.
    ///
    /// - Parameters:
    ///   - threshold: `MultipartFormData.encodingMemoryThreshold` unless the caller chose another.
    ///   - temporaryDirectory: Where a large body is written.
    /// - Throws: What `encode()` and `writeEncodedData(to:)` throw, or the error creating the
    ///   directory.
    func encodedUploadable(threshold: UInt64, temporaryDirectory: URL) throws -> UploadRequest.Uploadable {
        if contentLength < threshold {
            return .data(try encode())
        }
        try fileManager.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
        let fileURL = temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try writeEncodedData(to: fileURL)
        return .file(fileURL, shouldRemove: true)
    }
}
