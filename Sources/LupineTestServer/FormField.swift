/// One decoded `name=value` pair from a query string or a urlencoded form body.
struct FormField: Sendable, Equatable {
    let name: String
    let value: String
}
