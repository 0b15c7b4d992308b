import NIOCore
import NIOHTTP1

/// A fully received request, with the pieces endpoints read already parsed.
struct TestRequest {
    let head: HTTPRequestHead
    let body: ByteBuffer
    /// The request target without its query string, exactly as sent.
    let path: String
    let query: [FormField]
    /// Authority used to rebuild absolute URLs: the Host header, else the listening address.
    let authority: String
    /// The port the server listens on, for absolute redirects.
    let localPort: Int

    init(head: HTTPRequestHead, body: ByteBuffer, localPort: Int) {
        self.head = head
        self.body = body
        self.localPort = localPort
        let target = Self.originForm(of: head.uri)
        if let question = target.firstIndex(of: "?") {
            path = String(target[..<question])
            query = FormCoding.parse(target[target.index(after: question)...])
        } else {
            path = String(target)
            query = []
        }
        authority = head.headers.first(name: "host") ?? "127.0.0.1:\(localPort)"
    }

    /// The path part of a request target, as used for hit counting.
    static func path(ofTarget uri: String) -> String {
        let target = originForm(of: uri)
        guard let question = target.firstIndex(of: "?") else { return String(target) }
        return String(target[..<question])
    }

    /// Reduces an absolute-form target (`http://host/path`) to origin form (`/path`);
    /// proxies and some clients send the former.
    private static func originForm(of uri: String) -> Substring {
        // An origin-form target starts with "/"; a URL inside its query is not absolute form.
        guard !uri.hasPrefix("/"), let schemeEnd = uri.firstRange(of: "://") else { return Substring(uri) }
        let afterAuthority = uri[schemeEnd.upperBound...]
        guard let slash = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        return afterAuthority[slash...]
    }

    var method: HTTPMethod { head.method }

    var isHead: Bool { head.method == .HEAD }

    /// The method named in response bodies. A HEAD response must carry the Content-Length of the
    /// equivalent GET, so its (unsent) body describes that GET.
    var reportedMethod: String {
        isHead ? HTTPMethod.GET.rawValue : head.method.rawValue
    }

    /// The absolute URL the client asked for, as httpbin reports it.
    var url: String {
        "http://\(authority)\(Self.originForm(of: head.uri))"
    }

    /// Path components after the leading slash, percent-decoded (without `+` handling).
    var segments: [String] {
        path.split(separator: "/").map { FormCoding.decode($0, plusAsSpace: false) }
    }

    /// The first value of a header, matched case-insensitively.
    func header(_ name: String) -> String? {
        head.headers.first(name: name)
    }

    /// The first value of a query parameter.
    func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// Request headers with names as received; a repeated name (in any case) joins its values with ", ".
    var headersJSON: JSONValue {
        var spelling: [String: String] = [:]
        var values: [String: [String]] = [:]
        for (name, value) in head.headers {
            let key = name.lowercased()
            if spelling[key] == nil {
                spelling[key] = name
            }
            values[key, default: []].append(value)
        }
        var object: [String: JSONValue] = [:]
        for (key, name) in spelling {
            object[name] = .string(values[key, default: []].joined(separator: ", "))
        }
        return .object(object)
    }
}
