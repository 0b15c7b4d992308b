import Foundation

/// The certificate of S9's HTTP/2 server: compare.sh makes a self-signed one for 127.0.0.1, starts
/// `lupine serve` with it and names its PEM file in LUPINE_BENCH_TLS_CERTIFICATE. Each client
/// trusts it the way its users would trust a private server's certificate, never by turning
/// verification off.
public enum BenchmarkCertificate {
    /// The environment variable that names the PEM file.
    public static let environmentKey = "LUPINE_BENCH_TLS_CERTIFICATE"

    /// The PEM file's path, or nil when none is named.
    public static var path: String? {
        ProcessInfo.processInfo.environment[environmentKey].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The DER bytes of each certificate in the PEM file at `path`; empty when it holds none or
    /// cannot be read.
    public static func derCertificates(atPath path: String) -> [Data] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var certificates: [Data] = []
        var base64: String?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line == "-----BEGIN CERTIFICATE-----" {
                base64 = ""
            } else if line == "-----END CERTIFICATE-----" {
                if let encoded = base64, let der = Data(base64Encoded: encoded) { certificates.append(der) }
                base64 = nil
            } else if base64 != nil {
                base64? += line
            }
        }
        return certificates
    }
}
