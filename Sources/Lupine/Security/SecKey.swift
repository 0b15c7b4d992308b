#if !canImport(Security)
import Foundation

/// A public key: Lupine's stand-in for the Security framework's `SecKey` where that framework
/// does not exist (Linux).
///
/// A value type over the key's DER-encoded SubjectPublicKeyInfo; two keys are equal when those
/// bytes are, which is what `PublicKeysTrustEvaluator` compares. Get one from a certificate with
/// `SecCertificateCopyKey(_:)` or `certificate.af.publicKey`.
public struct SecKey: Hashable, Sendable, CustomStringConvertible {
    /// DER-encoded SubjectPublicKeyInfo (algorithm and key).
    let subjectPublicKeyInfo: Data

    init?(subjectPublicKeyInfo: Data) {
        guard !subjectPublicKeyInfo.isEmpty else { return nil }
        self.subjectPublicKeyInfo = subjectPublicKeyInfo
    }

    /// The key's size and a short fingerprint, for diagnostics.
    public var description: String {
        let prefix = HexEncoding.lowercase(subjectPublicKeyInfo.suffix(8))
        return "SecKey(\(subjectPublicKeyInfo.count) bytes SPKI, ...\(prefix))"
    }
}
#endif
