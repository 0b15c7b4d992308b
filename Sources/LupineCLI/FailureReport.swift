import Foundation
import Lupine

/// A failed request as the tool reports it: curl's exit status for the failure, one line naming the
/// host and port in the tool's own words, and the raw text of the underlying error for `-v`.
///
/// The words come from the `URLError` code and the `AFError` case, not from the error's own
/// description, which may carry the text of SwiftNIO or BoringSSL.
struct FailureReport: Equatable {
    let status: Int32
    let message: String
    /// The underlying error as the library and SwiftNIO describe it; shown with `-v` only.
    let detail: String?

    init(status: Int32, message: String, detail: String? = nil) {
        self.status = status
        self.message = message
        self.detail = detail
    }

    /// The report for `error`, from a request to `url`.
    ///
    /// - Parameters:
    ///   - url: the URL requested (the error's failing URL, a redirect's target, wins when it has one).
    ///   - timeout: the `--timeout` given, if any, to say how long was waited.
    ///   - proxy: the `--proxy` given, if any: a connection that could not be made may be the proxy's refusal.
    init(_ error: AFError, url: URL?, timeout: Double?, proxy: String? = nil) {
        switch error {
        case let .requestRetryFailed(_, originalError):
            self.init(originalError.asAFError ?? .sessionTaskFailed(error: originalError), url: url, timeout: timeout, proxy: proxy)
        case let .sessionTaskFailed(underlying):
            guard let urlError = underlying as? URLError else {
                self.init(status: ExitStatus.failed, message: "The request to \(Endpoint(url)) failed.",
                          detail: String(describing: underlying))
                return
            }
            let endpoint = Endpoint(urlError.failingURL ?? url)
            let (status, message) = Self.describe(urlError.code, endpoint: endpoint, timeout: timeout,
                                                  proxy: proxy.flatMap(URL.init(string:)).map(Endpoint.init))
            self.init(status: status, message: message, detail: Self.rawDetail(of: urlError))
        case let .serverTrustEvaluationFailed(reason):
            self.init(status: ExitStatus.tlsFailed,
                      message: "The certificate of \(Endpoint(url)) is not trusted: \(Self.describe(reason)).",
                      detail: error.errorDescription)
        case .invalidURL:
            self.init(status: ExitStatus.malformedURL, message: "'\(url?.absoluteString ?? "")' is not a URL Lupine can request.",
                      detail: error.errorDescription)
        case .explicitlyCancelled:
            self.init(status: 128 + SIGINT, message: "The request to \(Endpoint(url)) was cancelled.")
        case let .downloadedFileMoveFailed(underlying, _, destination):
            self.init(status: ExitStatus.writeError, message: "Cannot save the download as \(destination.path).",
                      detail: String(describing: underlying))
        default:
            self.init(status: ExitStatus.failed,
                      message: "The request to \(Endpoint(url)) failed: \(error.errorDescription ?? "\(error)")",
                      detail: String(describing: error))
        }
    }

