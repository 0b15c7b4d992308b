#if !canImport(Security)
import Foundation

extension Bundle: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: Bundle {
    /// The certificates in the bundle's resources with the extensions .cer, .crt, .der and .pem
    /// (either case), DER or PEM encoded; a PEM file may hold several. Files that hold no
    /// certificate (a private key, for example) are skipped.
    public var certificates: [SecCertificate] {
        paths(forResourcesOfTypes: [".cer", ".CER", ".crt", ".CRT", ".der", ".DER", ".pem", ".PEM"])
            .sorted()
            .flatMap { path -> [SecCertificate] in
                guard let contents = FileManager.default.contents(atPath: path) else { return [] }
                return SecCertificate.certificates(fromFileContents: contents)
            }
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
