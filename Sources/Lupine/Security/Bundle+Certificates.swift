#if !canImport(Security)
import Foundation

extension Bundle: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: Bundle {
    /// The certificates in the bundle's resources: each DER-encoded file with the extension .cer,
    /// .crt or .der (either case), as in Alamofire, plus every certificate of the files with the
    /// extension .pem (either case), which Linux tools write. Files that hold no certificate (a
    /// private key, for example), and PEM text in a .cer, .crt or .der file (which Alamofire's
    /// `SecCertificateCreateWithData` refuses too), are skipped.
    public var certificates: [SecCertificate] {
        let der = paths(forResourcesOfTypes: [".cer", ".CER", ".crt", ".CRT", ".der", ".DER"]).sorted()
            .compactMap { path in FileManager.default.contents(atPath: path).flatMap(SecCertificate.init(derData:)) }
        let pem = paths(forResourcesOfTypes: [".pem", ".PEM"]).sorted()
            .flatMap { path in FileManager.default.contents(atPath: path).map(SecCertificate.certificates(fromFileContents:)) ?? [] }
        return der + pem
    }

    /// The public keys of `certificates`.
    public var publicKeys: [SecKey] {
        certificates.af.publicKeys
    }

    /// The paths of the bundle's resources with any of the extensions in `types`, each once.
    public func paths(forResourcesOfTypes types: [String]) -> [String] {
        Array(Set(types.flatMap { type.paths(forResourcesOfType: $0, inDirectory: nil) }))
    }
}
#endif
