import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A pseudo-terminal pair: the child writes to the slave side, which `isatty` calls a terminal;
/// the test reads what it wrote from the master side.
final class PseudoTerminal: Sendable {
    let master: Int32
    let slave: Int32
    private let slaveOpen = Mutex(true)

    /// Opens a pair whose terminal is `columns` wide, both ends close-on-exec.
    ///
    /// Glibc's `posix_openpt`, `unlockpt` and `ptsname` are not visible to Swift; they are
    /// `/dev/ptmx` and two ioctls on Linux, which is what this does.
    init(columns: UInt16 = 100, rows: UInt16 = 30) throws {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw POSIXError(.ENODEV) }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, Self.setLock, &unlock) == 0, ioctl(master, Self.getNumber, &number) == 0 else {
            close(master)
            throw POSIXError(.ENODEV)
        }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            close(master)
            throw POSIXError(.ENODEV)
        }
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        self.master = master
        self.slave = slave
    }

    /// TIOCSPTLCK, `_IOW('T', 0x31, int)`: locks or unlocks the slave side.
    private static let setLock: UInt = 0x4004_5431
    /// TIOCGPTN, `_IOR('T', 0x30, unsigned int)`: the number of the slave side.
    private static let getNumber: UInt = 0x8004_5430

    /// Closes the test's copy of the slave side, once the child has its own: reading the master
    /// side then ends (EIO) when the child exits.
    func closeSlave() {
        let wasOpen = slaveOpen.withLock { open in
            defer { open = false }
            return open
        }
        if wasOpen { close(slave) }
    }
}

/// What a terminal shows after receiving some bytes: carriage returns go back to the start of
/// the line, `ESC [ K` clears to its end, and other escape sequences are ignored. Enough to see
/// the progress bar as a person would.
enum TerminalScreen {
    static func lines(_ bytes: Data) -> [String] {
        var lines: [[Character]] = [[]]
        var column = 0
        let text = Array(String(decoding: bytes, as: UTF8.self))
        var index = 0
        while index < text.count {
            let character = text[index]
            index += 1
            switch character {
            case "\r":
                column = 0
            case "\n", "\r\n":
                lines.append([])
                column = 0
            case "\u{1B}":
                guard index < text.count, text[index] == "[" else { continue }
                index += 1
                var parameters = ""
                while index < text.count, !(text[index].isLetter) {
                    parameters.append(text[index])
                    index += 1
                }
                guard index < text.count else { break }
                let command = text[index]
                index += 1
                if command == "K" {
                    let line = lines.count - 1
                    if parameters == "2" {
                        lines[line] = []
                    } else if column < lines[line].count {
                        lines[line].removeSubrange(column...)
                    }
                }
            default:
                let line = lines.count - 1
                while lines[line].count < column { lines[line].append(" ") }
                if column < lines[line].count {
                    lines[line][column] = character
                } else {
                    lines[line].append(character)
                }
                column += 1
            }
        }
        var result = lines.map { String($0) }
        while result.last?.isEmpty == true { result.removeLast() }
        return result
    }
}
