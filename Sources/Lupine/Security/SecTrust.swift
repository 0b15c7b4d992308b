#if !canImport(Security)
import Foundation
import NIOConcurrencyHelpers

/// A server's certificate chain with the policies and anchors to evaluate it against: Lupine's
/// stand-in for the Security framework's `SecTrust` where that framework does not exist (Linux).
///
/// Lupine makes one per TLS handshake from the certificates the server presented (leaf first)
/// and hands it to `ServerTrustEvaluating.evaluate(_:forHost:)`. As on Apple platforms it is a
/// reference type: `af.setAnchorCertificates(_:)` and `af.apply(policy:)` change the trust they
/// are called on. Until anchors are set, evaluation trusts the system's roots
/// (`/etc/ssl/certs/ca-certificates.crt` and the other usual Linux locations).
public final class SecTrust: Hashable, Sendable, CustomStringConvertible {
    struct State {
        var policies: [SecPolicy]
        /// nil: the system roots.
        var anchors: [SecCertificate]?
    }

    /// The presented chain, leaf first.
    let certificates: [SecCertificate]
    let state: NIOLockedValueBox<State>

    init(certificates: [SecCertificate], policies: [SecPolicy]) {
        self.certificates = certificates
        self.state = NIOLockedValueBox(State(policies: policies, anchors: nil))
    }

    var policies: [SecPolicy] {
        get { state.withLockedValue { $0.policies } }
        set { state.withLockedValue { $0.policies = newValue } }
    }

    var anchors: [SecCertificate]? {
        get { state.withLockedValue { $0.anchors } }
        set { state.withLockedValue { $0.anchors = newValue } }
    }

    /// Evaluates the chain against every policy. Blocks the calling thread while the chain is
    /// built (see `SecTrustVerifier`).
    func evaluateNow() -> SecTrustOutcome {
        let (policies, anchors) = state.withLockedValue { ($0.policies, $0.anchors) }
        // A revocation policy adds nothing Lupine can check; SSL policies each name a host or none.
        let hostnames = policies.compactMap(\.hostname)
        return SecTrustVerifier.evaluate(certificates: certificates, anchors: anchors, hostname: hostnames.first)
    }

    public static func == (lhs: SecTrust, rhs: SecTrust) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    public var description: String {
        "SecTrust(\(certificates.map(\.description).joined(separator: ", ")))"
    }
}

/// Makes a trust for `certificates` (a `SecCertificate` or `[SecCertificate]`, leaf first)
/// evaluated with `policies` (a `SecPolicy`, `[SecPolicy]` or nil for the SSL policy without host).
///
/// - Returns: `errSecSuccess`, or `errSecParam` when `certificates` holds no certificate.
public func SecTrustCreateWithCertificates(_ certificates: Any, _ policies: Any?, _ trust: UnsafeMutablePointer<SecTrust?>) -> OSStatus {
    let chain = (certificates as? [SecCertificate]) ?? (certificates as? SecCertificate).map { [$0] } ?? []
    guard !chain.isEmpty else { return errSecParam }
    let policyList = (policies as? [SecPolicy]) ?? (policies as? SecPolicy).map { [$0] } ?? [SecPolicyCreateSSL(true, nil)]
    trust.pointee = SecTrust(certificates: chain, policies: policyList)
    return errSecSuccess
}
#endif
