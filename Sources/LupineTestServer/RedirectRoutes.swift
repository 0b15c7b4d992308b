import NIOHTTP1

/// `/redirect/N`, `/relative-redirect/N`, `/absolute-redirect/N` and `/redirect-to`.
enum RedirectRoutes {
    /// A 302 chain of `countText` hops ending at `/get`; `prefix` is the route being followed.
    static func chain(_ request: TestRequest, prefix: String, count countText: String, absolute: Bool)
        -> ResponsePlan
    {
        guard let count = Int(countText), count >= 1 else {
            return .response(.error(.badRequest, "redirect count must be a positive integer"))
        }
        let path = count == 1 ? "/get" : "/\(prefix)/\(count - 1)"
        let location = absolute ? "http://127.0.0.1:\(request.localPort)\(path)" : path
        return .response(.empty(.found, headers: ["Location": location]))
    }

    static func redirectTo(_ request: TestRequest) -> ResponsePlan {
        guard let url = request.queryValue("url"), HeaderSyntax.isValidValue(url) else {
            return .response(.error(.badRequest, "url is missing or not a valid header value"))
        }
        var code = 302
        if let text = request.queryValue("status_code") {
            guard let parsed = Int(text) else {
                return .response(.error(.badRequest, "status_code must be an integer"))
            }
            // Like httpbin, a code outside the redirect range falls back to 302.
            code = (300...399).contains(parsed) ? parsed : 302
        }
        let redirect = ResponsePlan.response(.empty(HTTPResponseStatus(statusCode: code), headers: ["Location": url]))
        // `delay=S` answers after S seconds: a slow hop, for timeouts that span a redirect chain.
        guard let delayText = request.queryValue("delay") else { return redirect }
        guard let seconds = Double(delayText), seconds >= 0, seconds <= 30 else {
            return .response(.error(.badRequest, "delay must be between 0 and 30 seconds"))
        }
        return .delayed(.nanoseconds(Int64(seconds * 1_000_000_000)), redirect)
    }
}
