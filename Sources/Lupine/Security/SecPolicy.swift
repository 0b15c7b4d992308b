#if !canImport(Security)
import Foundation

/// A trust policy: Lupine's stand-in for the Security framework's `SecPolicy` where that framework
/// does not exist (Linux).
///
/// Three kinds have meaning: the basic X.509 policy (chain to a trusted anchor, validity dates),
/// the SSL server policy (the same and, when it names a host, the host name or IP address against
/// the leaf's subject alternative names), and the revocation policy, which is accepted but checks
/// nothing more than the basic policy: Lupine has no CRL or OCSP client.
public struct SecPolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case basicX509
        case ssl(server: Bool, hostname: String?)
        case revocation(flags: CFOptionFlags)
    }

    let kind: Kind

    /// The host name this policy validates, if any.
    var hostname: String? {
        if case let .ssl(_, hostname) = kind { return hostname }
        return nil
    }

    public var description: String {
        switch kind {
        case .basicX509: "SecPolicy(basic X.509)"
        case let .ssl(server, hostname): "SecPolicy(SSL, server: \(server), host: \(hostname ?? "none"))"
        case let .revocation(flags): "SecPolicy(revocation, flags: \(flags))"
        }
    }
}

/// The status code type of the Security framework; `errSecSuccess` (0) means success.
public typealias OSStatus = Int32
/// The option-flags type of CoreFoundation, used by `RevocationTrustEvaluator.Options`.
public typealias CFOptionFlags = UInt

/// Success.
public let errSecSuccess: OSStatus = 0
/// The chain does not lead to a trusted anchor.
let errSecNotTrusted: OSStatus = -67843
/// A certificate of the chain is outside its validity period.
let errSecCertificateExpired: OSStatus = -67818
/// The leaf certificate does not name the host.
let errSecHostNameMismatch: OSStatus = -67602
/// The trust holds no certificate, or an argument is invalid.
let errSecParam: OSStatus = -50

/// Check revocation with OCSP.
public let kSecRevocationOCSPMethod: CFOptionFlags = 1
/// Check revocation with CRLs.
public let kSecRevocationCRLMethod: CFOptionFlags = 2
/// Prefer CRLs over OCSP.
public let kSecRevocationPreferCRL: CFOptionFlags = 4
/// Fail unless a positive revocation response arrives.
public let kSecRevocationRequirePositiveResponse: CFOptionFlags = 8
/// Do not fetch revocation information from the network.
public let kSecRevocationNetworkAccessDisabled: CFOptionFlags = 16
/// Use any available method.
public let kSecRevocationUseAnyAvailableMethod: CFOptionFlags = 3

/// The outcome of a trust evaluation, as the Security framework reports it.
public enum SecTrustResultType: UInt32, Sendable {
    /// Not evaluated.
    case invalid = 0
    /// The user chose to trust the chain.
    case proceed = 1
    /// The user chose not to trust the chain.
    case deny = 3
    /// Trusted: the chain leads to an anchor and every policy is met.
    case unspecified = 4
    /// Not trusted, for a reason the caller may override (unknown anchor, expiry, host name).
    case recoverableTrustFailure = 5
    /// Not trusted, for a reason that cannot be overridden.
    case fatalTrustFailure = 6
    /// Evaluation failed.
    case otherError = 7
}

/// The basic X.509 policy: the chain must lead to an anchor, every certificate within its
/// validity dates. No host name is checked.
public func SecPolicyCreateBasicX509() -> SecPolicy {
    SecPolicy(kind: .basicX509)
}

/// The SSL policy.
///
/// - Parameters:
///   - server: True to evaluate a server's certificate (the only kind Lupine evaluates).
///   - hostname: The host name or IP address the leaf must name, or nil to skip that check.
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: String?) -> SecPolicy {
    SecPolicy(kind: .ssl(server: server, hostname: hostname))
}

/// The revocation policy. Lupine accepts it but has no CRL or OCSP client: it checks nothing
/// beyond the SSL policy.
public func SecPolicyCreateRevocation(_ revocationFlags: CFOptionFlags) -> SecPolicy? {
    SecPolicy(kind: .revocation(flags: revocationFlags))
}
#endif
