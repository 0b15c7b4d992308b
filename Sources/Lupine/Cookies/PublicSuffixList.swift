import Foundation

/// The rules of the Public Suffix List (publicsuffix.org) and its algorithm: which part of a
/// domain is a public suffix, under which anyone may register a name ("com", "co.uk",
/// "github.io").
///
/// Rules are of three kinds: a plain rule names a suffix ("co.uk"), a wildcard rule makes every
/// label under a suffix one too ("*.ck"), and an exception rule takes a name back out of a
/// wildcard ("!www.ck"). A domain's public suffix comes from the rule that prevails among those
/// that match it: an exception rule, less its leftmost label; else the matching rule with the
/// most labels; else the default rule `*`, so that a domain no rule names has its last label as
/// its public suffix. Both sections of the list, ICANN's and the private domains, apply, as in
/// browsers.
///
/// Rules and domains are compared in ASCII, lowercased, with internationalized labels in their
/// `xn--` form (see `Punycode`).
struct PublicSuffixList: Sendable {
    /// Plain rules ("co.uk"). The list lives as long as the process: its rules are kept compact.
    private let plainRules: SortedByteStringSet
    /// Wildcard rules "*.X", stored as "X".
    private let wildcardParents: SortedByteStringSet
    /// Exception rules "!X", stored as "X".
    private let exceptions: SortedByteStringSet
    /// Rules with a wildcard other than as their leftmost label, label by label (the list holds
    /// none today; its format allows them).
    private let otherPatterns: [[Substring]]

    /// How many rules the list holds.
    let ruleCount: Int

    /// The list that holds only the default rule `*`: every single-label domain is a public suffix.
    init() {
        self.init(RuleCollector(listByteCount: 0))
    }

    /// The rules of a list in the Public Suffix List's format: one rule per line, read up to the
    /// first space or tab; empty lines and lines starting with `//` are skipped.
    init(listText: String) {
        // Read as bytes: the list is some 10,000 lines, read as a request is prepared. Lines
        // without capitals and outside ASCII (nearly all) become rules as they are.
        var text = listText
        var collector = RuleCollector(listByteCount: text.utf8.count)
        text.withUTF8 { bytes in
            var lineStart = 0
            while lineStart < bytes.count {
                var lineEnd = lineStart
                while lineEnd < bytes.count, bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
                collector.add(UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd]))
                lineStart = lineEnd + 1
            }
        }
        self.init(collector)
    }

    private init(_ collector: RuleCollector) {
        plainRules = SortedByteStringSet(collector.plainRules)
        wildcardParents = SortedByteStringSet(collector.wildcardParents)
        exceptions = SortedByteStringSet(collector.exceptions)
        otherPatterns = collector.otherPatterns
        ruleCount = collector.ruleCount
    }
}

/// The rules of a list as its lines are read, sorted by kind.
private struct RuleCollector {
    var plainRules: SortedByteStringSet.Builder
    var wildcardParents = SortedByteStringSet.Builder()
    var exceptions = SortedByteStringSet.Builder()
    var otherPatterns: [[Substring]] = []
    var ruleCount = 0

    /// A collector for a list of `listByteCount` bytes: the real list has one rule per 25 bytes
    /// or so (comments included), of 11 bytes on average.
    init(listByteCount: Int) {
        plainRules = SortedByteStringSet.Builder(byteCount: listByteCount / 2, count: listByteCount / 20)
    }

