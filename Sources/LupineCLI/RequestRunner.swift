import ArgumentParser
import Foundation
import Lupine

/// Sends one request for a request subcommand and prints what came back.
struct RequestRunner {
    let method: HTTPMethod
    let options: RequestOptions

    /// Sends the request and prints the response.
    ///
    /// - Throws: an `ExitCode`: `ExitStatus.requestFailed` after writing the `AFError`'s
    ///   description to standard error when no response came, else the status for the response's
    ///   status code.
    func run() async throws {
        let session = options.timeout.map(Self.session(timeout:)) ?? AF
        let encoder: any ParameterEncoder = options.json
            ? JSONParameterEncoder.default
            : URLEncodedFormParameterEncoder.default
        let request = session.request(options.url,
                                      method: method,
                                      parameters: options.parameterValues,
                                      encoder: encoder,
                                      headers: options.requestHeaders)
        let response = await request.serializingResponse(using: RawBodySerializer()).response
        switch (response.result, response.response) {
        case let (.success(body), httpResponse?):
            ResponsePrinter.print(httpResponse, body: body)
            let status = ExitStatus.forStatusCode(httpResponse.statusCode)
            if status != .success { throw status }
        case let (.failure(error), _):
            Console.error("lupine: \(error.errorDescription ?? error.localizedDescription)")
            throw ExitStatus.requestFailed
        case (.success, nil):
            Console.error("lupine: The request finished without a response.")
            throw ExitStatus.requestFailed
        }
    }

    /// A Session whose requests give up after `timeout` seconds in all (the resource timeout),
    /// and sooner when no data moves for that long (the request timeout).
    private static func session(timeout: Double) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        return Session(configuration: configuration)
    }
}
