import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes a download's body to its file on a serial queue of its own, so that the event loop that
/// delivers the body never waits for the disk, nor does anything else: the file is closed on that
/// queue too, and whoever needs it closed is called back.
///
/// Operations run in the order they are called. The request bounds what is queued (it pauses the
/// socket while too many bytes wait here), so memory stays bounded whatever the body's size.
///
/// A body of announced length has its disk blocks reserved when the file is opened (Linux's
/// `fallocate`, keeping the file's size): the file system then finds no blocks while the writes
/// come, which took nearly half off the CPU time of writing 100 MiB in 64 KiB writes on ext4
/// (25-35 ms against 14-18). Blocks a body did not fill go back when the file is closed.
final class DownloadFileWriter: @unchecked Sendable {
    let url: URL
    private let queue = DispatchQueue(label: "lupine.download.fileWriter")
    // Touched only on `queue`.
    private var handle: FileHandle?
    private var failure: (any Error)?
    private var bytesOnDisk: Int64 = 0
    /// Where the blocks asked to be reserved end (0 when none were).
    private var reservedEnd: Int64 = 0

    /// Opens `url`: a new empty file, or, with `offset`, the existing file cut to `offset` bytes and
    /// written after them; `expectedLength`, the body's announced length, reserves its blocks.
    /// With `previous`, a writer of the same file that this one replaces, the file is opened once
    /// that writer has written what it was given and closed.
    init(url: URL, appendingAt offset: Int64?, expectedLength: Int64? = nil, after previous: DownloadFileWriter? = nil) {
        self.url = url
        queue.async {
            _ = previous?.closeHere()
            self.open(appendingAt: offset)
            if let expectedLength { self.reserve(expectedLength) }
        }
    }

    /// Reserves the blocks of the `length` bytes to come, if the file system can (advice only;
    /// see `FilePreallocation` for the lengths it trusts).
    private func reserve(_ length: Int64) {
        guard length > 0, let handle, failure == nil else { return }
        if FilePreallocation.reserve(handle.fileDescriptor, from: bytesOnDisk, length: length) {
            reservedEnd = bytesOnDisk + length
        }
    }

    private func open(appendingAt offset: Int64?) {
        ThreadContract.diskIO("opening a download's file")
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
            ThreadContract.diskIO("writing a download's file")
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

    /// Closes the file once the queued writes are done, then calls `completion` on the writer's
    /// queue with the bytes on disk (or the failure).
    func close(then completion: @escaping @Sendable (Result<Int64, any Error>) -> Void) {
        queue.async { completion(self.closeOnQueue()) }
    }

    /// Waits for the queued writes and closes the file, from another writer's queue.
    private func closeHere() -> Result<Int64, any Error> {
        queue.sync { closeOnQueue() }
    }

    private func closeOnQueue() -> Result<Int64, any Error> {
        ThreadContract.diskIO("closing a download's file")
        if let handle {
            // Reserved blocks past what was written (a body cut short, a resumable failure) go
            // back: cutting a file to its own size frees the blocks reserved past its end.
            if reservedEnd > bytesOnDisk {
                _ = ftruncate(handle.fileDescriptor, off_t(bytesOnDisk))
            }
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
