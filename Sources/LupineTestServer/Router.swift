/// Maps a request to the plan that answers it.
enum Router {
    static func plan(for request: TestRequest) -> ResponsePlan {
        let segments = request.segments
        let first = segments.first ?? ""
        switch (first, segments.count) {
        case ("get", 1): return EchoRoutes.echo(request, allowing: [.GET, .HEAD])
        case ("post", 1): return EchoRoutes.echo(request, allowing: [.POST])
        case ("put", 1): return EchoRoutes.echo(request, allowing: [.PUT])
        case ("patch", 1): return EchoRoutes.echo(request, allowing: [.PATCH])
        case ("delete", 1): return EchoRoutes.echo(request, allowing: [.DELETE])
        case ("anything", _): return EchoRoutes.echo(request, allowing: nil)
        case ("delay", 2): return StreamingRoutes.delay(request, seconds: segments[1])
        case ("status", 2): return StatusRoutes.status(segments[1])
        case ("no-content", 1): return StatusRoutes.noContent()
        case ("empty", 1): return StatusRoutes.empty()
        case ("headers", 1): return DocumentRoutes.headers(request)
        case ("ip", 1): return DocumentRoutes.ip()
        case ("user-agent", 1): return DocumentRoutes.userAgent(request)
        case ("bytes", 2): return StreamingRoutes.bytes(request, count: segments[1])
        case ("range-ignored", 2): return RangeSupport.rangeIgnored(request, count: segments[1])
        case ("stream", 2): return StreamingRoutes.stream(request, count: segments[1])
        case ("stream-bytes", 2): return StreamingRoutes.streamBytes(request, count: segments[1])
        case ("drip", 1): return StreamingRoutes.drip(request)
        case ("redirect", 2), ("relative-redirect", 2):
            return RedirectRoutes.chain(request, prefix: first, count: segments[1], absolute: false)
        case ("absolute-redirect", 2):
            return RedirectRoutes.chain(request, prefix: first, count: segments[1], absolute: true)
        case ("redirect-to", 1): return RedirectRoutes.redirectTo(request)
        case ("gzip", 1): return CompressionRoutes.encoded(request, [.gzip], flag: "gzipped")
        case ("deflate", 1): return CompressionRoutes.encoded(request, [.deflate], flag: "deflated")
        case ("brotli", 1): return CompressionRoutes.encoded(request, [.br], flag: "brotli")
        case ("zstd", 1): return CompressionRoutes.encoded(request, [.zstd], flag: "zstd")
        case ("encoded", 1): return CompressionRoutes.stacked(request)
        case ("gzip-bomb", 1): return CompressionRoutes.bomb(request, .gzip)
        case ("deflate-bomb", 1): return CompressionRoutes.bomb(request, .deflate)
        case ("brotli-bomb", 1): return CompressionRoutes.bomb(request, .br)
        case ("zstd-bomb", 1): return CompressionRoutes.bomb(request, .zstd)
        case ("inflate", 1): return InflateRoutes.inflate(request)
        case ("basic-auth", 3): return AuthRoutes.basic(request, user: segments[1], password: segments[2])
        case ("bearer", 1): return AuthRoutes.bearer(request)
        case ("digest-auth", 4):
            return DigestAuthRoutes.digest(request, qop: segments[1], user: segments[2], password: segments[3])
        case ("digest-auth", 5):
            return DigestAuthRoutes.digest(request, qop: segments[1], user: segments[2], password: segments[3], algorithm: segments[4])
        case ("cookies", _): return cookies(request, segments)
        case ("response-headers", 1): return ResponseHeaderRoutes.respond(request)
        case ("json", 1): return DocumentRoutes.json()
        case ("xml", 1): return DocumentRoutes.xmlDocument()
        case ("html", 1): return DocumentRoutes.htmlDocument()
        case ("encoding", 2) where segments[1] == "utf8": return DocumentRoutes.utf8()
        case ("latin1", 1): return DocumentRoutes.latin1()
        case ("cache", 1): return CacheRoutes.cache(request)
        case ("cache", 2): return CacheRoutes.maxAge(request, seconds: segments[1])
        case ("etag", 2): return CacheRoutes.etag(request, tag: segments[1])
        case ("multipart", _): return MultipartRoutes.echo(request)
        case ("cached", 2): return CachedResourceRoutes.respond(request)
        case ("fault", 2): return FaultRoutes.plan(request, name: segments[1])
        case ("token", 2): return TokenRoutes.plan(request, action: segments[1])
        case ("fail", 2): return FailureRoutes.plan(request, count: segments[1])
        case ("websocket", _): return WebSocketRoutes.refused(request)
        case ("sse", 1): return ServerSentEventRoutes.events(request)
        default: return notFound
        }
    }

    static var notFound: ResponsePlan { .response(.error(.notFound, "not found")) }

    private static func cookies(_ request: TestRequest, _ segments: [String]) -> ResponsePlan {
        switch segments.count {
        case 1:
            return CookieRoutes.list(request)
        case 2 where segments[1] == "set":
            return CookieRoutes.set(request.query)
        case 4 where segments[1] == "set":
            return CookieRoutes.set([FormField(name: segments[2], value: segments[3])])
        case 2 where segments[1] == "delete":
            return CookieRoutes.delete(request)
        case 2 where segments[1] == "attributes":
            return CookieRoutes.attributes(request)
        default:
            return notFound
        }
    }
}
