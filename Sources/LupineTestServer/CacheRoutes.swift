import NIOHTTP1

/// `/cache`, `/cache/N` and `/etag/E`: conditional request handling.
enum CacheRoutes {
    static let entityTag = "\"lupine-cache-etag\""
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    static func cache(_ request: TestRequest) -> ResponsePlan {
        let validators: HTTPHeaders = ["ETag": entityTag, "Last-Modified": lastModified]
        if request.header("if-none-match") != nil || request.header("if-modified-since") != nil {
            return .response(.empty(.notModified, headers: validators))
        }
        var response = TestResponse.json(EchoRoutes.body(for: request))
        response.headers.add(contentsOf: validators)
        return .response(response)
    }

    static func maxAge(_ request: TestRequest, seconds text: String) -> ResponsePlan {
        guard let seconds = Int(text), seconds >= 0 else {
            return .response(.error(.badRequest, "max-age must be a non-negative integer"))
        }
        var response = TestResponse.json(EchoRoutes.body(for: request))
        response.headers.add(name: "Cache-Control", value: "public, max-age=\(seconds)")
        return .response(response)
    }

    static func etag(_ request: TestRequest, tag: String) -> ResponsePlan {
        guard HeaderSyntax.isValidValue(tag), !tag.contains("\"") else {
            return .response(.error(.badRequest, "invalid entity tag"))
        }
        let quoted = "\"\(tag)\""
        if let ifNoneMatch = joined(request, "if-none-match"), matches(ifNoneMatch, tag) {
            return .response(.empty(.notModified, headers: ["ETag": quoted]))
        }
        if let ifMatch = joined(request, "if-match"), !matches(ifMatch, tag) {
            return .response(.empty(.preconditionFailed))
        }
        var response = TestResponse.json(EchoRoutes.body(for: request))
        response.headers.add(name: "ETag", value: quoted)
        return .response(response)
    }

    private static func joined(_ request: TestRequest, _ name: String) -> String? {
        let values = request.head.headers[name]
        return values.isEmpty ? nil : values.joined(separator: ",")
    }

    /// Whether an If-Match / If-None-Match list names `tag` or is `*`; weak tags compare by their opaque part.
    private static func matches(_ list: String, _ tag: String) -> Bool {
        list.split(separator: ",").contains { candidate in
            var value = candidate.trimmingSpaces
            if value == "*" { return true }
            if value.hasPrefix("W/") { value = value.dropFirst(2) }
            if value.count >= 2, value.first == "\"", value.last == "\"" {
                value = value.dropFirst().dropLast()
            }
            return value == tag
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var value = self.drop { $0 == " " || $0 == "\t" }
        while let last = value.last, last == " " || last == "\t" {
            value = value.dropLast()
        }
        return value
    }
}
