#if !canImport(Security)
import Foundation
import X509

extension SecTrust {
    /// The certificate chain as the Security framework reports it (`SecTrustCopyCertificateChain`):
    /// built from the leaf, issuer by issuer, out of the presented certificates, the anchors and
    /// (unless only the anchors count) the system's roots, up to a self-signed certificate or the
    /// first certificate whose issuer is not at hand. It is built whether or not the chain is
    /// trusted or within its dates.
    ///
    /// So a presented certificate that does not belong to the leaf's chain (a wrong intermediate)
    /// is left out, and a root the server did not send but that the trust holds (an anchor, a
    /// system root) is in: pinning a root CA works as on Apple platforms, and pinning a
    /// certificate that only happens to be sent along does not.
    var builtChain: [SecCertificate] {
        guard let leaf = certificates.first else { return [] }
        let (anchors, anchorsOnly) = state.withLockedValue { ($0.anchors, $0.anchorsOnly) }
        var candidates = Array(certificates.dropFirst()) + (anchors ?? [])
        if anchors == nil || !anchorsOnly {
            candidates += SystemTrustRoots.candidates(for: certificates).compactMap { try? SecCertificate(certificate: $0) }
        }
        var chain = [leaf]
        var current = leaf.certificate
        // A chain longer than this is not one any server presents; the bound also ends cycles.
        while chain.count < 16, current.issuer != current.subject {
            let issued = current
            guard let issuer = candidates.first(where: { candidate in
                candidate.certificate.subject == issued.issuer
                    && !chain.contains(candidate)
                    && candidate.certificate.publicKey.isValidSignature(issued.signature, for: issued)
            }) else { break }
            chain.append(issuer)
            current = issuer.certificate
        }
        return chain
    }
}
#endif
