#if !canImport(Security)
import Foundation
import SwiftASN1
import X509

/// An X.509 certificate: Lupine's stand-in for the Security framework's `SecCertificate` where
/// that framework does not exist (Linux), so that pinning code written for Apple platforms
/// compiles unchanged.
///
/// A value type over the certificate's DER bytes; two certificates are equal when their bytes
/// are. Make one with `SecCertificateCreateWithData(_:_:)`, read its bytes with
/// `SecCertificateCopyData(_:)` and its public key with `SecCertificateCopyKey(_:)`.
public struct SecCertificate: Hashable, Sendable, CustomStringConvertible {
    /// The DER encoding, exactly as received or loaded.
    let derData: Data
    /// The parsed certificate.
    let certificate: Certificate

    /// Parses DER bytes; nil when they are not one X.509 certificate.
    init?(derData: Data) {
        guard let certificate = try? Certificate(derEncoded: Array(derData)) else { return nil }
        self.derData = derData
        self.certificate = certificate
    }

    /// Wraps a parsed certificate.
    init(certificate: Certificate) throws {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        self.derData = Data(serializer.serializedBytes)
        self.certificate = certificate
    }

    /// The certificates in `contents`: every `CERTIFICATE` block of a PEM file, or the one
    /// certificate of a DER file. Blocks that do not parse are skipped.
    static func certificates(fromFileContents contents: Data) -> [SecCertificate] {
        if let certificate = SecCertificate(derData: contents) { return [certificate] }
        guard let text = String(data: contents, encoding: .utf8) else { return [] }
        let endMarker = "-----END CERTIFICATE-----"
        var certificates: [SecCertificate] = []
        var remaining = Substring(text)
        while let begin = remaining.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = remaining.range(of: endMarker, range: begin.upperBound..<remaining.endIndex) {
            let block = String(remaining[begin.lowerBound..<end.upperBound])
            if let parsed = try? Certificate(pemEncoded: block), let certificate = try? SecCertificate(certificate: parsed) {
                certificates.append(certificate)
            }
            remaining = remaining[end.upperBound...]
        }
        return certificates
    }

    public static func == (lhs: SecCertificate, rhs: SecCertificate) -> Bool {
        lhs.derData == rhs.derData
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(derData)
    }

    /// The subject, for diagnostics.
    public var description: String {
        "SecCertificate(\(certificate.subject))"
    }
}

/// Parses a DER-encoded X.509 certificate.
///
/// - Parameters:
///   - allocator: Ignored; present for source compatibility with the Security framework.
///   - data: The certificate's DER bytes.
/// - Returns: The certificate, or nil when `data` is not a DER-encoded X.509 certificate.
public func SecCertificateCreateWithData(_ allocator: Any?, _ data: Data) -> SecCertificate? {
    SecCertificate(derData: data)
}

/// The DER bytes of `certificate`.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> Data {
    certificate.derData
}

/// The public key of `certificate`, or nil when its algorithm is not one Lupine reads
/// (RSA, P-256, P-384, P-521 and Ed25519 are).
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    SecKey(subjectPublicKeyInfo: Data(certificate.certificate.publicKey.subjectPublicKeyInfoBytes))
}
#endif
