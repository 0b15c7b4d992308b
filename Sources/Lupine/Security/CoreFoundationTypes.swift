#if !canImport(Security)
import Foundation

// The CoreFoundation type names that code written for the Security framework casts to
// (`data as CFData`, `certificates as CFArray`, `"host" as CFString`, `policies as CFTypeRef`).
// Linux has no CoreFoundation types in Swift; these names stand for the Swift types such casts
// start from, so that the casts compile unchanged and the Security stand-ins receive plain values.

/// Any value handed to a Security stand-in (a certificate, a policy, or an array of them).
public typealias CFTypeRef = Any
/// An array handed to a Security stand-in.
public typealias CFArray = [Any]
/// Bytes handed to a Security stand-in.
public typealias CFData = Data
/// A string handed to a Security stand-in (a host name).
public typealias CFString = String
/// The error a trust evaluation reports, in `NSOSStatusErrorDomain`.
public typealias CFError = NSError
/// The CoreFoundation index type.
public typealias CFIndex = Int

/// Reads the Security stand-ins' values out of the loosely typed arguments the Security
/// framework's signatures take.
enum SecurityValues {
    /// The certificates in `value`: one certificate, or an array of them (anything else is skipped).
    static func certificates(in value: Any) -> [SecCertificate] {
        if let certificate = value as? SecCertificate { return [certificate] }
        if let certificates = value as? [SecCertificate] { return certificates }
        if let items = value as? [Any] { return items.compactMap { $0 as? SecCertificate } }
        return []
    }

    /// The policies in `value` (one policy or an array of them), or nil when it holds anything else.
    static func policies(in value: Any) -> [SecPolicy]? {
        if let policy = value as? SecPolicy { return [policy] }
        if let policies = value as? [SecPolicy] { return policies }
        if let items = value as? [Any] {
            let policies = items.compactMap { $0 as? SecPolicy }
            return policies.count == items.count ? policies : nil
        }
        return nil
    }
}
#endif
