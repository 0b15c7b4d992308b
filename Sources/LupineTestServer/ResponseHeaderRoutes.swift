/// `/response-headers?K=V...`: every query pair becomes a response header line.
enum ResponseHeaderRoutes {
    static func respond(_ request: TestRequest) -> ResponsePlan {
        for field in request.query {
            guard HeaderSyntax.isValidName(field.name), HeaderSyntax.isValidValue(field.value) else {
                return .response(.error(.badRequest, "invalid header \(field.name)"))
            }
            guard !HeaderSyntax.isFramingHeader(field.name) else {
                return .response(.error(.badRequest, "\(field.name) would corrupt the response framing"))
            }
        }
        var response = TestResponse.json(.grouping(request.query))
        if request.query.contains(where: { $0.name.lowercased() == "content-type" }) {
            response.headers.remove(name: "content-type")
        }
        for field in request.query {
            response.headers.add(name: field.name, value: field.value)
        }
        return .response(response)
    }
}
