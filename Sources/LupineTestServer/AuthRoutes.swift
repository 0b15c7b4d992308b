import NIOHTTP1

/// `/basic-auth/U/P` and `/bearer`.
enum AuthRoutes {
    static func basic(_ request: TestRequest, user: String, password: String) -> ResponsePlan {
        let expected = Array("\(user):\(password)".utf8)
        if let credentials = credentials(in: request, scheme: "basic"),
            let decoded = Base64.decode(credentials),
            decoded == expected
        {
            return .response(.json(.object(["authenticated": .bool(true), "user": .string(user)])))
        }
        return .response(.empty(.unauthorized, headers: ["WWW-Authenticate": "Basic realm=\"Fake Realm\""]))
    }

    static func bearer(_ request: TestRequest) -> ResponsePlan {
        guard let token = credentials(in: request, scheme: "bearer") else {
            return .response(.empty(.unauthorized, headers: ["WWW-Authenticate": "Bearer"]))
        }
        return .response(.json(.object(["authenticated": .bool(true), "token": .string(String(token))])))
    }

    /// The part of the Authorization header after `scheme` (matched case-insensitively), if non-empty.
    private static func credentials(in request: TestRequest, scheme: String) -> Substring? {
        guard let header = request.header("authorization") else { return nil }
        let trimmed = header.drop { $0 == " " }
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == scheme else {
            return nil
        }
        var value = trimmed[space...].drop { $0 == " " }
        while value.last == " " {
            value = value.dropLast()
        }
        return value.isEmpty ? nil : value
    }
}
