import Foundation
import Lupine

/// Reads the certificates of `--pin-cert` and `--cert`: a DER file holds one, a PEM file any number
/// (each between `-----BEGIN CERTIFICATE-----` and `-----END CERTIFICATE-----`).
enum CertificateFile {
    /// The certificates in the file at `path`, in the file's order.
    /// - Throws: `RequestBuilder.Failure` with `status` when the file cannot be read or holds none.
    static func certificates(at path: String, status: Int32) throws -> [SecCertificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RequestBuilder.Failure(status: status, message: "Cannot read the certificate file '\(path)'.")
        }
        if let certificate = SecCertificateCreateWithData(nil, data) { return [certificate] }
        let text = String(decoding: data, as: UTF8.self)
        var certificates: [SecCertificate] = []
        var rest = text[...]
        while let begin = rest.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = rest[begin.upperBound...].range(of: "-----END CERTIFICATE-----") {
            let base64 = rest[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(base64)), let certificate = SecCertificateCreateWithData(nil, der) else {
                throw RequestBuilder.Failure(status: status, message: "A certificate in '\(path)' cannot be read.")
            }
            certificates.append(certificate)
            rest = rest[end.upperBound...]
        }
        guard !certificates.isEmpty else {
            throw RequestBuilder.Failure(status: status, message: "'\(path)' holds no certificate (PEM or DER).")
        }
        return certificates
    }
}
