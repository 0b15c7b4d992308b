import Foundation

extension HTTPHeaders {
    /// The headers Lupine sends by default: `Accept-Encoding`, `Accept-Language` and `User-Agent`,
    /// in that order.
    public static let `default`: HTTPHeaders = [
        .defaultAcceptEncoding,
        .defaultAcceptLanguage,
        .defaultUserAgent,
    ]
}

extension HTTPHeader {
    /// `Accept-Encoding: br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7`: the codings Lupine
    /// decodes, most preferred first, with q-values in Alamofire's style.
    ///
    /// Brotli and zstd are decoded through libbrotlidec and libzstd, loaded when first needed; a
    /// process without one of them leaves its coding out (without zstd the value is Alamofire's
    /// own, `br;q=1.0, gzip;q=0.9, deflate;q=0.8`). The engine sends the same value when a request
    /// has no `Accept-Encoding` at all. See <doc:ContentCodings>.
    public static let defaultAcceptEncoding: HTTPHeader = .acceptEncoding(ContentDecoderRegistry.standard.acceptEncoding)

    /// `Accept-Language` built from the first six of `Locale.preferredLanguages`, with q-values
    /// falling by 0.1 from 1.0 (for example `en;q=1.0, fr;q=0.9`).
    public static let defaultAcceptLanguage: HTTPHeader = .acceptLanguage(
        Locale.preferredLanguages.prefix(6).qualityEncoded()
    )

    /// `User-Agent` describing the running program, the OS and Lupine.
    ///
    /// The format is `<executable>/<appVersion> (<bundleID>; build:<appBuild>; <osName> <osVersion>)
    /// Lupine/<AFInfo.version>`, for example
    /// `server/Unknown (Unknown; build:Unknown; Linux 6.8.0) Lupine/0.1.0`. The executable is the
    /// bundle's `CFBundleExecutable`, else the last path component of the process's first argument;
    /// bundle values missing from the main bundle's Info dictionary (always so on Linux) are
    /// `Unknown`. The OS version is `ProcessInfo.operatingSystemVersion` (the kernel version on Linux).
    public static let defaultUserAgent: HTTPHeader = .userAgent(makeDefaultUserAgent())

    static func makeDefaultUserAgent(
        infoDictionary: [String: Any]? = Bundle.main.infoDictionary,
        arguments: [String] = ProcessInfo.processInfo.arguments,
        operatingSystemVersion version: OperatingSystemVersion = ProcessInfo.processInfo.operatingSystemVersion
    ) -> String {
        let executable = (infoDictionary?["CFBundleExecutable"] as? String)
            ?? arguments.first?.split(separator: "/").last.map(String.init)
            ?? "Unknown"
        let bundleIdentifier = infoDictionary?["CFBundleIdentifier"] as? String ?? "Unknown"
        let appVersion = infoDictionary?["CFBundleShortVersionString"] as? String ?? "Unknown"
        let appBuild = infoDictionary?["CFBundleVersion"] as? String ?? "Unknown"
        let osVersion = "\(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"

        return "\(executable)/\(appVersion) (\(bundleIdentifier); build:\(appBuild); \(operatingSystemName) \(osVersion))"
            + " Lupine/\(AFInfo.version)"
    }

    static var operatingSystemName: String {
        #if os(iOS)
            #if targetEnvironment(macCatalyst)
                return "macOS(Catalyst)"
            #else
                return "iOS"
            #endif
        #elseif os(watchOS)
            return "watchOS"
        #elseif os(tvOS)
            return "tvOS"
        #elseif os(macOS)
            #if targetEnvironment(macCatalyst)
                return "macOS(Catalyst)"
            #else
                return "macOS"
            #endif
        #elseif os(visionOS)
            return "visionOS"
        #elseif os(Linux)
            return "Linux"
        #elseif os(Windows)
            return "Windows"
        #elseif os(Android)
            return "Android"
        #elseif os(WASI)
            return "WASI"
        #else
            return "Unknown"
        #endif
    }
}

extension Collection<String> {
    /// The strings joined by `", "`, each with a q-value of `1.0 - index * 0.1` printed as a `Double`.
    func qualityEncoded() -> String {
        enumerated().map { index, token in
            let quality = 1.0 - Double(index) * 0.1
            return "\(token);q=\(quality)"
        }.joined(separator: ", ")
    }
}