    /// Adds the rule of one line: its text up to the first space, tab or CR.
    mutating func add(_ line: UnsafeBufferPointer<UInt8>) {
        var end = 0
        var isPlainASCII = true
        var hasWildcard = false
        while end < line.count {
            let byte = line[end]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") { break }
            if byte >= 0x80 || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) { isPlainASCII = false }
            if byte == UInt8(ascii: "*") { hasWildcard = true }
            end += 1
        }
        guard end > 0, !(end > 1 && line[0] == UInt8(ascii: "/") && line[1] == UInt8(ascii: "/")) else { return }
        let isException = line[0] == UInt8(ascii: "!")
        let text = String(decoding: UnsafeBufferPointer(rebasing: line[(isException ? 1 : 0)..<end]), as: UTF8.self)
        guard let canonical = isPlainASCII ? Self.checkedLabels(text) : PublicSuffixList.canonical(text) else { return }
        ruleCount += 1
        if isException {
            exceptions.insert(canonical)
        } else if !hasWildcard {
            plainRules.insert(canonical)
        } else if canonical.hasPrefix("*."), !canonical.dropFirst(2).contains("*") {
            wildcardParents.insert(String(canonical.dropFirst(2)))
        } else {
            otherPatterns.append(canonical.split(separator: ".", omittingEmptySubsequences: false))
        }
    }

    /// `domain` when none of its labels is empty.
    private static func checkedLabels(_ domain: String) -> String? {
        let utf8 = domain.utf8
        let dot = UInt8(ascii: ".")
        guard utf8.first != dot, utf8.last != dot, !utf8.isEmpty else { return nil }
        var previous: UInt8 = 0
        for byte in utf8 {
            if byte == dot, previous == dot { return nil }
            previous = byte
        }
        return domain
    }
}

extension PublicSuffixList {
    // MARK: The algorithm

    /// The public suffix of `domain` (canonical: see `canonical(_:)`); nil when it has an empty
    /// label.
    func publicSuffix(of domain: String) -> String? {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.isEmpty, !labels.contains(where: \.isEmpty) else { return nil }
        var prevailing = 1
        for count in 1...labels.count {
            let candidate = labels.suffix(count).joined(separator: ".")
            if exceptions.contains(candidate) {
                // An exception prevails over every other rule; the suffix is the rule less its
                // leftmost label.
                return labels.suffix(count - 1).joined(separator: ".")
            }
            let parent = count > 1 ? labels.suffix(count - 1).joined(separator: ".") : nil
            if plainRules.contains(candidate) || parent.map({ wildcardParents.contains($0) }) == true
                || otherPatterns.contains(where: { Self.pattern($0, matches: labels.suffix(count)) }) {
                prevailing = count
            }
        }
        return labels.suffix(prevailing).joined(separator: ".")
    }

    /// Whether `domain` (canonical) is itself a public suffix.
    func isPublicSuffix(_ domain: String) -> Bool {
        publicSuffix(of: domain) == domain
    }

    /// Whether a rule's labels match a domain's labels of the same count (`*` matches any label).
    private static func pattern(_ pattern: [Substring], matches labels: ArraySlice<Substring>) -> Bool {
        pattern.count == labels.count && zip(pattern, labels).allSatisfy { $0 == "*" || $0 == $1 }
    }

    /// `domain` in the form rules and hosts are compared in: lowercased, without a trailing dot,
    /// internationalized labels in their `xn--` form. Nil when it has an empty label.
    static func canonical<Text: StringProtocol>(_ domain: Text) -> String? {
        var text = Substring(domain.lowercased())
        if text.hasSuffix(".") { text = text.dropLast() }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.isEmpty, !labels.contains(where: \.isEmpty) else { return nil }
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return String(text) }
        var encoded: [String] = []
        for label in labels {
            guard let ascii = Punycode.asciiLabel(label) else { return nil }
            encoded.append(ascii)
        }
        return encoded.joined(separator: ".")
    }
}

// MARK: Where the list comes from

extension PublicSuffixList {
    /// Where Debian-family systems install the list (the `publicsuffix` package).
    static let systemListPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The environment variable that names another list file, read once, when the list is first
    /// needed.
    static let pathEnvironmentVariable = "LUPINE_PUBLIC_SUFFIX_LIST"

    /// The list of the process: the file `LUPINE_PUBLIC_SUFFIX_LIST` names, else the system's.
    ///
    /// Read once, on first use: `Session` touches it as it sends a request that could store
    /// cookies (on the Session's queues), so that the transport's thread, which stores the
    /// cookies of a response, never reads the file.
    static let shared = PublicSuffixList(environment: ProcessInfo.processInfo.environment)

    /// The list read from the file `environment` names in `LUPINE_PUBLIC_SUFFIX_LIST` (when set
    /// and not empty), else from `systemListPath`; with no readable file, the list of the default
    /// rule alone.
    init(environment: [String: String]) {
        let named = environment[Self.pathEnvironmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let data = FileManager.default.contents(atPath: named ?? Self.systemListPath) else {
            self.init()
            return
        }
        self.init(listText: String(decoding: data, as: UTF8.self))
    }
}
