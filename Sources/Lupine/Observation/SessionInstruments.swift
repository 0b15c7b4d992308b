/// The tracing and metrics monitors of a Session: those passed in `eventMonitors`, else those
/// the Session makes because a tracer or a metrics backend is active when it is created.
///
/// Deciding once, at creation, is what keeps a Session without either free of their cost: its
/// requests then meet two nil checks, and no span, metric or wrapper is ever made.
struct SessionInstruments {
    /// The monitor that traces requests, if any.
    let tracing: TracingEventMonitor?
    /// The monitor that records metrics, if any.
    let metrics: MetricsEventMonitor?
    /// The monitors the Session made itself, to add after the caller's.
    let added: [any EventMonitor]

    init(eventMonitors: [any EventMonitor]) {
        var added: [any EventMonitor] = []
        let givenTracing = eventMonitors.lazy.compactMap { $0 as? TracingEventMonitor }.first
        let tracing = givenTracing ?? TracingEventMonitor.makeIfTracing()
        if givenTracing == nil, let tracing { added.append(tracing) }
        let givenMetrics = eventMonitors.lazy.compactMap { $0 as? MetricsEventMonitor }.first
        let metrics = givenMetrics ?? MetricsEventMonitor.makeIfRecording()
        if givenMetrics == nil, let metrics { added.append(metrics) }
        self.tracing = tracing
        self.metrics = metrics
        self.added = added
    }
}
