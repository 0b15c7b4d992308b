import Foundation

extension CharacterSet {
    /// The characters left unescaped in query keys and values: RFC 3986 query characters
    /// (`CharacterSet.urlQueryAllowed`) minus the general delimiters `:#[]@` and the sub-delimiters
    /// `!$&'()*+,;=`.
    ///
    /// `?` and `/` stay unescaped, as RFC 3986 section 3.4 allows in a query.
    public static let afURLQueryAllowed: CharacterSet = {
        let generalDelimiters = ":#[]@"
        let subDelimiters = "!$&'()*+,;="
        return CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: generalDelimiters + subDelimiters))
    }()
}
