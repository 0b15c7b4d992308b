import Foundation

/// Writes a download's body to its file on a serial queue of its own, so that the event loop that
/// delivers the body never waits for the disk.
///
/// Operations run in the order they are called. The request bounds what is queued (it pauses the
/// socket while too many bytes wait here), so memory stays bounded whatever the body's size.
final class DownloadFileWriter: @unchecked Sendable {
    let url: URL
    private let queue = DispatchQueue(label: "lupine.download.fileWriter")
    // Touched only on `queue`.
    private var handle: FileHandle?
    private var failure: (any Error)?
    private var bytesOnDisk: Int64 = 0

    /// Opens `url`: a new empty file, or, with `offset`, the existing file cut to `offset` bytes and
    /// written after them.
    init(url: URL, appendingAt offset: Int64?) {
        self.url = url
        queue.async { self.open(appendingAt: offset) }
    }

    private func open(appendingAt offset: Int64?) {
        do {
            if let offset {
                let handle = try FileHandle(forWritingTo: url)
                self.handle = handle
                try handle.truncate(atOffset: UInt64(offset))
                try handle.seekToEnd()
                bytesOnDisk = offset
            } else {
                guard FileManager.default.createFile(atPath: url.path, contents: nil,
                                                     attributes: [.posixPermissions: 0o600]) else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
                }
                handle = try FileHandle(forWritingTo: url)
            }
        } catch {
            failure = error
        }
    }

    /// Appends `data`; `completion` runs on the writer's queue with the first failure so far, if any.
    func write(_ data: Data, completion: @escaping @Sendable ((any Error)?) -> Void) {
        queue.async {
            if self.failure == nil {
                do {
                    try self.handle?.write(contentsOf: data)
                    self.bytesOnDisk += Int64(data.count)
                } catch {
                    self.failure = error
                }
            }
            completion(self.failure)
        }
    }

    /// Waits for the queued writes, closes the file and returns the bytes on disk (or the failure).
    func close() -> Result<Int64, any Error> {
        queue.sync {
            if let handle {
                do {
                    try handle.close()
                } catch {
                    if failure == nil { failure = error }
                }
            }
            handle = nil
            if let failure { return .failure(failure) }
            return .success(bytesOnDisk)
        }
    }

    /// Closes the file and deletes it.
    func remove() {
        _ = close()
        DownloadFiles.remove(url)
    }
}
