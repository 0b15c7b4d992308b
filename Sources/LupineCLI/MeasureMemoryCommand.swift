import ArgumentParser
import Foundation
import Lupine
import LupineTestServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `lupine measure-memory`: moves a large body three ways and reports how much the process's
/// resident memory grew during each: a download to a file, an upload from a file, and a stream
/// read by a slow consumer.
struct MeasureMemoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-memory",
        abstract: "Measure resident memory growth of a large download, upload and slow stream.",
        discussion: """
            Each transfer runs alone; resident memory (VmRSS) is sampled every 20 ms and the peak \
            is compared with the level just before the transfer. Run it with --server pointing at \
            `lupine serve` in another process, so the server's own memory is not counted \
            (Scripts/measure-memory.sh does that). Exits non-zero when a growth reaches --limit.
            """
    )

    @Option(help: "Body size of each transfer, in MiB.")
    var mebibytes = 1024

    @Option(help: "Base URL of a running `lupine serve`; without it, a server runs in this process.")
    var server: String?

    @Option(help: "Largest acceptable growth of resident memory, in MiB.")
    var limit = 32

    @Option(help: "Microseconds the slow stream consumer spends on each chunk.")
    var consumerDelay: UInt32 = 400

    func validate() throws {
        guard mebibytes > 0 else { throw ValidationError("--mebibytes must be positive.") }
    }

    func run() async throws {
        let embedded: LupineTestServer? = server == nil ? try await LupineTestServer.start() : nil
        let baseURL = server ?? embedded?.baseURL ?? ""
        let size = Int64(mebibytes) << 20
        let session = Session()
        // Ctrl-C must not leave a gigabyte behind: the transfers are cancelled (Lupine removes the
        // partial download), then the files registered with Termination are removed.
        let interrupts = InterruptHandling { _ in await InterruptHandling.cancelRequests(of: session) }
        defer { interrupts.stop() }
        let results: [Measurement]
        do {
            results = [
                try await measure("download to file") { try await download(size, from: baseURL, session: session) },
                try await measure("upload from file") { try await upload(size, to: baseURL, session: session) },
                try await measure("slow stream") { try await slowStream(size, from: baseURL, session: session) },
            ]
        } catch {
            await interrupts.parkIfInterrupted()
            throw error
        }
        await interrupts.parkIfInterrupted()
        try await embedded?.shutdown()
        Console.line("")
        Console.line("transfer            MiB   seconds   MB/s   RSS before   peak growth")
        for result in results { Console.line(result.row) }
        if results.contains(where: { $0.growth >= limit << 20 }) {
            Console.error("lupine: resident memory grew by \(limit) MiB or more.")
            throw ExitCode.failure
        }
    }

    private struct Measurement {
        let name: String
        let bytes: Int64
        let seconds: Double
        let before: Int
        let growth: Int

        var row: String {
            let throughput = Double(bytes) / seconds / 1_000_000
            return name.padding(toLength: 18, withPad: " ", startingAt: 0)
                + String(format: "%5d  %8.2f  %5.0f  %8.1f MiB  %8.2f MiB",
                         Int(bytes >> 20), seconds, throughput, Double(before) / 1_048_576, Double(growth) / 1_048_576)
        }
    }

    private func measure(_ name: String, _ transfer: () async throws -> Int64) async throws -> Measurement {
        let before = ResidentMemorySampler.current() ?? 0
        let sampler = ResidentMemorySampler()
        sampler.start()
        let start = Date()
        let bytes = try await transfer()
        let seconds = Date().timeIntervalSince(start)
        let peak = sampler.stop()
        Console.note("\(name): \(bytes) bytes in \(String(format: "%.2f", seconds)) s")
        return Measurement(name: name, bytes: bytes, seconds: seconds, before: before, growth: max(0, peak - before))
    }

    private func download(_ size: Int64, from baseURL: String, session: Session) async throws -> Int64 {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-memory-\(UUID().uuidString)")
        let cleanup = Termination.removeOnExit(destination)
        defer {
            try? FileManager.default.removeItem(at: destination)
            Termination.unregister(cleanup)
        }
        let fileURL = try await session.download("\(baseURL)/bytes/\(size)", to: { _, _ in (destination, []) })
            .validate()
            .serializingDownloadedFileURL()
            .value
        let written = try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber
        return written?.int64Value ?? 0
    }

    private func upload(_ size: Int64, to baseURL: String, session: Session) async throws -> Int64 {
        // A sparse file: reading it costs the disk nothing, and the client still reads every byte.
        let source = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-memory-\(UUID().uuidString)")
        let cleanup = Termination.removeOnExit(source)
        defer {
            try? FileManager.default.removeItem(at: source)
            Termination.unregister(cleanup)
        }
        guard FileManager.default.createFile(atPath: source.path, contents: nil) else {
            throw ValidationError("cannot create \(source.path)")
        }
        let handle = try FileHandle(forWritingTo: source)
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        struct Report: Decodable { let bytes: Int64 }
        return try await session.upload(source, to: "\(baseURL)/upload")
            .validate()
            .serializingDecodable(Report.self)
            .value
            .bytes
    }

    private func slowStream(_ size: Int64, from baseURL: String, session: Session) async throws -> Int64 {
        let delay = consumerDelay
        let received = Counter()
        let queue = DispatchQueue(label: "lupine.measure-memory.consumer")
        let completion: DataStreamRequest.Completion = await withCheckedContinuation { continuation in
            session.streamRequest("\(baseURL)/stream-bytes/\(size)").validate().responseStream(on: queue) { stream in
                switch stream.event {
                case let .stream(.success(chunk)):
                    received.add(chunk.count)
                    usleep(delay)
                case let .complete(completion):
                    continuation.resume(returning: completion)
                }
            }
        }
        if let error = completion.error { throw error }
        return received.value
    }
}

/// A byte count shared between the consumer queue and the caller.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var total: Int64 = 0

    func add(_ count: Int) { lock.withLock { total += Int64(count) } }
    var value: Int64 { lock.withLock { total } }
}
