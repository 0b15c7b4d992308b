#if canImport(Glibc)
import Glibc
#endif

/// Reserving a file's disk blocks ahead of its writes, where the system offers it: Linux's
/// `fallocate` with `FALLOC_FL_KEEP_SIZE`, which leaves the file's size as it is (the file shows
/// only the bytes written) and fails on file systems that cannot reserve (then nothing happens).
///
/// The length comes from the server (Content-Length), so it is trusted only so far: nothing is
/// reserved for less than `minimumLength` (a write or two, where the calls would cost more than
/// they save) nor for more than half the space free on the file's file system, so that a length
/// a server made up cannot fill the disk while the body does not come.
///
/// Swift's Glibc module does not declare `fallocate` (a GNU extension), so it is looked up in the
/// C library once, by name (`fallocate64`, whose offsets are 64 bits wide everywhere).
enum FilePreallocation {
    /// The smallest length worth reserving.
    static let minimumLength: Int64 = 1 << 20

    private typealias Fallocate = @convention(c) (Int32, Int32, Int64, Int64) -> Int32

    /// `FALLOC_FL_KEEP_SIZE` (linux/falloc.h).
    private static let keepSize: Int32 = 1

    #if os(Linux)
    private static let fallocate: Fallocate? = dlsym(nil, "fallocate64").map { unsafeBitCast($0, to: Fallocate.self) }
    #endif

    /// Asks to reserve `length` bytes at `offset` of the open file `descriptor`; true when the
    /// request was made (the file system may have reserved part of it even when it failed, so
    /// the caller gives back what the body did not fill in any case).
    static func reserve(_ descriptor: Int32, from offset: Int64, length: Int64) -> Bool {
        #if os(Linux)
        guard let fallocate, offset >= 0, length >= minimumLength else { return false }
        var fileSystem = statvfs()
        guard fstatvfs(descriptor, &fileSystem) == 0 else { return false }
        let free = Int64(clamping: fileSystem.f_bavail).multipliedReportingOverflow(by: Int64(clamping: fileSystem.f_frsize))
        guard !free.overflow, length <= free.partialValue / 2 else { return false }
        _ = fallocate(descriptor, keepSize, offset, length)
        return true
        #else
        return false
        #endif
    }
}
