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
        /// nil: the system roots only.
        var anchors: [SecCertificate]?
        /// With anchors set: whether they are the only ones (true, the Security framework's
        /// default once anchors are set) or come in addition to the system roots.
        var anchorsOnly = true
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

    var anchorsOnly: Bool {
        get { state.withLockedValue { $0.anchorsOnly } }
        set { state.withLockedValue { $0.anchorsOnly = newValue } }
    }

    /// Evaluates the chain against every policy. Blocks the calling thread while the chain is
    /// built (see `SecTrustVerifier`).
    ///
    /// Every policy checks the chain (to an anchor, within its dates); an SSL policy that names a
    /// host also checks the leaf names it, and every named host must pass, as with the Security
    /// framework. A revocation policy adds nothing Lupine can check.
    func evaluateNow() -> SecTrustOutcome {
        let (policies, anchors, anchorsOnly) = state.withLockedValue { ($0.policies, $0.anchors, $0.anchorsOnly) }
        return SecTrustVerifier.evaluate(certificates: certificates,
                                         anchors: anchors,
                                         includesSystemRoots: anchors == nil || !anchorsOnly,
                                         hostnames: policies.compactMap(\.hostname))
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

/// Makes a trust for `certificates` (a `SecCertificate` or an array of them, leaf first)
/// evaluated with `policies` (a `SecPolicy`, an array of them, or nil for the SSL policy without host).
///
/// - Returns: `errSecSuccess`, or `errSecParam` when `certificates` holds no certificate or
///   `policies` holds something else than policies.
public func SecTrustCreateWithCertificates(_ certificates: CFTypeRef, _ policies: CFTypeRef?, _ trust: UnsafeMutablePointer<SecTrust?>) -> OSStatus {
    let chain = SecurityValues.certificates(in: certificates)
    guard !chain.isEmpty else { return errSecParam }
    let policyList: [SecPolicy]
    if let policies {
        guard let list = SecurityValues.policies(in: policies) else { return errSecParam }
        policyList = list
    } else {
        policyList = [SecPolicyCreateSSL(true, nil)]
    }
    trust.pointee = SecTrust(certificates: chain, policies: policyList)
    return errSecSuccess
}
#endif
