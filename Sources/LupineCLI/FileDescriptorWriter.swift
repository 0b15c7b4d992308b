import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes whole buffers to a file descriptor with `write(2)`, reporting failures as errno values
/// instead of trapping as `FileHandle.write(_:)` does.
enum FileDescriptorWriter {
    /// Writes all of `data` to `descriptor`.
    ///
    /// Short writes and EINTR are retried; a descriptor left non-blocking by another process that
    /// shares it (EAGAIN) is waited for with `poll`.
    /// - Returns: nil when every byte was written, else the errno of the failure (EPIPE when the
    ///   reading end is closed).
    static func write(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, base + offset, buffer.count - offset)
                if written >= 0 {
                    offset += written
                    continue
                }
                let failure = errno
                switch failure {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    var waiting = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&waiting, 1, -1)
                default:
                    return failure
                }
            }
            return nil
        }
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }
}
