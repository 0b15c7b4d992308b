import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import FuzzSupport
@testable import Lupine

/// Proxy settings from the environment (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy` and
/// their uppercase forms) and from a `connectionProxyDictionary`, and the choice of a proxy per URL.
///
/// No value crashes; a proxy chosen has a host and a port in 1...65535; a loopback host is never
/// sent through an environment proxy; a host named in `no_proxy` (or a name under it) is reached
/// directly, on any port when the entry has none; `HTTP_PROXY` is ignored in a CGI program.
@main
enum FuzzProxyEnvironmentMain {
    static func main() {
        exit(runFuzzer(fuzzProxyEnvironment))
    }
}

let variableNames = ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                     "no_proxy", "NO_PROXY", "REQUEST_METHOD"]
let hosts = ["example.com", "api.example.com", "EXAMPLE.com.", "notexample.com", "127.0.0.1", "127.9.9.9", "localhost",
             "a.localhost", "[::1]", "[2001:db8::1]", "10.0.0.1", "xn--bcher-kva.example"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProxyEnvironment(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    switch input.byte() % 3 {
    case 0: checkEnvironment(&input)
    case 1: checkBypassList(&input)
    default: checkDictionary(&input)
    }
    return 0
}

/// A value made of pieces that proxy URLs are made of, or arbitrary text.
func proxyValue(_ input: inout FuzzInput) -> String {
    guard input.bool() else { return input.string() }
    let schemes = ["", "http://", "HTTP://", "socks5://", "socks5h://", "socks://", "https://", "ftp://", "://"]
    let users = ["", "user@", "user:pass@", "us%40er:p%3Ass@", ":@", "a:b:c@"]
    let hostsInValues = ["proxy", "10.1.2.3", "[::1]", "[fe80::1%25eth0]", "", "host name", "proxy.example."]
    let ports = ["", ":3128", ":0", ":65535", ":65536", ":99999", ":-1", ":abc", ":", ":080"]
    let tails = ["", "/", "/path", "?q", "#f", " "]
    return schemes[Int(input.byte()) % schemes.count] + users[Int(input.byte()) % users.count]
        + hostsInValues[Int(input.byte()) % hostsInValues.count] + ports[Int(input.byte()) % ports.count]
        + tails[Int(input.byte()) % tails.count]
}

func checkProxy(_ proxy: TransportProxy?, _ context: @autoclosure () -> String) {
    guard let proxy else { return }
    fuzzRequire(!proxy.host.isEmpty, "empty proxy host from \(context())")
    fuzzRequire((1...65535).contains(proxy.port), "proxy port \(proxy.port) from \(context())")
    if let authorization = proxy.authorization {
        fuzzRequire(!authorization.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "CR, LF or NUL in Proxy-Authorization")
    }
}

func checkEnvironment(_ input: inout FuzzInput) {
    var environment: [String: String] = [:]
    for _ in 0..<Int(input.byte() % 6) {
        let name = variableNames[Int(input.byte()) % variableNames.count]
        environment[name] = name.lowercased() == "no_proxy" ? input.string() : proxyValue(&input)
    }
    let settings = ProxyEnvironment.settings(from: environment)
    checkProxy(settings.httpProxy, "\(environment)")
    checkProxy(settings.httpsProxy, "\(environment)")
    checkProxy(settings.socksProxy, "\(environment)")
    if environment["REQUEST_METHOD"] != nil, environment["http_proxy"] == nil, environment["all_proxy"] == nil,
       environment["ALL_PROXY"] == nil {
        fuzzRequire(settings.httpProxy == nil, "HTTP_PROXY used in a CGI program: \(environment)")
    }
    for host in hosts {
        for scheme in ["http", "https"] {
            guard let url = URL(string: "\(scheme)://\(host)/path") else { continue }
            let proxy = settings.proxy(for: url)
            checkProxy(proxy, "\(environment) for \(url)")
            if ProxyBypassList.isLoopback(url.host ?? "") {
                fuzzRequire(proxy == nil, "loopback \(url) goes through \(String(describing: proxy)) with \(environment)")
            }
        }
    }
}

func checkBypassList(_ input: inout FuzzInput) {
    let entryHost = hosts[Int(input.byte()) % hosts.count].lowercased()
    let prefixes = ["", ".", "*."]
    let entryPort: Int? = input.bool() ? Int(input.byte()) + 1 : nil
    var bare = entryHost
    while bare.hasSuffix(".") { bare.removeLast() }
    // A wildcard or a leading dot goes before a name, never before a bracketed IPv6 address.
    let prefix = entryHost.hasPrefix("[") ? "" : prefixes[Int(input.byte()) % prefixes.count]
    let entry = prefix + entryHost + (entryPort.map { ":\($0)" } ?? "")
    let noise = input.string()
    let separators = [",", " ", ", ", "\t"]
    let list = input.bool() ? noise + separators[Int(input.byte()) % separators.count] + entry : entry
    let bypass = ProxyBypassList(list)
    let port = input.bool() ? (entryPort ?? 80) : Int(input.byte()) + 1

    var unbracketed = bare
    if unbracketed.hasPrefix("["), unbracketed.hasSuffix("]") { unbracketed = String(unbracketed.dropFirst().dropLast()) }
    // The entry's own host, and a name under it, are bypassed on the entry's port (or any).
    let portMatches = entryPort == nil || entryPort == port
    // An unbracketed IPv6 host with a port cannot be written (`::1:80` is ambiguous).
    let writable = !(entryPort != nil && unbracketed.contains(":") && !bare.hasPrefix("["))
    if writable {
        if portMatches {
            fuzzRequire(bypass.bypasses(host: bare, port: port), "\(bare):\(port) with no_proxy \(list.debugDescription)")
        } else if list == entry {
            fuzzRequire(!bypass.bypasses(host: bare, port: port), "\(bare):\(port) with no_proxy \(list.debugDescription)")
        }
        if !unbracketed.contains(":"), !unbracketed.allSatisfy({ $0.isNumber || $0 == "." }), portMatches {
            fuzzRequire(bypass.bypasses(host: "sub." + bare, port: port), "sub.\(bare) with no_proxy \(list.debugDescription)")
        }
    }
    // A name that only ends with the same letters is not under it.
    if list == entry, bare == "example.com" {
        fuzzRequire(!bypass.bypasses(host: "notexample.com", port: port), "notexample.com with no_proxy \(list.debugDescription)")
    }
}

func checkDictionary(_ input: inout FuzzInput) {
    var dictionary: [AnyHashable: Any] = [:]
    let keys = ["HTTPEnable", "HTTPProxy", "HTTPPort", "HTTPSEnable", "HTTPSProxy", "HTTPSPort", "SOCKSEnable", "SOCKSProxy",
                "SOCKSPort", "ExceptionsList"]
    for _ in 0..<Int(input.byte() % 10) {
        let key = keys[Int(input.byte()) % keys.count]
        switch input.byte() % 6 {
        case 0: dictionary[key] = input.string()
        case 1: dictionary[key] = Int(Int16(bitPattern: UInt16(input.byte()) << 8 | UInt16(input.byte())))
        case 2: dictionary[key] = input.bool()
        case 3: dictionary[key] = NSNumber(value: Int32(bitPattern: UInt32(input.byte()) << 24 | UInt32(input.byte())))
        case 4: dictionary[key] = [input.string(), input.string()]
        default: dictionary[key] = Data(input.chunk())
        }
    }
    let settings = ProxySettings(connectionProxyDictionary: dictionary)
    checkProxy(settings.httpProxy, "\(dictionary)")
    checkProxy(settings.httpsProxy, "\(dictionary)")
    checkProxy(settings.socksProxy, "\(dictionary)")
    for host in hosts {
        guard let url = URL(string: "http://\(host):8080/") else { continue }
        checkProxy(settings.proxy(for: url), "\(dictionary) for \(url)")
    }
}
