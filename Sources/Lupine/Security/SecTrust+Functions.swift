#if !canImport(Security)
import Foundation

// The Security framework's functions that pinning code (and Alamofire's own trust tests) call,
// with Apple's signatures, over Lupine's `SecTrust` stand-in.

/// Replaces the policies `trust` is evaluated with.
///
/// - Parameters:
///   - trust: The trust to change.
///   - policies: A `SecPolicy` or an array of them.
/// - Returns: `errSecSuccess`, or `errSecParam` when `policies` holds something else.
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    guard let list = SecurityValues.policies(in: policies) else { return errSecParam }
    trust.policies = list
    return errSecSuccess
}

/// Makes `anchorCertificates` the anchors `trust` accepts. As with the Security framework, they
/// are then the only ones, until `SecTrustSetAnchorCertificatesOnly(trust, false)` adds the
/// system's roots back.
///
/// - Returns: `errSecSuccess`, or `errSecParam` when the array holds something else than certificates.
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus {
    let anchors = anchorCertificates.compactMap { $0 as? SecCertificate }
    guard anchors.count == anchorCertificates.count else { return errSecParam }
    trust.state.withLockedValue { state in
        state.anchors = anchors
        state.anchorsOnly = true
    }
    return errSecSuccess
}

/// Whether the anchors set with `SecTrustSetAnchorCertificates` are the only ones `trust`
/// accepts (true) or come in addition to the system's roots (false).
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.anchorsOnly = anchorCertificatesOnly
    return errSecSuccess
}

/// Evaluates `trust` with its policies and anchors. Blocks the calling thread while the chain is
/// built.
///
/// - Parameters:
///   - trust: The trust to evaluate.
///   - error: Receives, on failure, an error in `NSOSStatusErrorDomain` (`errSecNotTrusted`,
///     `errSecCertificateExpired`, `errSecHostNameMismatch`) that names the certificate.
/// - Returns: Whether the chain is trusted.
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    let outcome = trust.evaluateNow()
    if !outcome.isSuccess { error?.pointee = outcome.error }
    return outcome.isSuccess
}

/// Evaluates `trust` and reports the result, as the deprecated Security framework function did.
///
/// - Returns: `errSecSuccess` when the evaluation ran (whatever its result), `errSecParam` when
///   the trust holds no certificate.
@available(*, deprecated, renamed: "SecTrustEvaluateWithError(_:_:)")
public func SecTrustEvaluate(_ trust: SecTrust, _ result: UnsafeMutablePointer<SecTrustResultType>) -> OSStatus {
    let outcome = trust.evaluateNow()
    result.pointee = outcome.result
    return outcome.status == errSecParam ? errSecParam : errSecSuccess
}

/// The certificate chain of `trust`, leaf first: built from the leaf, issuer by issuer, out of the
/// presented certificates, the anchors and (unless only the anchors count) the system's roots, as
/// the Security framework builds it. A presented certificate outside the leaf's chain is left
/// out; a root the trust holds but the server did not send is in.
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    trust.builtChain
}

/// The number of certificates in the chain of `trust` (see `SecTrustCopyCertificateChain(_:)`).
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex {
    trust.builtChain.count
}

/// The certificate at `ix` of the chain of `trust` (0 is the leaf), or nil past the end.
public func SecTrustGetCertificateAtIndex(_ trust: SecTrust, _ ix: CFIndex) -> SecCertificate? {
    let chain = trust.builtChain
    return chain.indices.contains(ix) ? chain[ix] : nil
}

/// The leaf certificate's public key, or nil when its algorithm is not one Lupine reads.
public func SecTrustCopyKey(_ trust: SecTrust) -> SecKey? {
    trust.certificates.first.flatMap(SecCertificateCopyKey)
}
#endif
