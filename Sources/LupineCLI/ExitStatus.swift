import ArgumentParser

/// The exit statuses of the request and download commands: curl's numbers for the same failures,
/// so that scripts written around curl read them the same way.
enum ExitStatus {
    /// Any failure without a more precise status below (curl's 1 is an unsupported scheme, which
    /// is one of them).
    static let failed: Int32 = 1
    /// The URL cannot be parsed.
    static let malformedURL: Int32 = 3
    /// The host name does not resolve.
    static let cannotResolveHost: Int32 = 6
    /// Nothing accepted the connection (refused, unreachable).
    static let cannotConnect: Int32 = 7
    /// The server's answer is not valid HTTP.
    static let weirdServerReply: Int32 = 8
    /// `--fail` and a response status of 400 or more.
    static let httpError: Int32 = 22
    /// Standard output or the downloaded file could not be written (a closed pipe among others).
    static let writeError: Int32 = 23
    /// The request body (a file, standard input) could not be read.
    static let readError: Int32 = 26
    /// The request took longer than `--timeout` (or went quiet for too long).
    static let timedOut: Int32 = 28
    /// `--continue` could not resume: the server sent a range that does not continue the file.
    static let resumeFailed: Int32 = 33
    /// The TLS handshake failed, or the server's certificate was not trusted.
    static let tlsFailed: Int32 = 35
    /// More redirects than allowed.
    static let tooManyRedirects: Int32 = 47
    /// The server sent nothing, or closed the connection before the response was complete.
    static let receiveFailed: Int32 = 56
    /// The client certificate or key given with `--cert`/`--key` cannot be used.
    static let clientCertificateProblem: Int32 = 58
    /// The response body's content coding could not be decoded.
    static let badContentEncoding: Int32 = 61
    /// The certificate file given with `--pin-cert` cannot be used.
    static let pinnedCertificateProblem: Int32 = 77

    /// Ends the command with `status`.
    static func exit(_ status: Int32) -> ExitCode {
        ExitCode(status)
    }

    /// What `--help` says about exit statuses.
    static let help = """
        Exit status, as curl's: 0 when a response came (any status, unless --fail), 22 for a \
        status of 400 or more with --fail, 6 when the host name does not resolve, 7 when nothing \
        accepts the connection, 8 when the answer is not valid HTTP, 28 on a timeout, 35 when TLS fails, 47 after too many redirects, \
        56 when the connection breaks during the response, 23 when the output cannot be written \
        (a closed pipe ends the command quietly with 23), 26 when the request body cannot be read, \
        3 for a malformed URL, 1 for any other failure, 64 for a wrong command line, 130 after \
        Ctrl-C. Errors are one line on standard error.
        """
}
