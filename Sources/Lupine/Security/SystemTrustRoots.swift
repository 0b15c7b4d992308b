#if !canImport(Security)
import Foundation
import SwiftASN1
import X509

/// The system's trusted root certificates, read from the usual Linux bundle files.
///
/// Only the DER bytes are kept; a root is parsed when a chain names it as an issuer. Parsing the
/// whole bundle up front (swift-certificates' `CertificateStore.systemTrustRoots`) costs seconds
/// in debug builds, on the threads Swift concurrency needs for everything else.
enum SystemTrustRoots {
    /// Where Linux distributions keep the PEM bundle, in the order they are tried.
    private static let bundlePaths = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ]

    /// The DER bytes of every root in the first bundle found.
    private static let roots: [Data] = {
        for path in bundlePaths {
            guard let contents = FileManager.default.contents(atPath: path),
                  let text = String(data: contents, encoding: .utf8) else { continue }
            return pemBlocks(in: text)
        }
        return []
    }()

    private static func pemBlocks(in text: String) -> [Data] {
        var blocks: [Data] = []
        var remaining = Substring(text)
        while let begin = remaining.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = remaining.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<remaining.endIndex) {
            let base64 = remaining[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
            if let der = Data(base64Encoded: String(base64)) { blocks.append(der) }
            remaining = remaining[end.upperBound...]
        }
        return blocks
    }

    /// The roots whose encoding contains the issuer name of a certificate of `chain`: the only
    /// ones a path from `chain` can end at.
    static func candidates(for chain: [SecCertificate]) -> [Certificate] {
        let issuerNames: [Data] = chain.compactMap { certificate in
            var serializer = DER.Serializer()
            guard (try? serializer.serialize(certificate.certificate.issuer)) != nil else { return nil }
            return Data(serializer.serializedBytes)
        }
        return roots
            .filter { root in issuerNames.contains { root.range(of: $0) != nil } }
            .compactMap { try? Certificate(derEncoded: Array($0)) }
    }
}
#endif
