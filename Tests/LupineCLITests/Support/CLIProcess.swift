import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

/// One run of the `lupine` executable, its output collected as it comes.
///
/// Standard output and standard error are pipes, or together one pseudo-terminal. Every
/// descriptor the test opens is close-on-exec, so that a child started by a test running in
/// parallel never holds another test's pipe open. A process still running when its `CLIProcess`
/// goes away (a test that failed half-way) is killed.
///
/// Unchecked Sendable: `process` (a Foundation `Process`) is set up in `init` and afterwards only
/// read (`isRunning`, the termination status) or signalled; the output is behind locks.
final class CLIProcess: @unchecked Sendable {
    /// Where standard input comes from.
    enum Input: Sendable {
        /// /dev/null.
        case none
        /// These bytes, then end of file.
        case data(Data)
    }

    private let process: Process
    private let buffers = Buffers()

    /// What the reader threads collect; they hold this, not the `CLIProcess`.
    private final class Buffers: Sendable {
        let output = Mutex(Data())
        let errors = Mutex(Data())
        let readersRunning = Mutex(0)
    }

    /// The command line, for failure messages.
    let commandLine: String

    /// Starts `lupine` with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: added to this process's environment (TMPDIR, for instance).
    ///   - directory: the working directory.
    ///   - terminal: standard input, output and error on this pseudo-terminal instead of pipes.
    ///   - executable: another program to run instead (a shell running `lupine` in a pipeline).
    init(_ arguments: [String], environment: [String: String] = [:], input: Input = .none,
         directory: URL? = nil, terminal: PseudoTerminal? = nil, executable: URL? = nil) throws {
        _ = Self.ignoringBrokenPipes
        process = Process()
        let lupine = try LupineExecutable.url
        process.executableURL = executable ?? lupine
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment
            .merging(["LUPINE": lupine.path]) { $1 }
            .merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        commandLine = (executable?.lastPathComponent ?? "lupine") + " " + arguments.joined(separator: " ")

        var childEnds: [Int32] = []
        var readEnds: [(descriptor: Int32, isOutput: Bool)] = []
        if let terminal {
            let slave = FileHandle(fileDescriptor: terminal.slave, closeOnDealloc: false)
            process.standardInput = slave
            process.standardOutput = slave
            process.standardError = slave
            readEnds = [(terminal.master, true)]
        } else {
            let outputPipe = try Self.pipe()
            let errorPipe = try Self.pipe()
            process.standardOutput = FileHandle(fileDescriptor: outputPipe.write, closeOnDealloc: false)
            process.standardError = FileHandle(fileDescriptor: errorPipe.write, closeOnDealloc: false)
            readEnds = [(outputPipe.read, true), (errorPipe.read, false)]
            childEnds = [outputPipe.write, errorPipe.write]
            switch input {
            case .none:
                process.standardInput = FileHandle.nullDevice
            case let .data(data):
                let inputPipe = try Self.pipe()
                process.standardInput = FileHandle(fileDescriptor: inputPipe.read, closeOnDealloc: false)
                childEnds.append(inputPipe.read)
                let writeEnd = inputPipe.write
                Thread.detachNewThread {
                    data.withUnsafeBytes { buffer in
                        var offset = 0
                        while offset < buffer.count, let base = buffer.baseAddress {
                            let written = Glibc.write(writeEnd, base + offset, buffer.count - offset)
                            if written <= 0 { break }
                            offset += written
                        }
                    }
                    close(writeEnd)
                }
            }
        }
        do {
            try process.run()
        } catch {
            for descriptor in childEnds + readEnds.map(\.descriptor) { close(descriptor) }
            terminal?.closeSlave()
            throw error
        }
        for descriptor in childEnds { close(descriptor) }
        terminal?.closeSlave()
        for end in readEnds { Self.startReading(end.descriptor, isOutput: end.isOutput, into: buffers) }
    }

    /// A child that exits without reading all of its standard input must not kill the test
    /// process with SIGPIPE: writes to that pipe fail with EPIPE instead.
    private static let ignoringBrokenPipes: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// A pipe whose two ends are close-on-exec (`pipe2` is not visible to Swift, so a child
    /// spawned by another thread between the two calls could still inherit them).
    private static func pipe() throws -> (read: Int32, write: Int32) {
        var descriptors: [Int32] = [0, 0]
        guard Glibc.pipe(&descriptors) == 0 else { throw POSIXError(.EMFILE) }
        for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return (descriptors[0], descriptors[1])
    }

    /// Reads `descriptor` until its end on a thread of its own, then closes it.
    private static func startReading(_ descriptor: Int32, isOutput: Bool, into buffers: Buffers) {
        buffers.readersRunning.withLock { $0 += 1 }
        Thread.detachNewThread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count > 0 {
                    let data = Data(chunk[0..<count])
                    if isOutput {
                        buffers.output.withLock { $0.append(data) }
                    } else {
                        buffers.errors.withLock { $0.append(data) }
                    }
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    // End of file, or EIO once a terminal's last slave descriptor is closed.
                    break
                }
            }
            close(descriptor)
            buffers.readersRunning.withLock { $0 -= 1 }
        }
    }

    /// What standard output (or the terminal) received so far.
    var standardOutput: Data { buffers.output.withLock { $0 } }
    /// What standard error received so far (empty with a terminal: it went to the terminal).
    var standardError: Data { buffers.errors.withLock { $0 } }
    var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
    var errorText: String { String(decoding: standardError, as: UTF8.self) }
    var isRunning: Bool { process.isRunning }
    var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signalNumber` to the process.
    func send(_ signalNumber: Int32) {
        kill(process.processIdentifier, signalNumber)
    }

    /// Waits until `condition` holds, failing the test after `seconds`.
    func wait(upTo seconds: Double = 30, _ what: String, until condition: (CLIProcess) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(self) {
            guard Date() < deadline else {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("\(commandLine): waited \(seconds) s for \(what); output: \(outputText.suffix(500)) errors: \(errorText)")
                throw CancellationError()
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    /// Waits for the process to end and its output to be read; kills it after `seconds`.
    /// - Returns: its exit status, or 128 + the signal that ended it.
    @discardableResult
    func finish(upTo seconds: Double = 60) async throws -> Int32 {
        try await wait(upTo: seconds, "the process to end") { !$0.process.isRunning && $0.buffers.readersRunning.withLock { $0 == 0 } }
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal ? 128 + status : status
    }

    /// Runs `script` with bash to its end; `$LUPINE` is the executable.
    static func shell(_ script: String, environment: [String: String] = [:], timeout: Double = 60) async throws -> CLIResult {
        let process = try CLIProcess(["-c", script], environment: environment, executable: URL(fileURLWithPath: "/bin/bash"))
        let status = try await process.finish(upTo: timeout)
        return CLIResult(status: status, standardOutput: process.standardOutput, standardError: process.standardError)
    }

    /// Runs `lupine` to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:], input: Input = .none,
                    directory: URL? = nil, timeout: Double = 60) async throws -> CLIResult {
        let process = try CLIProcess(arguments, environment: environment, input: input, directory: directory)
        let status = try await process.finish(upTo: timeout)
        return CLIResult(status: status, standardOutput: process.standardOutput, standardError: process.standardError)
    }
}

/// How a run of `lupine` ended.
struct CLIResult: Sendable {
    let status: Int32
    let standardOutput: Data
    let standardError: Data

    var output: String { String(decoding: standardOutput, as: UTF8.self) }
    var errors: String { String(decoding: standardError, as: UTF8.self) }
}
