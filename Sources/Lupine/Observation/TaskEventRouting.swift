import Foundation
import NIOConcurrencyHelpers
import Synchronization

/// The `EventMonitor` events typed with `URLSessionTask` (Alamofire's task events).
enum TaskEvent: UInt8, CaseIterable, Sendable {
    case create, resume, suspend, cancel, complete, failEarly, finishDownloading

    var bit: UInt8 { 1 << rawValue }

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

/// The monitor types seen to keep the empty default implementation of a task event.
///
/// A task event needs the attempt's facade task, and a facade costs allocations (see
/// `AttemptTaskLog`). Most monitors implement none of these events: they must not make every
/// request pay for facades nobody reads. Swift cannot tell, from outside, whether a type
/// implements a protocol requirement or keeps its default, so the defaults say it themselves: each
/// records its monitor's type here when it runs. After a monitor type's first event of a kind,
/// that kind is no longer delivered to monitors of that type (their witness is the empty default,
/// for good), and no facade is made for them.
enum TaskEventDefaults {
    private static let known = NIOLockedValueBox<[ObjectIdentifier: UInt8]>([:])

    /// Called by the default implementation of `event`, on a monitor of type `monitorType`.
    static func record(_ event: TaskEvent, for monitorType: Any.Type) {
        known.withLockedValue { $0[ObjectIdentifier(monitorType), default: 0] |= event.bit }
    }

    /// The task events whose default implementation monitors of `monitorType` were seen to keep.
    static func defaults(for monitorType: Any.Type) -> UInt8 {
        known.withLockedValue { $0[ObjectIdentifier(monitorType)] ?? 0 }
    }
}

/// How one monitor takes the task events, decided once per monitor.
enum TaskEventAudience: Sendable {
    /// `AlamofireNotifications`: posts its notifications from the request alone, no task needed.
    case notifications(AlamofireNotifications)
    /// A `ClosureEventMonitor` (the class itself, not a subclass): interested in the events whose
    /// closure is set.
    case closures(ClosureEventMonitor)
    /// A composite: interested when any of its members is.
    case composite(CompositeEventMonitor)
    /// Any other monitor: interested until its type is seen to keep a default.
    case other(TaskEventSkips)

    init(_ monitor: any EventMonitor) {
        if let notifications = monitor as? AlamofireNotifications {
            self = .notifications(notifications)
        } else if let closures = monitor as? ClosureEventMonitor, type(of: closures) == ClosureEventMonitor.self {
            self = .closures(closures)
        } else if let composite = monitor as? CompositeEventMonitor {
            self = .composite(composite)
        } else {
            self = .other(TaskEventSkips(monitorType: type(of: monitor)))
        }
    }

    /// Whether the monitor wants `event` with a task. Cheap: an atomic load for other monitors.
    func wants(_ event: TaskEvent) -> Bool {
        switch self {
        case .notifications: false
        case let .closures(monitor): monitor.hasClosure(for: event)
        case let .composite(composite): composite.wantsTaskEvent(event)
        case let .other(skips): !skips.skips(event)
        }
    }
}

/// The task events one monitor is known not to implement (learned from `TaskEventDefaults`).
final class TaskEventSkips: Sendable {
    private let monitorType: UncheckedMetatype
    private let bits: Synchronization.Atomic<UInt8>

    init(monitorType: Any.Type) {
        self.monitorType = UncheckedMetatype(monitorType)
        bits = Synchronization.Atomic(TaskEventDefaults.defaults(for: monitorType))
    }

    func skips(_ event: TaskEvent) -> Bool {
        bits.load(ordering: .relaxed) & event.bit != 0
    }

    /// After an event reached the monitor: learns whether it kept the default.
    func learn() {
        let known = TaskEventDefaults.defaults(for: monitorType.type)
        if known != 0 { bits.bitwiseOr(known, ordering: .relaxed) }
    }
}

/// A metatype carried across threads (metatypes are immutable).
private struct UncheckedMetatype: @unchecked Sendable {
    let type: Any.Type
    init(_ type: Any.Type) { self.type = type }
}
