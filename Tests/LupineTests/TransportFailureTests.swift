import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// What the caller sees when the connection or the server's bytes go wrong: the `URLError` code
/// URLSession reports for the same failure, inside `AFError.sessionTaskFailed`; and the Session
/// keeps working afterwards.
///
/// Each single fault, and every input refused before sending, is listed in HardeningTests.
@Suite struct TransportFailureTests {
    // MARK: Connecting

    @Test func closedPortFailsWithCannotConnectToHost() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let session = Session()
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request(refusing.url("/get")).serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        #expect(response?.response == nil)
        // Refused at once, as by URLSession: not retried until the 60 s connect timeout.
        #expect(elapsed < 10)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    @Test func concurrentRequestsToClosedPortAllFailAtOnce() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let port = refusing.port
        let session = Session()
        var codes: [URLError.Code?] = []
        let elapsed = await secondsElapsed {
            codes = await withTaskGroup(of: URLError.Code?.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        await session.request("http://127.0.0.1:\(port)/get?n=\(index)").serializingData().response
                            .error?.sessionTaskURLErrorCode
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }

        #expect(codes == Array(repeating: .cannotConnectToHost, count: 12))
        #expect(elapsed < 10)
    }

    /// No network is available where the tests run; the `.invalid` top-level domain never resolves
    /// anyway (RFC 6761), so resolution fails fast either way.
    @Test func unresolvableHostFailsWithCannotFindHost() async throws {
        let session = Session()
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request("http://nonexistent.invalid/").serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .cannotFindHost)
        #expect(elapsed < 10)
        #expect(await session.performsNormalRequest(on: try await testServer()))
    }

    // MARK: Oversized headers

    @Test func largeResponseHeaderWithinParserLimitIsDelivered() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/fault/oversized-headers?kb=32")).serializingString().response

        #expect(response.error == nil)
        #expect(response.value == "ok\n")
        #expect(response.response?.value(forHTTPHeaderField: "X-Big")?.count == 32 * 1024)
    }

    // MARK: Many faults, one Session

    @Test func sessionSurvivesEveryFaultInARow() async throws {
        let server = try await testServer()
        let session = Session()
        let faults = ["close-mid-body", "wrong-content-length", "reset", "malformed-status", "garbage",
                      "oversized-headers"]
        for fault in faults {
            let response = await session.request(server.url("/fault/\(fault)")).serializingData().response
            #expect(response.error?.isSessionTaskError == true, "\(fault)")
        }
        let responses = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { await session.performsNormalRequest(on: server) } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(responses == Array(repeating: true, count: 8))
    }
}
