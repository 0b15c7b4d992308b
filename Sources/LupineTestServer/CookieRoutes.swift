import NIOHTTP1

/// `/cookies`, `/cookies/set`, `/cookies/delete` and `/cookies/attributes`.
enum CookieRoutes {
    private static let expired = "Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; Path=/"

    static func list(_ request: TestRequest) -> ResponsePlan {
        var cookies: [String: JSONValue] = [:]
        for header in request.head.headers["cookie"] {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "=") else { continue }
                let name = String(trimmed[..<equals])
                let value = String(trimmed[trimmed.index(after: equals)...])
                cookies[name] = .string(value)
            }
        }
        return .response(.json(.object(["cookies": .object(cookies)])))
    }

    /// Sets each query pair as a cookie, one Set-Cookie line per cookie, and redirects to `/cookies`.
    static func set(_ fields: [FormField]) -> ResponsePlan {
        redirect(setting: fields.map { "\($0.name)=\($0.value); Path=/" }, names: fields.map(\.name))
    }

    /// `/cookies/attributes?name=N&value=V&Path=/p&Domain=d&Max-Age=s&Expires=date&Secure=&HttpOnly=&SameSite=Lax`:
    /// one Set-Cookie line `N=V` followed by every other query pair as an attribute, in order
    /// (`Key=value`, or `Key` alone for an empty value). The 200 body lists the cookies the
    /// request carried, as `/cookies` does.
    static func attributes(_ request: TestRequest) -> ResponsePlan {
        guard let name = request.query.first(where: { $0.name == "name" })?.value, HeaderSyntax.isValidName(name) else {
            return .response(.error(.badRequest, "a token `name` is required"))
        }
        var line = "\(name)=\(request.query.first { $0.name == "value" }?.value ?? "")"
        for field in request.query where field.name != "name" && field.name != "value" {
            line += field.value.isEmpty ? "; \(field.name)" : "; \(field.name)=\(field.value)"
        }
        guard HeaderSyntax.isValidValue(line) else {
            return .response(.error(.badRequest, "cookie attributes must be printable"))
        }
        guard case var .response(response) = list(request) else { return Router.notFound }
        response.headers.add(name: "Set-Cookie", value: line)
        return .response(response)
    }

    static func delete(_ request: TestRequest) -> ResponsePlan {
        redirect(setting: request.query.map { "\($0.name)=; \(expired)" }, names: request.query.map(\.name))
    }

    private static func redirect(setting cookies: [String], names: [String]) -> ResponsePlan {
        guard names.allSatisfy(HeaderSyntax.isValidName), cookies.allSatisfy(HeaderSyntax.isValidValue) else {
            return .response(.error(.badRequest, "cookie names must be tokens and values printable"))
        }
        var headers: HTTPHeaders = ["Location": "/cookies"]
        for cookie in cookies {
            headers.add(name: "Set-Cookie", value: cookie)
        }
        return .response(.empty(.found, headers: headers))
    }
}
