import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// The Public Suffix List's algorithm (publicsuffix.org, "Formal algorithm"), the Punycode form of
/// its internationalized rules (RFC 3492), where the list is read from, and how the cookie jar
/// applies it.
@Suite struct PublicSuffixListTests {
    /// Rules of each kind, in the list's format.
    private static let list = PublicSuffixList(listText: """
        // A comment, then an empty line.

        com
        co.uk  trailing text is ignored
        *.ck
        !www.ck
        *.kawasaki.jp
        !city.kawasaki.jp
        kawasaki.jp
        公司.cn
        a.*.test
        """)

    @Test func plainRulesAndTheDefaultRule() {
        #expect(Self.list.ruleCount == 9)
        #expect(Self.list.publicSuffix(of: "example.com") == "com")
        #expect(Self.list.publicSuffix(of: "a.b.example.com") == "com")
        #expect(Self.list.publicSuffix(of: "shop.example.co.uk") == "co.uk")
        #expect(Self.list.publicSuffix(of: "uk") == "uk")
        // No rule names "example": the default rule `*` makes its last label the suffix.
        #expect(Self.list.publicSuffix(of: "a.b.example") == "example")
        #expect(Self.list.isPublicSuffix("example"))
        #expect(!Self.list.isPublicSuffix("a.example"))
        #expect(Self.list.publicSuffix(of: "a..com") == nil)
    }

    @Test func wildcardRulesAndTheirExceptions() {
        #expect(Self.list.publicSuffix(of: "a.other.ck") == "other.ck")
        #expect(Self.list.isPublicSuffix("other.ck"))
        // "*.ck" does not match "ck" itself: the default rule does.
        #expect(Self.list.publicSuffix(of: "ck") == "ck")
        #expect(Self.list.publicSuffix(of: "www.ck") == "ck")
        #expect(Self.list.publicSuffix(of: "a.www.ck") == "ck")
        #expect(!Self.list.isPublicSuffix("www.ck"))
        #expect(Self.list.publicSuffix(of: "a.b.kawasaki.jp") == "b.kawasaki.jp")
        #expect(Self.list.publicSuffix(of: "www.city.kawasaki.jp") == "kawasaki.jp")
        #expect(Self.list.publicSuffix(of: "city.kawasaki.jp") == "kawasaki.jp")
    }

    @Test func wildcardInsideARuleMatchesOneLabel() {
        #expect(Self.list.publicSuffix(of: "x.a.b.test") == "a.b.test")
        #expect(Self.list.publicSuffix(of: "x.b.a.test") == "test")
    }

    @Test func internationalizedRulesAreComparedInTheirASCIIForm() {
        #expect(Self.list.isPublicSuffix("xn--55qx5d.cn"))
        #expect(Self.list.publicSuffix(of: "shop.xn--55qx5d.cn") == "xn--55qx5d.cn")
        #expect(PublicSuffixList.canonical("Shop.公司.CN.") == "shop.xn--55qx5d.cn")
        #expect(PublicSuffixList.canonical("a..b") == nil)
    }

    /// RFC 3492's and IDNA's well-known encodings.
    @Test func punycodeEncodesAsRFC3492() {
        #expect(Punycode.asciiLabel("bücher") == "xn--bcher-kva")
        #expect(Punycode.asciiLabel("münchen") == "xn--mnchen-3ya")
        #expect(Punycode.asciiLabel("公司") == "xn--55qx5d")
        #expect(Punycode.asciiLabel("他们为什么不说中文") == "xn--ihqwcrb4cv8a8dqg056pqjye")
        #expect(Punycode.asciiLabel("example") == "example")
    }

    // MARK: Where the list comes from

    @Test func environmentVariableNamesTheListFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("psl-\(UUID().uuidString).dat")
        try Data("// mine\nexample\n*.test\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let list = PublicSuffixList(environment: [PublicSuffixList.pathEnvironmentVariable: file.path])
        #expect(list.ruleCount == 2)
        #expect(list.isPublicSuffix("shop.test"))
        #expect(!list.isPublicSuffix("a.example"))
    }

    @Test func withoutAReadableListOnlyTheDefaultRuleHolds() {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-list-\(UUID().uuidString)").path
        let list = PublicSuffixList(environment: [PublicSuffixList.pathEnvironmentVariable: missing])
        #expect(list.ruleCount == 0)
        #expect(list.isPublicSuffix("invalid"))
        #expect(!list.isPublicSuffix("co.uk"))
    }

