import Foundation

/// The hosts that are reached directly although a proxy is configured: the `no_proxy` variable or
/// the `ExceptionsList` of a proxy dictionary.
///
/// Entries are separated by commas or white space and compared case-insensitively:
/// - `*` alone bypasses the proxy for every host;
/// - `example.com` or `.example.com` matches `example.com` and every name under it
///   (`api.example.com`), as curl reads them; `*.example.com` likewise;
/// - an IP address matches that address only (IPv6 with or without brackets);
/// - `host:port` (or `[v6]:port`) matches only URLs on that port.
struct ProxyBypassList: Sendable, Equatable {
    private struct Entry: Sendable, Equatable {
        /// Lowercased, without leading dots or `*.`, without brackets or a trailing dot.
        let host: String
        let port: Int?
    }

    private var bypassesEverything = false
    private var entries: [Entry] = []

    /// Nothing is bypassed.
    static let empty = ProxyBypassList(entries: [])

    /// Parses a `no_proxy` value.
    init(_ list: String) {
        self.init(entries: list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init))
    }

    /// Parses a list of entries, as in a proxy dictionary's `ExceptionsList`.
    init(entries list: [String]) {
        for raw in list {
            let entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if entry == "*" { bypassesEverything = true; continue }
            guard let parsed = Self.entry(from: entry) else { continue }
            entries.append(parsed)
        }
    }

    private static func entry(from text: String) -> Entry? {
        var host = Substring(text)
        var port: Int?
        if host.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
            host = host[host.index(after: host.startIndex)..<close]
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            port = Int(host[host.index(after: colon)...])
            host = host[..<colon]
        }
        if host.hasPrefix("*.") { host = host.dropFirst(2) }
        while host.hasPrefix(".") { host = host.dropFirst() }
        while host.hasSuffix(".") { host = host.dropLast() }
        guard !host.isEmpty else { return nil }
        return Entry(host: String(host), port: port)
    }

    /// Whether `host` on `port` is reached directly.
    func bypasses(host rawHost: String, port: Int) -> Bool {
        if bypassesEverything { return true }
        var host = Substring(rawHost.lowercased())
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        while host.hasSuffix(".") { host = host.dropLast() }
        return entries.contains { entry in
            if let entryPort = entry.port, entryPort != port { return false }
            return host == entry.host || host.hasSuffix("." + entry.host)
        }
    }

    /// Whether `host` is a loopback name or address: `localhost`, a name under `localhost`,
    /// `127.0.0.0/8` or `::1`.
    static func isLoopback(_ rawHost: String) -> Bool {
        var host = Substring(rawHost.lowercased())
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        while host.hasSuffix(".") { host = host.dropLast() }
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
