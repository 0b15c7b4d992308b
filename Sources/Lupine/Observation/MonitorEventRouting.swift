import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// The `EventMonitor` events typed with `URLSessionTask` (Alamofire's task events).
enum TaskEvent: UInt8, CaseIterable, Sendable {
    case create, resume, suspend, cancel, complete, failEarly, finishDownloading

    /// Whether `AlamofireNotifications` posts a notification for the event.
    var hasNotification: Bool {
        switch self {
        case .resume, .suspend, .cancel, .complete: true
        case .create, .failEarly, .finishDownloading: false
        }
    }
}

/// A task event with what it carries besides the request and the task.
enum TaskEventPayload: Sendable {
    case create, resume, suspend, cancel
    case complete(AFError?)
    case failEarly(AFError)
    case finishDownloading(Result<URL, AFError>)

    var event: TaskEvent {
        switch self {
        case .create: .create
        case .resume: .resume
        case .suspend: .suspend
        case .cancel: .cancel
        case .complete: .complete
        case .failEarly: .failEarly
        case .finishDownloading: .finishDownloading
        }
    }

    /// Calls the monitor's method for the event.
    func deliver(to monitor: any EventMonitor, about request: Request, task: URLSessionTask) {
        switch self {
        case .create: monitor.request(request, didCreateTask: task)
        case .resume: monitor.request(request, didResumeTask: task)
        case .suspend: monitor.request(request, didSuspendTask: task)
        case .cancel: monitor.request(request, didCancelTask: task)
        case let .complete(error): monitor.request(request, didCompleteTask: task, with: error)
        case let .failEarly(error): monitor.request(request, didFailTask: task, earlyWithError: error)
        case let .finishDownloading(result):
            // Only a DownloadRequest's attempts report it.
            if let download = request as? DownloadRequest {
                monitor.request(download, didFinishDownloadingUsing: task, with: result)
            }
        }
    }
}

/// Every `EventMonitor` event, as one bit of a mask.
enum MonitorEvent: UInt8, CaseIterable, Sendable {
    case didCreateInitialURLRequest, didFailToCreateURLRequest, didAdaptInitialRequest, didFailToAdaptURLRequest
    case didCreateURLRequest, didCreateTask, didFailTaskEarly, didCompleteTask, isRetrying, didFinish
    case didResume, didResumeTask, didSuspend, didSuspendTask, didCancel, didCancelTask
    case didValidateData, didParseDataResponse, didParseSerializedDataResponse, didValidateStream, didParseStream
    case didCreateUploadable, didFailToCreateUploadable, didProvideInputStream
    case didFinishDownloading, didCreateDestinationURL, didValidateDownload, didParseDownloadResponse
    case didParseSerializedDownloadResponse
    case didResumeExchange, didSuspendExchange, didCancelExchange, didSendURLRequest, didReceiveResponse
    case didCompleteAttempt

    var bit: UInt64 { 1 << UInt64(rawValue) }

    /// The events `AlamofireNotifications` implements (the task events are posted without a
    /// task when they come from a request, see `TaskEventAudience`).
    static let notificationEvents: UInt64 = [MonitorEvent.didResume, .didSuspend, .didCancel, .didFinish,
                                             .didResumeTask, .didSuspendTask, .didCancelTask, .didCompleteTask]
        .reduce(0) { $0 | $1.bit }
}

extension TaskEvent {
    /// The monitor event that delivers this task event.
    var monitorEvent: MonitorEvent {
        switch self {
        case .create: .didCreateTask
        case .resume: .didResumeTask
        case .suspend: .didSuspendTask
        case .cancel: .didCancelTask
        case .complete: .didCompleteTask
        case .failEarly: .didFailTaskEarly
        case .finishDownloading: .didFinishDownloading
        }
    }
}