    private static func describe(_ code: URLError.Code, endpoint: Endpoint, timeout: Double?, proxy: Endpoint?) -> (Int32, String) {
        switch code {
        case .cannotConnectToHost where proxy != nil:
            (ExitStatus.cannotConnect, "Cannot reach \(endpoint) through the proxy at \(proxy.map(\.description) ?? ""): "
                + "the proxy is unreachable, refused to open a tunnel there, or could not connect to it.")
        case .cannotFindHost, .dnsLookupFailed:
            (ExitStatus.cannotResolveHost, "Cannot resolve the host name \(endpoint.host) (port \(endpoint.port)).")
        case .cannotConnectToHost:
            (ExitStatus.cannotConnect, "Cannot connect to \(endpoint): the connection was refused, or the host is unreachable.")
        case .notConnectedToInternet:
            (ExitStatus.cannotConnect, "Cannot connect to \(endpoint): the network is unreachable.")
        case .timedOut:
            (ExitStatus.timedOut, timeout.map { "No complete answer from \(endpoint) within \(Self.seconds($0)) (--timeout)." }
                ?? "\(endpoint) went quiet for too long; the request timed out.")
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            (ExitStatus.tlsFailed, "The certificate of \(endpoint) is not trusted: its chain does not lead to a system root, "
                + "or it is not issued for this host name (--pin-cert FILE trusts a certificate of your own).")
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            (ExitStatus.tlsFailed, "The certificate of \(endpoint) has expired or is not valid yet.")
        case .clientCertificateRequired, .clientCertificateRejected:
            (ExitStatus.tlsFailed, "\(endpoint) wants a client certificate it accepts (--cert FILE --key FILE).")
        case .secureConnectionFailed:
            (ExitStatus.tlsFailed, "The TLS handshake with \(endpoint) failed (does it speak https on that port?).")
        case .networkConnectionLost:
            (ExitStatus.receiveFailed, "\(endpoint) closed the connection before the response was complete.")
        case .badServerResponse:
            (ExitStatus.weirdServerReply, "\(endpoint) sent a response that is not valid HTTP.")
        case .cannotDecodeContentData, .cannotDecodeRawData:
            (ExitStatus.badContentEncoding, "The body from \(endpoint) could not be decoded (Content-Encoding).")
        case .httpTooManyRedirects:
            (ExitStatus.tooManyRedirects, "Too many redirects; the last went to \(endpoint).")
        case .appTransportSecurityRequiresSecureConnection:
            (ExitStatus.failed, "A redirect from https to plain http (\(endpoint)) was refused.")
        case .unsupportedURL:
            (ExitStatus.failed, "Lupine does not request \(endpoint.scheme):// URLs; use http or https.")
        case .badURL:
            (ExitStatus.malformedURL, "The URL of \(endpoint) is not valid.")
        case .cannotOpenFile, .requestBodyStreamExhausted:
            (ExitStatus.readError, "The request body could not be read (to send it to \(endpoint)).")
        case .cannotWriteToFile:
            (ExitStatus.writeError, "The downloaded body could not be written to disk.")
        case .userAuthenticationRequired:
            (ExitStatus.failed, "The proxy refused the request to \(endpoint) without valid credentials (407).")
        case .cancelled:
            (128 + SIGINT, "The request to \(endpoint) was cancelled.")
        default:
            (ExitStatus.failed, "The request to \(endpoint) failed (URLError \(code.rawValue)).")
        }
    }

    private static func describe(_ reason: AFError.ServerTrustFailureReason) -> String {
        switch reason {
        case .certificatePinningFailed:
            return "its chain holds none of the pinned certificates"
        case .publicKeyPinningFailed:
            return "its chain holds none of the pinned keys"
        case .hostValidationFailed:
            return "it is not issued for this host name"
        case let .trustEvaluationFailed(underlying):
            switch (underlying as? NSError)?.code {
            case -67818: return "it has expired"
            case -67602: return "it is not issued for this host name"
            default: return "its chain does not lead to a trusted root"
            }
        default:
            return "the trust evaluation rejected it"
        }
    }

    /// The text the library gave for `error`, which carries the engine's own (SwiftNIO, BoringSSL).
    private static func rawDetail(of error: URLError) -> String {
        if let description = error.userInfo[NSLocalizedDescriptionKey] as? String { return description }
        if let underlying = error.userInfo[NSUnderlyingErrorKey] { return String(describing: underlying) }
        return "URLError \(error.code.rawValue)"
    }

    /// "0.5 s", "2 s".
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// The host and port a message names.
struct Endpoint: CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init(_ url: URL?) {
        scheme = url?.scheme?.lowercased() ?? "http"
        host = url?.host ?? "the server"
        port = url?.port ?? (scheme == "https" || scheme == "wss" ? 443 : 80)
    }

    /// "example.com port 443".
    var description: String { "\(host) port \(port)" }
}
