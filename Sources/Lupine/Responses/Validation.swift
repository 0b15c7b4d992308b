import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// Result of a validation closure.
    public typealias ValidationResult = Result<Void, any(Error & Sendable)>
}

extension DataRequest {
    /// A validation closure: request, response and body in; success or the error out.
    public typealias Validation = @Sendable (URLRequest?, HTTPURLResponse, Data?) -> ValidationResult

    /// Fails with `.unacceptableStatusCode(code:)` unless the status code is in `acceptableStatusCodes`.
    @preconcurrency
    @discardableResult
    public func validate<S: Sequence>(statusCode acceptableStatusCodes: S) -> Self where S.Iterator.Element == Int, S: Sendable {
        validateResponse { _, response, _ in
            ResponseValidation.statusCode(response.statusCode, acceptable: acceptableStatusCodes)
        }
    }

    /// Fails unless the response MIME type matches one of `acceptableContentTypes` (evaluated
    /// lazily). An empty body always passes.
    @preconcurrency
    @discardableResult
    public func validate<S: Sequence>(contentType acceptableContentTypes: @escaping @Sendable @autoclosure () -> S) -> Self where S.Iterator.Element == String, S: Sendable {
        validateResponse { _, response, data in
            ResponseValidation.contentType(response, acceptable: acceptableContentTypes(), bodyIsEmpty: data?.isEmpty ?? true)
        }
    }

    /// Status code in 200..<300, and content type acceptable for the request's `Accept` header
    /// (or anything without one).
    @discardableResult
    public func validate() -> Self {
        // The two validations of `validate(statusCode:)` then `validate(contentType:)`, in one
        // validator. The Accept header is read when validating: with lazy setup there is no
        // request yet now.
        validateResponse({ _, response, _ in
            ResponseValidation.statusCode(response.statusCode, acceptable: ResponseValidation.acceptableStatusCodes)
        }, then: { request, response, data in
            ResponseValidation.contentType(response,
                                           acceptable: ResponseValidation.acceptableContentTypes(for: request),
                                           bodyIsEmpty: data?.isEmpty ?? true)
        })
    }
}

/// The validation rules shared by every request kind.
enum ResponseValidation {
    static let acceptableStatusCodes = 200..<300
    /// What a request without an Accept header accepts.
    static let acceptsEverything = ["*/*"]

    static func acceptableContentTypes(for request: URLRequest?) -> [String] {
        guard let accept = request?.value(forHTTPHeaderField: "Accept") else { return acceptsEverything }
        // As `components(separatedBy: ",")`, empty pieces kept, without its NSString bridge on Linux.
        return accept.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }

    static func statusCode<S: Sequence>(_ response: HTTPURLResponse, acceptable: S) -> Request.ValidationResult where S.Iterator.Element == Int {
        statusCode(response.statusCode, acceptable: acceptable)
    }

    static func statusCode<S: Sequence>(_ code: Int, acceptable: S) -> Request.ValidationResult where S.Iterator.Element == Int {
        if acceptable.contains(code) { return .success(()) }
        return .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: code)))
    }

    /// As `contentType(_:acceptable:bodyIsEmpty:)` for a response as the pipeline carries it: a
    /// wildcard accepts every response, so the `HTTPURLResponse` is made only without one (nil
    /// when it cannot be made: the validation is skipped).
    static func contentType<S: Sequence>(_ response: LazyHTTPResponse, acceptable: S, bodyIsEmpty: Bool) -> Request.ValidationResult?
        where S.Iterator.Element == String {
        guard !bodyIsEmpty else { return .success(()) }
        let acceptableTypes = Array(acceptable)
        // A request without an Accept header accepts `*/*`: no parsing needed.
        if acceptableTypes == Self.acceptsEverything
            || acceptableTypes.contains(where: { MIMEType($0)?.isWildcard == true }) { return .success(()) }
        return response.response.map { contentType($0, acceptable: acceptableTypes, bodyIsEmpty: false) }
    }

    static func contentType<S: Sequence>(_ response: HTTPURLResponse, acceptable: S, bodyIsEmpty: Bool) -> Request.ValidationResult where S.Iterator.Element == String {
        guard !bodyIsEmpty else { return .success(()) }
        let acceptableTypes = Array(acceptable)
        guard let mimeType = response.mimeType, let responseType = MIMEType(mimeType) else {
            if acceptableTypes.contains(where: { MIMEType($0)?.isWildcard == true }) { return .success(()) }
            return .failure(AFError.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: acceptableTypes.sorted())))
        }
        if acceptableTypes.contains(where: { MIMEType($0)?.matches(responseType) == true }) { return .success(()) }
        return .failure(AFError.responseValidationFailed(reason: .unacceptableContentType(
            acceptableContentTypes: acceptableTypes.sorted(), responseContentType: mimeType)))
    }
}

/// A `type/subtype` pair parsed the way Alamofire does: whitespace trimmed, parameters after `;`
/// dropped, exactly two parts or nothing.
struct MIMEType: Equatable {
    let type: String
    let subtype: String

    var isWildcard: Bool { type == "*" && subtype == "*" }

    init?(_ string: String) {
        let trimmed = string.lupineTrimmingASCIIWhitespace()
        let essence = trimmed[..<(trimmed.firstIndex(of: ";") ?? trimmed.endIndex)]
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        type = String(parts[0])
        subtype = String(parts[1])
    }

    /// Whether `self`, as an acceptable type, accepts `other`.
    func matches(_ other: MIMEType) -> Bool {
        switch (type, subtype) {
        case (other.type, other.subtype), (other.type, "*"), ("*", other.subtype), ("*", "*"): true
        default: false
        }
    }
}
