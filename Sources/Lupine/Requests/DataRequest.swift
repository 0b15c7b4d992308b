import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import Synchronization

/// A request whose response body is collected in memory.
///
/// The body is bounded (512 MiB, `DataRequest.maximumDataSize`), whether its length is announced
/// or not (a chunked body that never ends): a larger response fails with
/// `AFError.sessionTaskFailed(error: URLError(.dataLengthExceedsMaximum))` instead of exhausting
/// memory. Use a download for large bodies.
public class DataRequest: Request, @unchecked Sendable {
    /// Largest body held in memory: 512 MiB.
    static let maximumDataSize: Int64 = 512 * 1024 * 1024

    /// The value the URLRequest is built from.
    public let convertible: any URLRequestConvertible

    /// Body bytes of the current attempt (nil until data arrives; cleared on retry).
    public var data: Data? { dataState.withLock { $0.collectedData() } }

    struct DataState {
        var data: Data?
        /// Where a large body of announced length is collected instead of `data`, until someone
        /// reads it (see `LargeBodyBuffer`).
        var largeBody: LargeBodyBuffer?
        /// Content-Length of the response, used to size the buffer once.
        var expectedLength = 0
        /// The bound on `data`; lowered only by tests, before the request is resumed.
        var maximumSize = DataRequest.maximumDataSize
        var validators = SmallList<Validator>()

        /// Adds a part of the body; returns the bytes collected so far.
        mutating func append(_ part: Data) -> Int {
            if data == nil, largeBody == nil {
                // Checked first: a failable class initializer allocates before it can fail.
                if expectedLength >= LargeBodyBuffer.minimumSize { largeBody = LargeBodyBuffer(capacity: expectedLength) }
                if largeBody == nil { data = Data(capacity: max(expectedLength, part.count)) }
            }
            if let largeBody {
                if largeBody.append(part) { return largeBody.count }
                // More than announced (a URLProtocol may send it): collected in a Data from now on.
                data = collectedData()
            }
            data?.append(part)
            return data?.count ?? 0
        }

        /// The body collected so far. A large body moves from its buffer into a `Data` without a
        /// copy, so that every reader shares that one value.
        mutating func collectedData() -> Data? {
            if let largeBody {
                data = largeBody.handOff()
                self.largeBody = nil
            }
            return data
        }
    }

    /// Inline in the request: one allocation fewer than a boxed lock.
    let dataState = Mutex(DataState())

    init(convertible: any URLRequestConvertible, context: RequestContext) {
        self.convertible = convertible
        super.init(context: context)
    }

    override var urlRequestConvertible: (any URLRequestConvertible)? { convertible }

    override var usesHTTPCache: Bool { true }

    /// The body is in memory: nothing to finish before the validators.
    override var hasSinkToComplete: Bool { false }

    override var responseBodyForCache: Data? { data ?? Data() }

    // MARK: Sink

    override func didReceiveResponseHead(_ response: LazyHTTPResponse, task: any TransportTask) {
        let expected = response.expectedContentLength
        updateDownloadProgress(expected: expected, received: 0, notifying: false)
        let maximumSize = dataState.withLock { $0.maximumSize }
        if expected > maximumSize {
            failTransfer(with: .dataLengthExceedsMaximum, task: task)
            return
        }
        dataState.withLock { $0.expectedLength = Int(max(expected, 0)) }
        askHTTPResponseHandler(response, task: task)
    }

    override func didReceiveBodyPart(_ data: Data, task: any TransportTask) {
        let (received, maximumSize) = dataState.withLock { state -> (Int64, Int64) in
            (Int64(state.append(data)), state.maximumSize)
        }
        if received > maximumSize {
            failTransfer(with: .dataLengthExceedsMaximum, task: task)
            return
        }
        updateDownloadProgress(expected: nil, received: received)
    }

    override func resetForRetry() {
        dataState.withLock { state in
            state.data = nil
            state.largeBody = nil
            state.expectedLength = 0
        }
    }

    override func runValidators() {
        let validators = dataState.withLock { $0.validators }
        validators.forEach { validator in
            runValidation(validator.check)
            if let next = validator.next { runValidation(next) }
        }
    }

    // MARK: Validation and response head handlers

    /// Adds a validation closure, run when the response is complete (in the order added, while
    /// there is no error). A failure that is not an `AFError` becomes
    /// `.responseValidationFailed(reason: .customValidationFailed(error:))`.
    @preconcurrency
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        validateResponse { request, response, data in
            response.response.map { validation(request, $0, data) }
        }
    }

    /// Adds a validation of the response as the pipeline carries it: Lupine's own validations
    /// decide from the head and make the `HTTPURLResponse` only when they need it. `check`
    /// returns nil to skip (no `HTTPURLResponse` could be made). `next`, when given, is a second
    /// validation added with it (as if by a second call), in one validator: `validate()` adds two.
    func validateResponse(_ check: @escaping ResponseCheck, then next: ResponseCheck? = nil) -> Self {
        dataState.withLock { $0.validators.append(Validator(check: check, next: next)) }
        return self
    }

    /// A validation added, with the one added with it in the same call (`validate()` adds two).
    /// A struct: closures stored as an array's elements directly would each be wrapped in a
    /// reabstraction thunk, an allocation.
    struct Validator {
        let check: ResponseCheck
        let next: ResponseCheck?
    }

    /// A validation of the request, the response as the pipeline carries it, and the body.
    typealias ResponseCheck = @Sendable (URLRequest?, LazyHTTPResponse, Data?) -> ValidationResult?

    /// Runs one validation, while there is no error, and tells the monitors its result.
    private func runValidation(_ check: ResponseCheck) {
        guard let (request, response) = validationInput else { return }
        let data = self.data
        ThreadContract.userCode("a validator")
        guard let result = check(request, response, data) else { return }
        if case let .failure(error) = result {
            self.error = error.asAFError ?? .responseValidationFailed(reason: .customValidationFailed(error: error))
        }
        // Checked before the event's payload is made: building and destroying it (the request,
        // the response, the body, the result) cost more than the validation when no one listens.
        guard monitorsWant(.didValidateData) else { return }
        notify(.didValidateData, about: (self, request, response, data, result)) { monitor, about in
            if let made = about.2.response {
                monitor.request(about.0, didValidateRequest: about.1, response: made, data: about.3, withResult: about.4)
            }
        }
    }

    /// Calls `handler` on `queue` with each final HTTPURLResponse; the body is held until the
    /// handler answers `.allow`, and `.cancel` cancels the request. Only the last handler set is used.
    @_disfavoredOverload
    @preconcurrency
    @discardableResult
    public func onHTTPResponse(
        on queue: DispatchQueue = .lupineDefault,
        perform handler: @escaping @Sendable (_ response: HTTPURLResponse,
                                              _ completionHandler: @escaping @Sendable (ResponseDisposition) -> Void) -> Void
    ) -> Self {
        setHTTPResponseHandler(queue: queue, handler)
        return self
    }

    /// Calls `handler` on `queue` with each final HTTPURLResponse (observation only).
    @preconcurrency
    @discardableResult
    public func onHTTPResponse(on queue: DispatchQueue = .lupineDefault,
                               perform handler: @escaping @Sendable (HTTPURLResponse) -> Void) -> Self {
        onHTTPResponse(on: queue) { response, completionHandler in
            handler(response)
            completionHandler(.allow)
        }
    }
}
