import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Lupine

/// `responseData` and `serializingData` share one serializer among the requests that keep the
/// defaults: settings that differ from them must still get a serializer of their own.
@Suite struct DataResponseSerializerSharingTests {
    @Test func theDefaultsAreSharedAndAnythingElseIsNot() {
        let first = DataResponseSerializer.reusable(dataPreprocessor: PassthroughPreprocessor(),
                                                    emptyResponseCodes: DataResponseSerializer.defaultEmptyResponseCodes,
                                                    emptyRequestMethods: DataResponseSerializer.defaultEmptyRequestMethods)
        // Equal sets built anew are the defaults too.
        let second = DataResponseSerializer.reusable(dataPreprocessor: PassthroughPreprocessor(),
                                                     emptyResponseCodes: [205, 204], emptyRequestMethods: [.head])
        #expect(first === second)
        let codes = DataResponseSerializer.reusable(dataPreprocessor: PassthroughPreprocessor(),
                                                    emptyResponseCodes: [200], emptyRequestMethods: [.head])
        #expect(codes !== first && codes.emptyResponseCodes == [200])
        let methods = DataResponseSerializer.reusable(dataPreprocessor: PassthroughPreprocessor(),
                                                      emptyResponseCodes: [204, 205], emptyRequestMethods: [.get])
        #expect(methods !== first && methods.emptyRequestMethods == [.get])
        let preprocessed = DataResponseSerializer.reusable(dataPreprocessor: GoogleXSSIPreprocessor(),
                                                           emptyResponseCodes: [204, 205], emptyRequestMethods: [.head])
        #expect(preprocessed !== first && preprocessed.dataPreprocessor is GoogleXSSIPreprocessor)
    }

    /// An empty 200 fails with the defaults and succeeds where the caller allows it, on both APIs,
    /// whichever request comes first.
    @Test func anEmptyBodyFollowsEachRequestsOwnSettings() async throws {
        let server = try await testServer()
        let session = Session()
        let url = server.url("/status/200")
        let allowed = await session.request(url).serializingData(emptyResponseCodes: [200]).response
        let refused = await session.request(url).serializingData().response
        #expect(allowed.value == Data())
        #expect(refused.error?.isResponseSerializationError == true)
        let (closureAllowed, closureRefused) = await withCheckedContinuation { continuation in
            session.request(url).responseData(emptyResponseCodes: [200]) { allowed in
                session.request(url).responseData { refused in continuation.resume(returning: (allowed, refused)) }
            }
        }
        #expect(closureAllowed.value == Data())
        #expect(closureRefused.error?.isResponseSerializationError == true)
    }
}
