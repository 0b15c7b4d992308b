/// The shared Session, `Session.default`: what `AF.request(...)` uses. It lives for the whole process.
public let AF = Session.default

/// Information about the library.
public enum AFInfo {
    /// Lupine's version; the default User-Agent ends in `Lupine/<version>`.
    public static let version = "0.1.0"
}

/// The result type used throughout Lupine.
public typealias AFResult<Success> = Result<Success, AFError>

/// A dictionary of parameters for a `ParameterEncoding`.
public typealias Parameters = [String: any Any & Sendable]
