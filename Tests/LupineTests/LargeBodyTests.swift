import Foundation
@testable import Lupine
import LupineTestServer
import Testing

/// Bodies of announced length of 8 MiB and more are collected in a mapping of their own
/// (`LargeBodyBuffer`): the caller sees the same bytes and the same value semantics as with any
/// other body.
@Suite struct LargeBodyTests {
    /// 20 MiB: above `LargeBodyBuffer.minimumSize`.
    private static let size = 20 * 1024 * 1024

    @Test func largeBodyOfAnnouncedLengthArrivesWhole() async throws {
        let server = try await testServer()
        // The same bytes, once with Content-Length (the mapped buffer) and once chunked (a Data).
        let announced = try await AF.request(server.url("/bytes/\(Self.size)?seed=7")).validate().serializingData().value
        let chunked = try await AF.request(server.url("/stream-bytes/\(Self.size)?seed=7")).validate().serializingData().value
        #expect(announced.count == Self.size)
        #expect(announced == chunked)
    }

    @Test func copiesOfALargeBodyAreIndependentValues() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/bytes/\(Self.size)?seed=8"))
        let response = await request.serializingData().response
        var changed = try #require(response.data)
        let original = changed[changed.startIndex]
        changed[changed.startIndex] = original &+ 1
        changed.append(contentsOf: [1, 2, 3])
        // The request's body and the response's are the one value the buffer was handed to.
        let requestData = try #require(request.data)
        #expect(requestData.count == Self.size)
        #expect(requestData[requestData.startIndex] == original)
        #expect(response.data?[requestData.startIndex] == original)
        #expect(requestData == response.data)
    }

    /// A server that announces 20 MiB and closes after 10: the request fails as any cut body does,
    /// and its retry collects its own body from the start (not after the first attempt's bytes).
    @Test func largeBodyCutShortFailsAndARetryStartsAfresh() async throws {
        let server = try await testServer()
        let half = Self.size / 2
        let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, retryableURLErrorCodes: [.networkConnectionLost])
        let request = AF.request(server.url("/fault/close-mid-body?bytes=\(half)"), interceptor: policy)
        let response = await request.serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(request.retryCount == 1)
        #expect((response.data?.count ?? 0) <= half)
    }

    #if os(Linux)
    @Test func bufferRefusesWhatDoesNotFitAndHandsItsBytesOff() throws {
        let capacity = LargeBodyBuffer.minimumSize
        let buffer = try #require(LargeBodyBuffer(capacity: capacity))
        let half = Data(repeating: 0xAB, count: capacity / 2)
        #expect(buffer.append(half))
        #expect(buffer.append(half))
        #expect(!buffer.append(Data([1])))
        #expect(buffer.count == capacity)
        var data = buffer.handOff()
        #expect(data.count == capacity)
        #expect(data.allSatisfy { $0 == 0xAB })
        // The Data owns the mapping: it grows like any other.
        data.append(contentsOf: [1, 2])
        #expect(data.count == capacity + 2)
        #expect(data.suffix(2) == Data([1, 2]))
        // A buffer that handed its bytes off takes no more.
        #expect(!buffer.append(Data([1])))
    }
    #endif

    @Test func smallAnnouncedLengthsUseNoMapping() {
        #expect(LargeBodyBuffer(capacity: LargeBodyBuffer.minimumSize - 1) == nil)
        #expect(LargeBodyBuffer(capacity: 0) == nil)
    }
}
