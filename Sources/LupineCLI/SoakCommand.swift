import ArgumentParser
import Foundation
import Lupine
import LupineTestServer

/// `lupine soak`: sends many operations of mixed kinds, over every path a request can take, and
/// checks that resident memory stays flat and no file descriptor leaks.
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Send many mixed operations over every path; check memory stays flat and no descriptor leaks.",
        discussion: """
            Every 100 operations are: 30 tiny GETs, 6 bodies of 64 KiB and one of 1 MiB, 5 uploads of \
            4 KiB, 2 downloads to a file (removed afterwards), a download resumed after its \
            connection closed mid-body, 3 streams of 64 KiB, 4 validated 404s, 2 connections closed \
            mid-body, a refused connection, a timeout, 6 cancellations; 10 GETs over TLS with a \
            pinned certificate, 8 over HTTP/2, 5 through an HTTP proxy, 3 through its CONNECT \
            tunnel, 3 through a SOCKS5 proxy; 3 WebSocket connections of 3 messages, 2 streams of \
            server-sent events; a reset, a malformed response, a stalled body and a connection \
            closed mid-body through the proxy. Kinds whose server or proxy is not given are \
            skipped. Every --report-every operations it prints resident memory (VmRSS), open file \
            descriptors, the count, the error outcomes and the rate. It exits non-zero when resident \
            memory grows by --growth-limit MiB or more after the warm-up, when descriptors remain \
            open after the Sessions are released, or when an operation ends otherwise than its kind \
            must. Run it against `lupine serve` in another process (Scripts/soak.sh does that).
            """
    )

    @Option(help: "Number of requests.")
    var requests = 1_000_000

    @Option(help: "Base URL of a running `lupine serve`; without it, a server runs in this process.")
    var server: String?

    @Option(help: "Base URL of a TLS server presenting --pin-cert's certificate (`lupine serve --tls-certificate`).")
    var tlsServer: String?

    @Option(help: "Base URL of an HTTP/2 server presenting --pin-cert's certificate.")
    var http2Server: String?

    @Option(help: "host:port of an HTTP proxy (absolute form for http, CONNECT for https).")
    var httpProxy: String?

    @Option(help: "host:port of a SOCKS5 proxy.")
    var socksProxy: String?

    @Option(help: "The certificates (PEM or DER) the TLS and HTTP/2 servers' chains are pinned to and validated up to.")
    var pinCert: String?

    @Option(help: "Requests in flight at once.")
    var concurrency = 32

    @Option(help: "Print a report line every this many requests.")
    var reportEvery = 100_000

    @Option(help: "Requests before the memory baseline is taken (at most half of --requests).")
    var warmUp = 100_000

    @Option(help: "Largest acceptable growth of resident memory after the warm-up, in MiB.")
    var growthLimit = 8

    @Option(help: ArgumentHelp("Send only operations of this kind (its name in the report, such as \"resumed download\"), to tell which kind grows.",
                               valueName: "kind"))
    var only: String?

    func validate() throws {
        guard requests > 0, concurrency > 0, reportEvery > 0, warmUp >= 0, growthLimit > 0 else {
            throw ValidationError("--requests, --concurrency, --report-every and --growth-limit must be positive.")
        }
        if let only, SoakKind(rawValue: only) == nil {
            throw ValidationError("--only: no kind named \"\(only)\"; the kinds: \(SoakKind.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    func run() async throws {
        let embedded: LupineTestServer? = server == nil ? try await LupineTestServer.start() : nil
        let baseURL = server ?? embedded?.baseURL ?? ""
        let descriptorsBefore = await descriptorBaseline(baseURL: baseURL)
        let warmUpEnd = min(warmUp, requests / 2)
        let tally = SoakTally()
        var samples = SoakSamples()
        let start = Date()
        Console.line("soak: \(requests) requests, \(concurrency) in flight, against \(baseURL); descriptors before: \(descriptorsBefore)")

        let pinned: [SecCertificate]
        do {
            pinned = try pinCert.map { try CertificateFile.certificates(at: $0, status: 2) } ?? []
        } catch let failure as RequestBuilder.Failure {
            throw ValidationError(failure.message)
        }
        do {
            let endpoints = SoakEndpoints(baseURL: baseURL, tlsURL: tlsServer, http2URL: http2Server, httpProxy: httpProxy,
                                          socksProxy: socksProxy, pinnedCertificates: pinned)
            let skipped = SoakKind.allCases.filter { !endpoints.isAvailable($0) }
            if !skipped.isEmpty { Console.line("soak: skipped (no server or proxy given): \(skipped.map(\.rawValue).joined(separator: ", "))") }
            // Ctrl-C stops adding requests and cancels those in flight (Lupine removes their
            // partial downloads); then the download files registered with Termination go.
            let sessions = endpoints.sessions
            let interrupts = InterruptHandling { _ in
                for session in sessions { await InterruptHandling.cancelRequests(of: session) }
            }
            defer { interrupts.stop() }
            let onlyKind = only.flatMap(SoakKind.init(rawValue:))
            var intervalStart = Date()
            var intervalCount = 0
            await withTaskGroup(of: Void.self) { group in
                var next = 0
                func addNext() {
                    let index = next
                    next += 1
                    group.addTask {
                        var kind = onlyKind ?? SoakKind.kind(for: index)
                        if !endpoints.isAvailable(kind) { kind = .tinyGet }
                        let outcome = await kind.run(index: index, endpoints: endpoints)
                        tally.record(kind, label: outcome.label, expected: outcome.expected)
                    }
                }
                while next < min(concurrency, requests) { addNext() }
                var finished = 0
                while await group.next() != nil {
                    finished += 1
                    if next < requests, !interrupts.hasFired { addNext() }
                    if finished == warmUpEnd { samples.baseline = ResidentMemorySampler.current() }
                    if finished % reportEvery == 0 || finished == requests {
                        let now = Date()
                        let rate = Double(finished - intervalCount) / max(now.timeIntervalSince(intervalStart), 0.001)
                        report(finished, rate: rate, tally: tally, samples: &samples, afterWarmUp: finished > warmUpEnd)
                        intervalStart = now
                        intervalCount = finished
                    }
                }
            }
            await interrupts.parkIfInterrupted()
        }
        let seconds = Date().timeIntervalSince(start)
        let descriptorsAfter = await settledDescriptorCount(atMost: descriptorsBefore)
        try await embedded?.shutdown()
        try conclude(seconds: seconds, tally: tally, samples: samples, before: descriptorsBefore, after: descriptorsAfter)
    }

    /// Resident memory readings: the one at the end of the warm-up and the highest one after it.
    private struct SoakSamples {
        var baseline: Int?
        var peakAfterWarmUp = 0
    }

    private func report(_ finished: Int, rate: Double, tally: SoakTally, samples: inout SoakSamples, afterWarmUp: Bool) {
        let resident = ResidentMemorySampler.current() ?? 0
        if afterWarmUp { samples.peakAfterWarmUp = max(samples.peakAfterWarmUp, resident) }
        let descriptors = OpenFileDescriptors.count().map(String.init) ?? "?"
        let counts = String(format: "%9d requests  RSS %7.1f MiB", finished, Double(resident) / 1_048_576)
        Console.line("\(counts)  fds \(descriptors)  \(String(format: "%6.0f", rate)) req/s  errors: \(tally.errorSummary)")
    }

    /// Opens and releases a Session once, so the process-wide pieces it creates on first use (the
    /// shared event loops and their descriptors) exist before the count that later ones are
    /// compared with.
    private func descriptorBaseline(baseURL: String) async -> Int {
        do {
            let session = Session()
            _ = await session.request("\(baseURL)/get").serializingData().response
        }
        return await settledDescriptorCount(atMost: 0)
    }

    /// The descriptor count once the released Session's connections have closed: polled for up to
    /// ten seconds until it is at most `limit` (0: until two readings agree).
    private func settledDescriptorCount(atMost limit: Int) async -> Int {
        var last = OpenFileDescriptors.count() ?? 0
        for _ in 0..<100 {
            try? await Task.sleep(nanoseconds: 100_000_000)
            let now = OpenFileDescriptors.count() ?? 0
            if limit > 0 ? now <= limit : now == last { return now }
            last = now
        }
        return last
    }

    private func conclude(seconds: Double, tally: SoakTally, samples: SoakSamples, before: Int, after: Int) throws {
        let growth = samples.baseline.map { max(0, samples.peakAfterWarmUp - $0) }
        Console.line(String(format: "soak: %d requests in %.0f s (%.0f req/s)", tally.completed, seconds,
                            Double(tally.completed) / max(seconds, 0.001)))
        Console.line("soak: RSS after warm-up \(mebibytes(samples.baseline)), peak after it \(mebibytes(samples.peakAfterWarmUp)), "
            + "growth \(mebibytes(growth)) (limit \(growthLimit) MiB)")
        Console.line("soak: descriptors before \(before), after the Session was released \(after)")
        Console.line("soak: unexpected outcomes: \(tally.unexpectedCount)\(tally.unexpectedCount > 0 ? " (\(tally.unexpectedSummary))" : "")")
        var failures: [String] = []
        if let growth, growth >= growthLimit << 20 { failures.append("resident memory grew by \(mebibytes(growth))") }
        if after > before { failures.append("\(after - before) file descriptors leaked") }
        if tally.unexpectedCount > 0 { failures.append("\(tally.unexpectedCount) requests ended unexpectedly") }
        if tally.completed != requests { failures.append("only \(tally.completed) of \(requests) requests finished") }
        guard failures.isEmpty else {
            Console.error("lupine soak: FAILED: " + failures.joined(separator: "; "))
            throw ExitCode.failure
        }
        Console.line("soak: PASSED")
    }

    private func mebibytes(_ bytes: Int?) -> String {
        bytes.map { String(format: "%.1f MiB", Double($0) / 1_048_576) } ?? "?"
    }
}