    @Test func systemListIsReadWhenNoFileIsNamed() {
        let list = PublicSuffixList(environment: [:])
        let installed = FileManager.default.fileExists(atPath: PublicSuffixList.systemListPath)
        #expect((list.ruleCount > 0) == installed)
        if installed {
            #expect(list.isPublicSuffix("co.uk"))
            #expect(list.isPublicSuffix("github.io"))
            #expect(!list.isPublicSuffix("example.co.uk"))
        }
    }

    // MARK: The jar

    private static func jar(_ list: PublicSuffixList = Self.list) -> CookieJar {
        let storage = URLSessionConfiguration.ephemeral.httpCookieStorage ?? HTTPCookieStorage.shared
        return CookieJar(storage: storage, acceptPolicy: .always, publicSuffixes: list)
    }

    private static func url(_ text: String) -> URL {
        URL(string: text) ?? URL(fileURLWithPath: "/")
    }

    @Test func jarIgnoresADomainThatIsAPublicSuffixOfItsList() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=co.uk", "b=2; Domain=other.ck", "c=3; Domain=www.ck"],
                  from: Self.url("http://shop.example.co.uk/"), mainDocumentURL: nil)
        jar.store(["d=4; Domain=other.ck", "e=5; Domain=www.ck"], from: Self.url("http://a.www.ck/"), mainDocumentURL: nil)
        jar.store(["f=6; Domain=other.ck"], from: Self.url("http://a.other.ck/"), mainDocumentURL: nil)
        #expect(jar.storage.cookies?.map(\.name) == ["e"])
        #expect(jar.cookies(for: Self.url("http://b.www.ck/")).map(\.name) == ["e"])
    }

    @Test func jarMakesAHostOnlyCookieOfADomainThatIsTheHostAndAPublicSuffix() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=CO.UK"], from: Self.url("http://co.uk/"), mainDocumentURL: nil)
        #expect(jar.storage.cookies?.map(\.domain) == ["co.uk"])
        #expect(jar.cookies(for: Self.url("http://shop.co.uk/")).isEmpty)
    }

    /// RFC 6265: a Domain attribute naming the host itself (not a public suffix) makes a domain
    /// cookie, sent to the host's subdomains too.
    @Test func jarMakesADomainCookieOfADomainThatIsTheHost() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=www.example.com"], from: Self.url("http://www.example.com/"), mainDocumentURL: nil)
        #expect(jar.storage.cookies?.map(\.domain) == [".www.example.com"])
        #expect(jar.cookies(for: Self.url("http://api.www.example.com/")).map(\.name) == ["a"])
    }

    @Test func jarTakesAnInternationalizedDomainInItsASCIIForm() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=example.公司.cn", "b=2; Domain=公司.cn"], from: Self.url("http://shop.example.xn--55qx5d.cn/"),
                  mainDocumentURL: nil)
        #expect(jar.storage.cookies?.map(\.domain) == [".example.xn--55qx5d.cn"])
    }

    @Test func jarTakesADomainOnAnIPAddressOnlyWhenItIsThatAddress() {
        let jar = Self.jar()
        jar.store(["a=1; Domain=10.0.0.1", "b=2; Domain=0.0.1", "c=3; Domain=1", "d=4; Domain=10.0.0.2"],
                  from: Self.url("http://10.0.0.1/"), mainDocumentURL: nil)
        jar.store(["e=5; Domain=::1"], from: Self.url("http://[::1]/"), mainDocumentURL: nil)
        #expect(Set(jar.storage.cookies?.map(\.name) ?? []) == ["a", "e"])
        #expect(jar.storage.cookies?.first { $0.name == "a" }?.domain == "10.0.0.1")
    }

    @Test func jarAppliesTheCookiePrefixes() {
        let jar = Self.jar()
        let secure = Self.url("https://www.example.com/account")
        jar.store(["__Secure-a=1; Secure", "__Secure-b=2", "__Host-c=3; Secure; Path=/", "__Host-d=4; Secure",
                   "__Host-e=5; Secure; Path=/; Domain=www.example.com", "__host-f=6; Path=/", "__HOST-g=7; Secure; Path=/"],
                  from: secure, mainDocumentURL: nil)
        jar.store(["__Secure-h=8; Secure", "__Host-i=9; Secure; Path=/"], from: Self.url("http://www.example.com/"), mainDocumentURL: nil)
        #expect(Set(jar.storage.cookies?.map(\.name) ?? []) == ["__Secure-a", "__Host-c", "__HOST-g"])
    }
}
