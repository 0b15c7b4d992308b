#if !canImport(Security)
import Foundation

extension SecPolicy: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == SecPolicy {
    /// The SSL server policy without host-name validation.
    public static let `default` = SecPolicyCreateSSL(true, nil)

    /// The SSL server policy that validates `hostname`.
    public static func hostname(_ hostname: String) -> SecPolicy {
        SecPolicyCreateSSL(true, hostname)
    }

    /// The revocation policy for `options`; see `SecPolicyCreateRevocation(_:)` for what Lupine
    /// checks.
    ///
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .revocationPolicyCreationFailed)`.
    public static func revocation(options: RevocationTrustEvaluator.Options) throws -> SecPolicy {
        guard let policy = SecPolicyCreateRevocation(options.rawValue) else {
            throw AFError.serverTrustEvaluationFailed(reason: .revocationPolicyCreationFailed)
        }
        return policy
    }
}

extension Array: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == [SecCertificate] {
    /// The DER bytes of each certificate.
    public var data: [Data] {
        type.map(SecCertificateCopyData)
    }

    /// The public keys of the certificates whose keys Lupine reads.
    public var publicKeys: [SecKey] {
        type.compactMap(\.af.publicKey)
    }
}

extension SecCertificate: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == SecCertificate {
    /// The certificate's public key, or nil when its algorithm is not one Lupine reads.
    public var publicKey: SecKey? {
        SecCertificateCopyKey(type)
    }
}

extension OSStatus: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == OSStatus {
    /// Whether the status is `errSecSuccess`.
    public var isSuccess: Bool { type == errSecSuccess }
}

extension SecTrustResultType: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == SecTrustResultType {
    /// Whether the result means trusted: `.unspecified` or `.proceed`.
    public var isSuccess: Bool { type == .unspecified || type == .proceed }
}
#endif
