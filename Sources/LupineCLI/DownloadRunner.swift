import ArgumentParser
import Foundation
import Lupine
import Synchronization

/// `lupine download` and `get --download`: saves the body to a file through a `DownloadRequest`
/// (the body streams to disk, never into memory), with a progress bar on standard error when it is
/// a terminal, and Lupine's resume data for `--continue`.
struct DownloadRunner {
    let method: HTTPMethod
    let options: RequestOptions

    func run() async throws {
        guard !options.output.headersOnly, !options.output.bodyOnly else {
            throw ValidationError("-h and -b choose what a request prints; a download saves the body to a file.")
        }
        let prepared = try PreparedRequest(method: method, options: options)
        guard let url = prepared.urlRequest.url else { throw ExitStatus.exit(ExitStatus.malformedURL) }
        let connection = options.connection
        let resumes = options.output.resume
        let target = DownloadTarget(explicitFile: options.output.outputFile.map { URL(fileURLWithPath: $0) }, url: url)
        let resumeFile = DownloadTarget.resumeFile(for: target.nameFromURL)
        let savedResumeData = resumes ? FileManager.default.contents(atPath: resumeFile.path) : nil

        let queue = DispatchQueue(label: "lupine.cli.download")
        let retryGate = connection.retry > 0 ? RetryGate(limit: connection.retry) { attempt, limit, delay, error in
            if connection.verbose { VerboseReporter.retrying(attempt: attempt, limit: limit, delay: delay, error: error, url: url) }
        } : nil
        let session = try prepared.session(queue: queue, retryGate: retryGate)
        let saved = Mutex<URL?>(nil)
        let errorBody = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-error-body-\(UUID().uuidString)")
        let errorBodyCleanup = Termination.removeOnExit(errorBody)
        defer {
            try? FileManager.default.removeItem(at: errorBody)
            Termination.unregister(errorBodyCleanup)
        }
        let destination: DownloadRequest.Destination = { _, response in
            // An error page is not the file asked for: it is set aside and removed.
            guard response.statusCode < 400 else { return (errorBody, [.removePreviousFile]) }
            let file = target.file(for: response, allowsServerName: !resumes)
            saved.withLock { $0 = file }
            return (file, [.removePreviousFile, .createIntermediateDirectories])
        }
        let request = savedResumeData.map { session.download(resumingWith: $0, to: destination) }
            ?? session.download(prepared.urlRequest, to: destination)
        request.validate { _, response, _ in
            response.statusCode < 400
                ? .success(())
                : .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode)))
        }
        if let (user, password) = connection.credentials { request.authenticate(username: user, password: password) }
        let bar = ProgressBar()
        request.downloadProgress(queue: queue) { progress in
            bar.update(received: progress.completedUnitCount, total: progress.totalUnitCount > 0 ? progress.totalUnitCount : nil)
        }
        let interrupts = InterruptHandling { _ in
            bar.clear()
            await Self.interrupt(request, keepingResumeDataIn: resumes ? resumeFile : nil)
        }
        let response = await request.serializingDownloadedFileURL().response
        await interrupts.parkIfInterrupted()
        interrupts.stop()
        withExtendedLifetime(session) {}

        if case let .success(file) = response.result {
            Self.giveOrdinaryPermissions(to: file)
            bar.finish(received: request.downloadProgress.completedUnitCount)
            if resumes { try? FileManager.default.removeItem(at: resumeFile) }
            if Terminal.isTerminal(STDERR_FILENO) { Console.note("Saved \(Self.displayPath(saved.withLock { $0 } ?? file))") }
            return
        }
        bar.clear()
        let error = response.error ?? .explicitlyCancelled
        if case let .responseValidationFailed(.unacceptableStatusCode(code)) = error {
            Console.error("lupine: \(Endpoint(request.request?.url ?? url)) answered \(ResponseHeadText.status(code)); nothing was saved.")
            throw ExitStatus.exit(ExitStatus.httpError)
        }
        if let resumeData = request.resumeData {
            if resumes {
                Self.keep(resumeData, in: resumeFile)
            } else if let partial = DownloadTarget.partialFile(in: resumeData) {
                try? FileManager.default.removeItem(at: partial)
            }
        }
        throw report(FailureReport(error, url: request.request?.url ?? url, timeout: connection.timeout, proxy: connection.proxy),
                     verbose: connection.verbose)
    }

    /// Gives a saved file the permissions a new file of this process gets (0666 less the umask), as
    /// curl's and wget's have: Lupine writes downloads owner-only (0600) while they sit in the
    /// temporary directory, and a file saved for the user should be as readable as any other.
    private static func giveOrdinaryPermissions(to file: URL) {
        let mask = umask(0o022)
        umask(mask)
        let permissions = 0o666 & ~Int(mask)
        try? FileManager.default.setAttributes([.posixPermissions: permissions], ofItemAtPath: file.path)
    }

    /// Ctrl-C or SIGTERM: with `--continue`, the download stops with resume data, kept for the next
    /// run; without it, it is cancelled and Lupine removes the partial file.
    private static func interrupt(_ request: DownloadRequest, keepingResumeDataIn resumeFile: URL?) async {
        guard let resumeFile else {
            request.cancel()
            // Lupine removes the partial file when the cancelled transfer ends.
            for _ in 0..<500 where !request.isFinished {
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            return
        }
        let resumeData: Data? = await withCheckedContinuation { continuation in
            request.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
        }
        if let resumeData {
            keep(resumeData, in: resumeFile)
        } else {
            Console.error("lupine: Interrupted; this download cannot be resumed (the response has no ETag nor Last-Modified).")
        }
    }

    /// Writes `resumeData` to `resumeFile` and says how to go on.
    private static func keep(_ resumeData: Data, in resumeFile: URL) {
        do {
            try resumeData.write(to: resumeFile, options: .atomic)
            Console.error("lupine: The download stopped; run the same command with --continue to resume it (state in \(displayPath(resumeFile))).")
        } catch {
            Console.error("lupine: Cannot keep the state of the download in \(displayPath(resumeFile)); it cannot be resumed.")
            if let partial = DownloadTarget.partialFile(in: resumeData) { try? FileManager.default.removeItem(at: partial) }
        }
    }

    /// `file` relative to the current directory when it is inside it.
    static func displayPath(_ file: URL) -> String {
        let directory = FileManager.default.currentDirectoryPath
        let path = file.standardizedFileURL.path
        return path.hasPrefix(directory + "/") ? String(path.dropFirst(directory.count + 1)) : path
    }
}
