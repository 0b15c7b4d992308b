import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Timeouts as URLSession applies them: `timeoutInterval` (or the configuration's
/// `timeoutIntervalForRequest`) is the longest quiet period, `timeoutIntervalForResource` the
/// longest whole transfer; both fail the request with `URLError(.timedOut)`.
@Suite struct TimeoutTests {
    @Test func stalledServerFailsWithTimedOutAfterRequestTimeoutInterval() async throws {
        let server = try await testServer()
        let session = Session()
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request(server.url("/fault/stall"), requestModifier: { $0.timeoutInterval = 0.5 })
                .serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(response?.response == nil)
        #expect(elapsed >= 0.4)
        #expect(elapsed < 2)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func serverStallingAfterResponseHeadFailsWithTimedOut() async throws {
        let server = try await testServer()
        let session = Session()
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request(server.url("/fault/stall-body"), requestModifier: { $0.timeoutInterval = 0.5 })
                .serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(response?.response?.statusCode == 200)
        #expect(elapsed < 2)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func configurationRequestTimeoutAppliesWhenRequestSetsNone() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 0.5
        let session = Session(configuration: configuration)
        var response: AFDataResponse<Data>?
        let elapsed = await secondsElapsed {
            response = await session.request(server.url("/fault/stall")).serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(elapsed < 2)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func resourceTimeoutEndsTransferThatKeepsSendingBytes() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForResource = 1
        let session = Session(configuration: configuration)
        var response: AFDataResponse<Data>?
        // One byte every 100 ms for 3 s: never idle, but longer than the resource timeout.
        let elapsed = await secondsElapsed {
            response = await session.request(server.url("/drip?numbytes=30&duration=3")).serializingData().response
        }

        #expect(response?.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(elapsed >= 0.9)
        #expect(elapsed < 2.5)
        #expect(await session.performsNormalRequest(on: server))
    }

    @Test func slowButSteadyBodyWithinIdleTimeoutSucceeds() async throws {
        let server = try await testServer()
        let session = Session()
        // One byte every 300 ms for 2.4 s, with a 1 s idle timeout: the whole body takes longer than
        // the timeout, no gap comes near it (0.5 s gaps were too close on a loaded machine, where
        // the shared event loops also carry the 256 MiB transfer tests).
        let response = await session.request(server.url("/drip?numbytes=8&duration=2.4"),
                                              requestModifier: { $0.timeoutInterval = 1 })
            .serializingData().response

        #expect(response.error == nil)
        #expect(response.data?.count == 8)
        #expect(response.response?.statusCode == 200)
    }

    /// A body its consumer has paused is not a quiet server: the idle clock restarts on resume.
    @Test func suspendedRequestIsNotTimedOutWhileItsBodyIsPaused() async throws {
        let server = try await testServer()
        let session = Session()
        let request = session.request(server.url("/drip?numbytes=10&duration=1"),
                                      requestModifier: { $0.timeoutInterval = 0.5 })
        let task = request.serializingData()
        let deadline = ContinuousClock.now + .seconds(2)
        while request.response == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        request.suspend()
        try await Task.sleep(for: .milliseconds(1200))
        // Still held back by the pause, and not failed by the idle timeout meanwhile.
        #expect(request.isSuspended)
        #expect(request.error == nil)
        #expect(request.downloadProgress.completedUnitCount < 10)
        request.resume()
        let response = await task.response

        #expect(response.error == nil)
        #expect(response.data?.count == 10)
    }

    @Test func responseDelayedBeyondTimeoutIntervalFailsWithTimedOut() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/delay/3"), requestModifier: { $0.timeoutInterval = 0.5 })
            .serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
    }

    @Test func responseDelayedWithinTimeoutIntervalSucceeds() async throws {
        let server = try await testServer()
        let response = await AF.request(server.url("/delay/0.2"), requestModifier: { $0.timeoutInterval = 5 })
            .serializingDecodable(HTTPBinResponse.self).response

        #expect(response.error == nil)
        #expect(response.value?.method == "GET")
    }
}