/// The monitor types seen to keep the empty default implementation of an event.
///
/// Most monitors implement a few events; the others must cost a request nothing: no closure,
/// no mailbox, no dispatch, and for the task events no facade task. Swift cannot tell, from
/// outside, whether a type implements a protocol requirement or keeps its default, so the
/// defaults say it themselves: each records its monitor's type here when it runs. After a
/// monitor type's first event of a kind, that kind is no longer delivered to monitors of that
/// type (their witness is the empty default, for good).
enum MonitorEventDefaults {
    private static let known = NIOLockedValueBox<[ObjectIdentifier: UInt64]>([:])

    /// Called by the default implementation of `event`, on a monitor of type `monitorType`.
    static func record(_ event: MonitorEvent, for monitorType: Any.Type) {
        known.withLockedValue { $0[ObjectIdentifier(monitorType), default: 0] |= event.bit }
    }

    /// The events whose default implementation monitors of `monitorType` were seen to keep.
    static func defaults(for monitorType: Any.Type) -> UInt64 {
        known.withLockedValue { $0[ObjectIdentifier(monitorType)] ?? 0 }
    }
}

/// How one monitor takes the events, decided once per monitor.
enum TaskEventAudience: Sendable {
    /// `AlamofireNotifications`: posts its notifications from the request alone, no task needed.
    case notifications(AlamofireNotifications)
    /// A `ClosureEventMonitor` (the class itself, not a subclass): interested in the task events
    /// whose closure is set, and in every other event.
    case closures(ClosureEventMonitor)
    /// A composite: interested when any of its members is.
    case composite(CompositeEventMonitor)
    /// Any other monitor: interested until its type is seen to keep a default.
    case other(MonitorEventSkips)

    init(_ monitor: any EventMonitor) {
        if let notifications = monitor as? AlamofireNotifications {
            self = .notifications(notifications)
        } else if let closures = monitor as? ClosureEventMonitor, type(of: closures) == ClosureEventMonitor.self {
            self = .closures(closures)
        } else if let composite = monitor as? CompositeEventMonitor {
            self = .composite(composite)
        } else {
            self = .other(MonitorEventSkips(monitorType: type(of: monitor)))
        }
    }

    /// Whether the monitor wants `event` with a task. Cheap: an atomic load for other monitors.
    func wants(_ event: TaskEvent) -> Bool {
        switch self {
        case .notifications: false
        case let .closures(monitor): monitor.hasClosure(for: event)
        case let .composite(composite): composite.wantsTaskEvent(event)
        case let .other(skips): !skips.skips(event.monitorEvent)
        }
    }

    /// Whether the monitor wants `event`, which is not a task event.
    func wants(_ event: MonitorEvent) -> Bool {
        switch self {
        case .notifications: MonitorEvent.notificationEvents & event.bit != 0
        case .closures: true
        case let .composite(composite): composite.wants(event)
        case let .other(skips): !skips.skips(event)
        }
    }

    /// After an event reached the monitor: learns whether it kept the default.
    func learn() {
        if case let .other(skips) = self { skips.learn() }
    }
}

/// The events one monitor is known not to implement (learned from `MonitorEventDefaults`).
final class MonitorEventSkips: Sendable {
    private let monitorType: UncheckedMetatype
    private let bits: Synchronization.Atomic<UInt64>

    init(monitorType: Any.Type) {
        self.monitorType = UncheckedMetatype(monitorType)
        bits = Synchronization.Atomic(MonitorEventDefaults.defaults(for: monitorType))
    }

    func skips(_ event: MonitorEvent) -> Bool {
        bits.load(ordering: .relaxed) & event.bit != 0
    }

    /// After an event reached the monitor: learns whether it kept the default.
    func learn() {
        let known = MonitorEventDefaults.defaults(for: monitorType.type)
        if known != 0 { bits.bitwiseOr(known, ordering: .relaxed) }
    }
}

/// A metatype carried across threads (metatypes are immutable).
private struct UncheckedMetatype: @unchecked Sendable {
    let type: Any.Type
    init(_ type: Any.Type) { self.type = type }
}
