import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// `Set-Cookie` parsing and storage: no line crashes the parser or the jar, a parsed cookie name is
/// never empty, and a cookie stored for a host is never returned for an unrelated site.
@main
enum FuzzCookiesMain {
    static func main() {
        exit(runFuzzer(fuzzCookies))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCookies(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let hosts = ["example.com", "a.example.com", "127.0.0.1", "localhost"]
    let host = hosts[Int(input.byte()) % hosts.count]
    let path = "/" + (input.string().addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "")
    var lines: [String] = []
    for _ in 0..<Int(input.byte() % 4 + 1) { lines.append(input.string()) }

    for line in lines {
        if let cookie = SetCookie(line) {
            fuzzRequire(!cookie.name.isEmpty, "empty name parsed from \(line.debugDescription)")
            // RFC 6265 5.2.3 drops one leading dot only: "..a.com" keeps one, and matches no host.
            fuzzRequire(cookie.domain.map { !$0.isEmpty } ?? true, "empty domain from \(line.debugDescription)")
        }
    }

    guard let url = URL(string: "http://\(host)\(path)"), let unrelated = URL(string: "http://unrelated.test/"),
          let storage = URLSessionConfiguration.ephemeral.httpCookieStorage
    else { return 0 }
    let jar = CookieJar(storage: storage, acceptPolicy: .always)
    jar.store(lines, from: url, mainDocumentURL: url)
    _ = jar.cookies(for: url)
    fuzzRequire(jar.cookies(for: unrelated).isEmpty, "a cookie set by \(host) is sent to unrelated.test: \(lines)")
    storage.removeCookies(since: Date.distantPast)
    return 0
}
