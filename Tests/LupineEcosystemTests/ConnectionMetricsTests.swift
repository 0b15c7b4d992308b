@testable import Lupine
import LupineTestServer
import MetricsTestKit
import Testing

/// The engine's connection counts become a gauge of open connections and counters of those opened
/// and closed.
@Suite struct ConnectionMetricsTests {
    @Test func countsFromTheEngineMoveTheGaugeAndTheCountersByTheirDifference() throws {
        let metrics = TestMetrics()
        let monitor = MetricsEventMonitor(factory: metrics)
        monitor.recordConnectionCounts(open: 2, opened: 3, closed: 1)
        monitor.recordConnectionCounts(open: 1, opened: 3, closed: 2)
        // A late report with smaller totals (from another event loop) moves nothing back.
        monitor.recordConnectionCounts(open: 1, opened: 2, closed: 2)

        #expect(try metrics.expectMeter("lupine_http_client_connections").lastValue == 1)
        #expect(metrics.counterTotal(label: "lupine_http_client_connections_opened_total") == 3)
        #expect(metrics.counterTotal(label: "lupine_http_client_connections_closed_total") == 2)
    }

    @Test func aSessionRecordingMetricsCountsTheConnectionsOfItsEngine() async throws {
        let server = try await testServer()
        let metrics = TestMetrics()
        let session = Session(eventMonitors: [MetricsEventMonitor(factory: metrics)])

        _ = await session.request(server.url("/get")).serializingData().response
        #expect(await waitUntil { metrics.counterTotal(label: "lupine_http_client_connections_opened_total") == 1 })
        #expect(try metrics.expectMeter("lupine_http_client_connections").lastValue == 1)

        // The server's `Connection: close` ends the kept-alive connection: the gauge goes back to 0.
        _ = await session.request(server.url("/get"), headers: ["Connection": "close"]).serializingData().response
        #expect(await waitUntil { metrics.counterTotal(label: "lupine_http_client_connections_closed_total") == 1 })
        #expect(try metrics.expectMeter("lupine_http_client_connections").lastValue == 0)
        #expect(metrics.counterTotal(label: "lupine_http_client_connections_opened_total") == 1)
        withExtendedLifetime(session) {}
    }
}
