import Foundation
import Lupine
import LupineTestServer
import Metrics
import MetricsTestKit
import Testing

/// Client metrics through swift-metrics, with labels of bounded cardinality.
@Suite struct MetricsTests {
    private func session(recordingTo metrics: TestMetrics, interceptor: (any RequestInterceptor)? = nil) -> Session {
        Session(interceptor: interceptor, eventMonitors: [MetricsEventMonitor(factory: metrics)])
    }

    @Test func finishedRequestsAreCountedByMethodAndStatusClassAndTimed() async throws {
        let server = try await testServer()
        let metrics = TestMetrics()
        let session = session(recordingTo: metrics)
        _ = await session.request(server.url("/get")).serializingData().response
        _ = await session.request(server.url("/get?page=2")).serializingData().response
        _ = await session.request(server.url("/status/404"), method: .delete).serializingData().response
        _ = await session.request(server.url("/anything"), method: HTTPMethod(rawValue: "BREW")).serializingData().response

        let label = "lupine_http_client_requests_total"
        #expect(await waitUntil { metrics.counterTotal(label: label) == 4 })
        #expect(metrics.counterTotal(label: label, dimensions: [("method", "GET"), ("status_class", "2xx")]) == 2)
        #expect(metrics.counterTotal(label: label, dimensions: [("method", "DELETE"), ("status_class", "4xx")]) == 1)
        // BREW is no method of RFC 9110: it is counted as _OTHER, whatever the server answered.
        let other = metrics.counters(label: label).filter { $0.dimensions.contains { $0 == ("method", "_OTHER") } }
        #expect(other.map(\.totalValue) == [1], "\(metrics.counters.map { ($0.label, $0.dimensions, $0.totalValue) })")
        let timer = try metrics.expectTimer("lupine_http_client_request_duration", [("method", "GET"), ("status_class", "2xx")])
        #expect(timer.values.count == 2)
        #expect(timer.values.allSatisfy { $0 > 0 })
        withExtendedLifetime(session) {}
    }

    @Test func noLabelHoldsAURLHostOrPath() async throws {
        let server = try await testServer()
        let metrics = TestMetrics()
        let session = session(recordingTo: metrics)
        for index in 0..<5 {
            _ = await session.request(server.url("/anything/item-\(index)?id=\(index)"), method: .post,
                                      parameters: ["n": index]).serializingData().response
        }
        #expect(await waitUntil { metrics.counterTotal(label: "lupine_http_client_requests_total") == 5 })
        let allDimensions = metrics.counters.flatMap(\.dimensions) + metrics.timers.flatMap(\.dimensions)
            + metrics.meters.flatMap(\.dimensions)
        let values = Set(allDimensions.map(\.1))
        #expect(values.isSubset(of: ["POST", "2xx"]), "\(values)")
        #expect(metrics.counters(label: "lupine_http_client_requests_total").count == 1)
        withExtendedLifetime(session) {}
    }

    @Test func aRequestWithoutAResponseCountsAsStatusClassNone() async throws {
        let metrics = TestMetrics()
        let session = session(recordingTo: metrics)
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        _ = await session.request(refusing.url("/")).serializingData().response
        #expect(await waitUntil {
            metrics.counterTotal(label: "lupine_http_client_requests_total", dimensions: [("method", "GET"), ("status_class", "none")]) == 1
        })
        withExtendedLifetime(session) {}
    }

    @Test func requestsInFlightGoUpThenBackDown() async throws {
        let server = try await testServer()
        let metrics = TestMetrics()
        let session = session(recordingTo: metrics)
        let slow = session.request(server.url("/delay/0.5")).serializingData()
        let meter = try await waitForMeter(metrics, "lupine_http_client_requests_in_flight")
        #expect(await waitUntil { meter.lastValue == 1 })
        _ = await slow.response
        #expect(await waitUntil { meter.lastValue == 0 })
        #expect(meter.values.max() == 1)
        withExtendedLifetime(session) {}
    }

    @Test func retriesAreCountedByMethod() async throws {
        let server = try await testServer()
        let metrics = TestMetrics()
        let retry = RetryPolicy(retryLimit: 3, exponentialBackoffBase: 2, exponentialBackoffScale: 0.01)
        let session = session(recordingTo: metrics, interceptor: retry)
        let response = await session.request(server.url("/fail/2?key=\(UUID().uuidString)&status=503")).validate()
            .serializingData().response
        #expect(response.response?.statusCode == 200)
        #expect(await waitUntil { metrics.counterTotal(label: "lupine_http_client_requests_total") == 1 })
        #expect(metrics.counterTotal(label: "lupine_http_client_retries_total", dimensions: [("method", "GET")]) == 2)
        withExtendedLifetime(session) {}
    }

    @Test func bodyBytesSentAndReceivedAreCounted() async throws {
        let server = try await testServer()
        let metrics = TestMetrics()
        let session = session(recordingTo: metrics)
        let upload = Data(repeating: 0x61, count: 10_000)
        _ = await session.upload(upload, to: server.url("/post")).serializingData().response
        let download = await session.request(server.url("/bytes/4096")).serializingData().response
        #expect(download.data?.count == 4096)
        #expect(await waitUntil { metrics.counterTotal(label: "lupine_http_client_requests_total") == 2 })
        #expect(metrics.counterTotal(label: "lupine_http_client_request_body_bytes_total", dimensions: [("method", "POST")]) == 10_000)
        #expect(metrics.counterTotal(label: "lupine_http_client_response_body_bytes_total", dimensions: [("method", "GET")]) == 4096)
        withExtendedLifetime(session) {}
    }

    @Test func aSessionWithoutABackendAddsNoMetricsMonitor() {
        let session = Session()
        #expect(!session.eventMonitor.monitors.contains { $0 is MetricsEventMonitor })
    }

    private func waitForMeter(_ metrics: TestMetrics, _ label: String) async throws -> TestMeter {
        _ = await waitUntil { !metrics.meters(label: label).isEmpty }
        return try metrics.expectMeter(label)
    }
}
