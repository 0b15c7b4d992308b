import Foundation
import Lupine

/// The Session a request or download command runs on, configured from its connection options.
struct SessionFactory {
    let options: ConnectionOptions
    /// The URL requested: its host is the one `--pin-cert` and `--cert` apply to.
    let url: URL
    /// Where the verbose events are delivered (the queue the output is written on).
    let queue: DispatchQueue
    let retryGate: RetryGate?

    /// - Throws: `RequestBuilder.Failure` when `--proxy`, `--pin-cert`, `--cert` or `--key` cannot
    ///   be used.
    func makeSession() throws -> Session {
        // Ephemeral: cookies live for this one command (a redirect chain keeps them), as with curl
        // without a cookie jar; the shared storage would persist them for every later run.
        let configuration = URLSessionConfiguration.af.ephemeral
        if let timeout = options.timeout {
            configuration.timeoutIntervalForRequest = timeout
            configuration.timeoutIntervalForResource = timeout
        }
        if let proxy = options.proxy {
            configuration.connectionProxyDictionary = try Self.proxy(proxy).dictionary
        }
        if let certificatePath = options.cert {
            configuration.urlCredentialStorage = try clientCertificateStorage(certificatePath: certificatePath)
        }
        var serverTrustManager: ServerTrustManager?
        if let pinPath = options.pinCert, let host = url.host {
            let pinned = try CertificateFile.certificates(at: pinPath, status: ExitStatus.pinnedCertificateProblem)
            // The pinned certificates are the anchors too, so that a self-signed or private-CA
            // server is trusted when, and only when, its chain holds one of them.
            let evaluator = PinnedCertificatesTrustEvaluator(certificates: pinned, acceptSelfSignedCertificates: true)
            serverTrustManager = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [host: evaluator])
        }
        let verbose = options.verbose ? VerboseReporter(queue: queue) : nil
        return Session(configuration: configuration,
                       interceptor: retryGate,
                       serverTrustManager: serverTrustManager,
                       redirectHandler: verbose,
                       eventMonitors: verbose.map { [$0] } ?? [])
    }

    /// `--proxy URL` as `connectionProxyDictionary` entries, and the `Proxy-Authorization` field
    /// for the credentials in its URL (Lupine hands that field to the proxy, never to the server).
    static func proxy(_ text: String) throws -> (dictionary: [AnyHashable: Any], authorization: HTTPHeader?) {
        let completed = text.contains("://") ? text : "http://" + text
        guard let components = URLComponents(string: completed), let host = components.host, !host.isEmpty,
              let scheme = components.scheme?.lowercased()
        else {
            throw RequestBuilder.Failure(status: ExitStatus.malformedURL, message: "'\(text)' is not a proxy URL.")
        }
        switch scheme {
        case "http":
            let port = components.port ?? 80
            let dictionary: [AnyHashable: Any] = ["HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port,
                                                  "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port]
            let authorization = components.user.map { user in
                HTTPHeader(name: "Proxy-Authorization",
                           value: HTTPHeader.authorization(username: user.removingPercentEncoding ?? user,
                                                           password: components.password?.removingPercentEncoding ?? "").value)
            }
            return (dictionary, authorization)
        case "socks", "socks5", "socks5h":
            return (["SOCKSEnable": 1, "SOCKSProxy": host, "SOCKSPort": components.port ?? 1080], nil)
        default:
            throw RequestBuilder.Failure(status: ExitStatus.failed,
                                         message: "Proxies are http:// or socks5:// URLs, not \(scheme)://.")
        }
    }

    /// A credential storage holding the client certificate of `--cert`/`--key` for the host requested.
    private func clientCertificateStorage(certificatePath: String) throws -> URLCredentialStorage {
        let chain = try CertificateFile.certificates(at: certificatePath, status: ExitStatus.clientCertificateProblem)
        let keyPath = options.key ?? certificatePath
        guard let key = FileManager.default.contents(atPath: keyPath) else {
            throw RequestBuilder.Failure(status: ExitStatus.clientCertificateProblem, message: "Cannot read the key file '\(keyPath)'.")
        }
        let credential: ClientCertificateCredential
        do {
            credential = try ClientCertificateCredential(certificateChain: chain, privateKey: key)
        } catch {
            throw RequestBuilder.Failure(status: ExitStatus.clientCertificateProblem,
                                         message: "The private key in '\(keyPath)' cannot be used with the certificate of '\(certificatePath)'.")
        }
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: url.host ?? "", port: url.port ?? 443, protocol: "https", realm: nil,
                                       authenticationMethod: ClientCertificateCredential.authenticationMethod)
        storage.setDefaultCredential(credential, for: space)
        return storage
    }
}
