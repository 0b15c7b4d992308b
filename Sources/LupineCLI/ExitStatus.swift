import ArgumentParser

/// The exit statuses of the request commands, beyond 0 (a 1xx-3xx response was printed) and
/// ArgumentParser's 64 (the command line is wrong).
enum ExitStatus {
    /// No response: invalid URL, connection refused, timeout, undecodable body...
    static let requestFailed = ExitCode(1)
    /// A 4xx response was printed.
    static let clientError = ExitCode(4)
    /// A 5xx response was printed.
    static let serverError = ExitCode(5)

    /// The status for a printed response with this status code.
    static func forStatusCode(_ statusCode: Int) -> ExitCode {
        switch statusCode {
        case 400..<500: clientError
        case 500...: serverError
        default: .success
        }
    }

    /// What `--help` says about exit statuses.
    static let help = """
        Redirects are followed. Every response is printed: the status line, the headers, a blank line \
        and the body (JSON re-indented). The exit status is 0 for a 1xx-3xx response, \
        4 for a 4xx response, 5 for a 5xx response, 1 when no response came (invalid URL, connection \
        refused, timeout...; a one-line error goes to standard error), and 64 for a wrong command line.
        """
}
