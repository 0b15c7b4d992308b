/// Why an ``AuthenticationInterceptor`` could not authenticate a request.
///
/// Lupine hands these errors back inside an `AFError`: a failed adaptation gives
/// `AFError.requestAdaptationFailed(error:)`, a refused retry gives
/// `AFError.requestRetryFailed(retryError:originalError:)`.
public enum AuthenticationError: Error {
    /// The interceptor has no credential, so the request cannot be authenticated.
    case missingCredential
    /// The credential was refreshed more often than the interceptor's `RefreshWindow` allows;
    /// the refresh was not attempted.
    case excessiveRefresh
}
