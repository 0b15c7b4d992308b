import ArgumentParser
import Foundation
import Lupine

/// Sends one request for a request subcommand and prints the response as it arrives, through a
/// `DataStreamRequest`: the head first, then the body chunk by chunk, never held whole in memory.
struct RequestRunner {
    let method: HTTPMethod
    let options: RequestOptions

    /// Sends the request and prints the response.
    ///
    /// - Throws: an `ExitCode` (see `ExitStatus`) after writing a one-line error to standard error.
    func run() async throws {
        if options.output.download {
            try await DownloadRunner(method: method, options: options).run()
            return
        }
        guard options.output.outputFile == nil, !options.output.resume else {
            throw ValidationError("-o and -c go with a download: add --download, or use lupine download.")
        }
        let prepared = try PreparedRequest(method: method, options: options)
        let queue = DispatchQueue(label: "lupine.cli.output")
        let connection = options.connection
        let retryGate = connection.retry > 0 ? RetryGate(limit: connection.retry) { attempt, limit, delay, error in
            if connection.verbose {
                VerboseReporter.retrying(attempt: attempt, limit: limit, delay: delay, error: error, url: prepared.urlRequest.url)
            }
        } : nil
        let session = try prepared.session(queue: queue, retryGate: retryGate)
        let request = session.streamRequest(prepared.urlRequest)
        if let retryGate { request.validate(retryGate.validation(for: request)) }
        if let (user, password) = connection.credentials { request.authenticate(username: user, password: password) }

        let printer = ResponseStreamPrinter(settings: .init(output: options.output, verbose: connection.verbose,
                                                            standardOutputIsTerminal: Terminal.isTerminal(STDOUT_FILENO)),
                                            retryGate: retryGate)
        let completion: DataStreamRequest.Completion = await withCheckedContinuation { continuation in
            request.onHTTPResponse(on: queue) { [weak request] response, decide in
                guard let request else { return decide(.allow) }
                let head = request.responseHead ?? TransportResponseHead(statusCode: response.statusCode,
                                                                         headerFields: Array(response.headers))
                let contentType = head.headerFields.first { $0.name.lowercased() == "content-type" }?.value
                decide(printer.head(head, contentType: contentType, expectedLength: response.expectedContentLength, request: request))
            }
            request.responseStream(on: queue) { stream in
                switch stream.event {
                case let .stream(.success(chunk)):
                    printer.chunk(chunk)
                case let .complete(completion):
                    printer.finish()
                    continuation.resume(returning: completion)
                }
            }
        }
        withExtendedLifetime(session) {}
        let url = request.request?.url ?? prepared.urlRequest.url
        if let failed = printer.failedHead {
            Console.error("lupine: \(Endpoint(url)) answered \(ResponseHeadText.status(failed.statusCode)).")
            throw ExitStatus.exit(ExitStatus.httpError)
        }
        guard let error = completion.error else { return }
        if error.isExplicitlyCancelledError, printer.stoppedAfterHead { return }
        throw report(FailureReport(error, url: url, timeout: connection.timeout, proxy: connection.proxy), verbose: connection.verbose)
    }
}

/// Writes a failure's line (and its detail with `-v`) to standard error.
/// - Returns: the exit code to end with.
func report(_ failure: FailureReport, verbose: Bool) -> ExitCode {
    Console.error("lupine: \(failure.message)")
    if verbose, let detail = failure.detail { Console.error("lupine: detail: \(detail)") }
    return ExitStatus.exit(failure.status)
}

/// The URLRequest of a request command and the Session it goes through.
struct PreparedRequest {
    let urlRequest: URLRequest
    let options: RequestOptions

    /// - Throws: an `ExitCode` after a one-line error when the request cannot be built.
    init(method: HTTPMethod, options: RequestOptions) throws {
        self.options = options
        do {
            var urlRequest = try RequestBuilder(method: method, options: options).urlRequest()
            if let proxy = options.connection.proxy, let authorization = try SessionFactory.proxy(proxy).authorization {
                urlRequest.headers.update(authorization)
            }
            self.urlRequest = urlRequest
        } catch let failure as RequestBuilder.Failure {
            throw report(FailureReport(status: failure.status, message: failure.message), verbose: false)
        }
    }

    /// The Session for the request, its verbose events delivered on `queue`.
    /// - Throws: an `ExitCode` after a one-line error when an option cannot be used.
    func session(queue: DispatchQueue, retryGate: RetryGate?) throws -> Session {
        guard let url = urlRequest.url else { throw ExitStatus.exit(ExitStatus.malformedURL) }
        do {
            return try SessionFactory(options: options.connection, url: url, queue: queue, retryGate: retryGate).makeSession()
        } catch let failure as RequestBuilder.Failure {
            throw report(FailureReport(status: failure.status, message: failure.message), verbose: false)
        }
    }
}
